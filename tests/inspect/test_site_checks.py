"""The six site-wide checks of `docscrawl check` on hand-made outputs (cases a small
real crawl cannot produce: 20+ pages, a leaked template, merged versions)."""

from __future__ import annotations

import json
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
    assert found["code_languages"]["details"]["by_markup"] == {"language-rust": 3}
    assert found["code_languages"]["examples"][0]["markup"] == "language-rust"
    assert "(language-rust 3)" in found["code_languages"]["figure"]
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


MENU = ["- [Table of contents](#)", "- [Index of every module](index.html)",
        "- [Other versions of these docs](versions.html)"]
STABLE = "> Stability: 2 - Stable, a status line"


def test_template_leak_counts_runs_and_edges_and_names_the_fix(make_output) -> None:
    """A lone line repeated between a page's own lines (Node.js's stability status under
    each title) is content; a run of repeated menu lines is template, and the failure
    names a `main` selector for the element holding the pages' own blocks."""
    def markdown(i: int, menu: bool) -> str:
        own = f"## Module {i}\n\n{STABLE}\n\nWhat module {i} does, in its own words."
        return "\n\n".join([*MENU, own] if menu else [own]) + "\n"

    clean = pages(30, markdown=lambda i: markdown(i, False))
    assert checks(make_output, clean)["template_leak"]["value"] == 0

    leaky = pages(30, markdown=lambda i: markdown(i, True))
    structure = [{"canonical_url": p["canonical_url"], "main_locator": "/html/body/div",
                  "blocks": [{"markdown": "\n".join(MENU), "text_chars": 80,
                              "locator": "/html/body/div/div[2]/header/ul"},
                             {"markdown": p["markdown"].split("\n\n", 3)[3], "text_chars": 60,
                              "locator": "/html/body/div/div[2]/div/h2"},
                             {"markdown": "What it does.", "text_chars": 13,
                              "locator": "/html/body/div/div[2]/div/p"}]} for p in leaky]
    result = run_checks(OutputDir(make_output("leaky", pages=leaky, structure=structure)))
    leak = {c["name"]: c for c in result["checks"]}["template_leak"]
    assert not leak["passed"] and leak["value"] == 1.0
    assert leak["details"]["main_selector"] == (
        "html > body > div:nth-of-type(1) > div:nth-of-type(2) > div:nth-of-type(1)")
    assert '"main": "html > body' in leak["figure"]


def test_template_version_names_a_version_the_records_lack(make_output) -> None:
    """The crawl saw "15.20" in every page's home link title (site_model.json) while the
    records have no version: the check fails and names it; versioned records pass."""
    model = {"versions": {"pages": 20, "counts": [["sidebar", "15.20", 19, "home link title"],
                                                   ["sidebar", "2.1", 3, "version label"]]}}
    bare = make_output("bare", pages=pages(25, title=lambda i: f"Chapter {i}"))
    (bare / "site_model.json").write_text(json.dumps(model), encoding="utf-8")
    found = {c["name"]: c for c in run_checks(OutputDir(bare))["checks"]}["template_version"]
    assert not found["passed"] and found["value"] == 1.0
    assert [(s["value"], s["where"]) for s in found["details"]["stated"]] == [
        ("15.20", "home link title")]
    versioned = make_output("versioned", pages=pages(
        25, title=lambda i: f"Chapter {i} - Acme 3.1 Documentation",
        version={"value": "3.1", "status": "inferred", "evidence": []}))
    found = {c["name"]: c for c in run_checks(OutputDir(versioned))["checks"]}
    assert found["template_version"]["passed"]
    assert found["template_version"]["details"]["stated"][0]["where"] == "page title"
    unstated = checks(make_output, pages(25, title=lambda i: f"Chapter {i}"))
    assert unstated["template_version"]["value"] is None


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
