"""The six site-wide checks of `docscrawl check` on hand-made outputs (cases a small
real crawl cannot produce: 20+ pages, a leaked template, merged versions)."""

from __future__ import annotations

from typing import Any

from docscrawl.inspect.check import run_checks
from docscrawl.inspect.output import OutputDir
from tests.inspect.conftest import docscrawl, page

SITE = "http://docs.example/v2/"
BANNER = "This document describes the current stable version of Lockstep."


def pages(n: int, **per_page: Any) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        fields = {k: (v(i) if callable(v) else v) for k, v in per_page.items()}
        out.append(page(f"{SITE}p{i}.html", **fields))
    return out


def checks(make_output, records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    result = run_checks(OutputDir(make_output(pages=records)))
    return {c["name"]: c for c in result["checks"]}


def heading(text: str) -> list[dict[str, Any]]:
    return [{"level": 1, "text": text, "anchor": None, "path": [text]}]


def test_clean_site_passes(make_output) -> None:
    found = checks(make_output, pages(
        30, markdown=lambda i: f"# Page {i}\n\nText of page number {i} and nothing else.\n",
        headings=lambda i: heading(f"Page {i}"),
        version={"value": "2", "status": "inferred", "evidence": []}))
    for name in ("template_leak", "heading_roots", "code_languages", "version_coverage",
                 "cross_version_merges"):
        assert found[name]["passed"], found[name]


def test_template_leak_and_shared_root_fail_with_examples(make_output, tmp_path) -> None:
    records = pages(
        30, markdown=lambda i: f"{BANNER}\n\n# Page {i}\n\nOwn text of page {i} here.\n"
        if i % 10 else f"# Page {i}\n\nOwn text of page {i} here.\n",
        headings=lambda i: [{"level": 1, "text": "Lockstep Manual", "anchor": None,
                             "path": ["Lockstep Manual"]}] if i < 25 else heading(f"P{i}"))
    found = checks(make_output, records)
    leak = found["template_leak"]
    assert not leak["passed"] and leak["value"] == 27 / 30
    assert leak["examples"][0]["line"] == BANNER and leak["examples"][0]["on_pages"] == 27
    roots = found["heading_roots"]
    assert not roots["passed"] and roots["examples"][0]["root"] == "Lockstep Manual"
    result = docscrawl("check", str(make_output(pages=records)), "-t", "max_template_leak=0.95",
                       "-t", "max_heading_root_share=0.9")
    assert "PASS  Template leak" in result.stdout and "PASS  Heading-path roots" in result.stdout


def test_code_language_unread_versions_and_cross_version_merges(make_output) -> None:
    unread = {"code": "code_language_unread", "detail": "markup names a language (language-rust)"}
    records = pages(
        30, code_blocks=[{"code": "x", "language": None}],
        warnings=lambda i: [unread] if i < 3 else [],
        version=lambda i: {"value": "2" if i < 25 else None, "status": "inferred",
                           "evidence": []},
        observed_urls=lambda i: [f"{SITE}p{i}.html", f"http://docs.example/v3/p{i}.html"]
        if i == 7 else [f"{SITE}p{i}.html"])
    found = checks(make_output, records)
    assert not found["code_languages"]["passed"] and found["code_languages"]["value"] == 0.1
    assert "language-rust" in found["code_languages"]["examples"][0]["detail"]
    version = found["version_coverage"]
    assert not version["passed"] and version["value"] == 5 / 30
    assert version["examples"][0]["page"] == f"{SITE}p25.html"
    merges = found["cross_version_merges"]
    assert not merges["passed"] and merges["examples"][0]["versions"] == ["v2", "v3"]
    out = make_output(pages=records)
    result = docscrawl("check", str(out))
    assert result.returncode == 1 and "FAIL  Cross-version merges: 1 <= 0" in result.stdout


def test_versions_are_not_judged_on_a_mostly_unversioned_site(make_output) -> None:
    found = checks(make_output, pages(30))
    assert found["version_coverage"]["value"] is None and found["version_coverage"]["passed"]


def _javadoc_headings(name: str) -> list[dict[str, Any]]:
    return [{"level": 1, "text": f"Class {name}", "anchor": None, "path": [f"Class {name}"]},
            {"level": 2, "text": "Constructor Details", "anchor": "constructor-detail",
             "path": [f"Class {name}", "Constructor Details"]},
            {"level": 3, "text": name, "anchor": "<init>()",
             "path": [f"Class {name}", "Constructor Details", name]}]


def test_main_heading_other_than_the_top_heading_fails_with_examples(make_output) -> None:
    # What issue 27 saw on Javadoc: the constructor's h3 agreeing with "Kettle (API 2.0)"
    # taken for the page's heading in place of its h1 "Class Kettle".
    names = [f"Kettle{i}" for i in range(10)]
    records = pages(10, title=lambda i: f"{names[i]} (Brewhouse API 2.0)",
                    main_heading=lambda i: names[i] if i < 3 else f"Class {names[i]}",
                    headings=lambda i: _javadoc_headings(names[i]))
    records.append(page(f"{SITE}Data-List.html", title="Data.List", main_heading="Data.List",
                        headings=heading("Basic functions")))  # Haddock's caption: judged apart
    records.append(page(f"{SITE}v8.html", title="V8 | Node.js", main_heading=None,
                        headings=[{"level": 2, "text": "V8", "anchor": "v8", "path": ["V8"]}]))
    found = checks(make_output, records)["main_heading"]
    assert not found["passed"] and found["value"] == 4 / 12
    assert found["details"] == {"pages_with_headings": 12, "off_top": 4, "not_a_heading": 1}
    assert found["examples"][0] == {"page": f"{SITE}p0.html", "main_heading": "Kettle0",
                                    "top_heading": "Class Kettle0",
                                    "title": "Kettle0 (Brewhouse API 2.0)"}
    assert found["examples"][-1]["main_heading"] is None
    result = docscrawl("check", str(make_output(pages=records)))
    assert "FAIL  Main heading: 33.3%" in result.stdout
    assert "e.g. page=http://docs.example/v2/p0.html, main_heading=Kettle0" in result.stdout


def test_main_heading_that_is_the_top_heading_passes(make_output) -> None:
    names = [f"Kettle{i}" for i in range(10)]
    found = checks(make_output, pages(10, main_heading=lambda i: f"Class {names[i]}",
                                      headings=lambda i: _javadoc_headings(names[i])))
    assert found["main_heading"]["passed"] and found["main_heading"]["value"] == 0
