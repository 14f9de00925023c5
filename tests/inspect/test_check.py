"""`docscrawl check`: the eight checks, their figures, examples, thresholds and exit status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from docscrawl.inspect.check import CHECKS, Thresholds, parse_threshold, run_checks
from docscrawl.inspect.identity import identity_status, url_slug
from docscrawl.inspect.output import OutputDir
from tests.inspect.conftest import docscrawl, event, page

SITE = "http://docs.example/v2/"


def _by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["name"]: check for check in result["checks"]}


def link(url: str, text: str, region: str = "main_content", **fields: Any) -> dict[str, Any]:
    return {"url": url, "text": text, "rel": [], "region": region, "container": "paragraph",
            "container_label": None, "heading_path": [], "target": "internal", "position": 0,
            **fields}


@pytest.mark.e2e
def test_demo_crawl_passes_all_checks(demo_out: Path) -> None:
    result = docscrawl("check", str(demo_out))
    assert result.returncode == 0, result.stdout + result.stderr
    for title in ("Heading coverage", "Breadcrumb coverage", "Link ambiguity",
                  "Template detection", "Identity agreement", "Fragment resolution",
                  "Section precision", "Plain headings", "Template leak", "Heading-path roots",
                  "Code languages", "Version coverage", "Cross-version merges"):
        assert f"PASS  {title}" in result.stdout
    data = json.loads(docscrawl("check", str(demo_out), "--json").stdout)
    assert data["passed"] is True and len(data["checks"]) == len(CHECKS)
    templates = _by_name(data)["template_detection"]["details"]["templates"]
    assert any(t["region"] == "sidebar_navigation" for t in templates)


def test_failing_check_exits_1_and_a_threshold_decides(make_output) -> None:
    pages = [page(f"{SITE}a.html"), page(f"{SITE}b.html", breadcrumb_source="none")]
    out = make_output(pages=pages)
    result = docscrawl("check", str(out), "-t", "min_breadcrumb_coverage=0.9")
    assert result.returncode == 1
    assert "FAIL  Breadcrumb coverage: 50.0% >= 90%" in result.stdout
    assert f"url={SITE}b.html, breadcrumb_source=none" in result.stdout
    assert "FAILED: breadcrumb_coverage" in result.stdout
    assert docscrawl("check", str(out), "-t", "min_breadcrumb_coverage=0.5").returncode == 0


def test_bad_threshold_is_a_one_line_error(make_output) -> None:
    out = make_output(pages=[page(SITE)])
    result = docscrawl("check", str(out), "-t", "min_nonsense=3")
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "bad threshold" in result.stderr
    thresholds = Thresholds()
    parse_threshold(thresholds, "template_min_pages=7")
    assert thresholds.template_min_pages == 7


def test_heading_coverage_from_chunks(make_output) -> None:
    record = page(SITE)
    chunks = [{"id": f"c{i}", "page_id": record["id"], "text": "x", "markdown": f"text {i}",
               "metadata": {"region": "main_content", "heading_path": ["A"] if i < 2 else [],
                            "source_url": SITE}} for i in range(4)]
    result = run_checks(OutputDir(make_output(pages=[record], chunks=chunks)))
    check = _by_name(result)["heading_coverage"]
    assert (check["value"], check["passed"]) == (0.5, False)
    assert check["details"]["basis"] == "chunks.jsonl"
    assert [e["chunk"] for e in check["examples"]] == ["c2", "c3"]


def test_breadcrumb_coverage_counts_each_source(make_output) -> None:
    pages = [page(f"{SITE}{i}.html", breadcrumb_source=source)
             for i, source in enumerate(["visible", "jsonld", "visible-and-jsonld", "none",
                                         "none", "none"])]
    check = _by_name(run_checks(OutputDir(make_output(pages=pages))))["breadcrumb_coverage"]
    assert check["details"]["by_source"] == {"visible": 1, "jsonld": 1,
                                             "visible-and-jsonld": 1, "none": 3}
    assert check["value"] == 0.5 and check["passed"] is True
    assert len(check["examples"]) == 3


def test_breadcrumb_coverage_is_not_judged_where_no_page_shows_a_trail(make_output) -> None:
    few = [page(f"{SITE}{i}.html", breadcrumb_source="visible" if i == 0 else "none")
           for i in range(4)]
    check = _by_name(run_checks(OutputDir(make_output(pages=few))))["breadcrumb_coverage"]
    assert check["value"] == 0.25 and check["passed"] is False  # a trail, mostly missed
    none = [page(f"{SITE}{i}.html", breadcrumb_source="none") for i in range(4)]
    check = _by_name(run_checks(OutputDir(make_output(pages=none))))["breadcrumb_coverage"]
    assert check["value"] is None and check["passed"] is True
    assert "no page shows a trail" in check["figure"]


def test_link_ambiguity_flags_generic_text_without_container_label(make_output) -> None:
    links = [link(f"{SITE}a.html", "click here"), link(f"{SITE}b.html", "Read more"),
             link(f"{SITE}c.html", "here", container_label="Installing on Linux"),
             link(f"{SITE}d.html", "Configuration reference"),
             # a preceding heading says what it is about (W3C H80)
             link(f"{SITE}e.html", "Read more", heading_path=["API", "fn clone(&self)"])]
    check = _by_name(run_checks(OutputDir(make_output(pages=[page(SITE, links=links)]))))[
        "link_ambiguity"]
    assert check["details"]["ambiguous"] == 2 and check["details"]["links"] == 5
    assert check["passed"] is False
    assert {e["text"] for e in check["examples"]} == {"click here", "Read more"}


def test_template_detection_finds_repeated_navigation_and_repeated_main_content(
    make_output,
) -> None:
    nav = [link(f"{SITE}n{i}.html", f"Nav {i}", region="sidebar_navigation") for i in range(4)]
    same_main = [link(f"{SITE}m{i}.html", f"Main {i}") for i in range(3)]
    pages = [page(f"{SITE}p{i}.html", links=nav + same_main) for i in range(5)]
    check = _by_name(run_checks(OutputDir(make_output(pages=pages))))["template_detection"]
    regions = {t["region"]: t["pages"] for t in check["details"]["templates"]}
    assert regions == {"sidebar_navigation": 5, "main_content": 5}
    assert check["passed"] is False
    assert check["examples"][0]["problem"] == "main content repeats across pages"


def test_two_links_every_method_page_shares_are_not_a_template(make_output) -> None:
    """An API reference's method pages all link their type and namespace: content."""
    pair = [link(f"{SITE}type.Transform.html", "Transform"), link(f"{SITE}index.html", "Gsk")]
    pages = [page(f"{SITE}method.Transform.m{i}.html", links=pair) for i in range(6)]
    check = _by_name(run_checks(OutputDir(make_output(pages=pages))))["template_detection"]
    assert check["value"] == 0.0 and check["passed"] is True


def test_identity_agreement_statuses() -> None:
    assert identity_status("Installing Acme — Acme 2.0 docs", "Installing Acme",
                           "http://d/docs/guide/install.html")[0] == "agree"
    assert identity_status("Acme for assistants — docs", "Acme for assistants",
                           "http://d/docs/extra.html")[0] == "majority"
    assert identity_status("Old stale title", "Configuring Acme",
                           "http://d/docs/configure.html") == (
        "majority", "title differs from main heading and URL")
    assert identity_status("Alpha", "Beta", "http://d/docs/gamma.html")[0] == "disagree"
    assert identity_status(None, "Beta", "http://d/beta")[0] == "missing"
    assert url_slug("http://d/docs/guide/index.html") == {"guide"}
    assert url_slug("http://d/docs/3.6/") == set()


def test_identity_agreement_fails_below_threshold(make_output) -> None:
    pages = [page(f"{SITE}gamma.html", title="Alpha", main_heading="Beta"),
             page(f"{SITE}install.html", title="Install — docs", main_heading="Install")]
    check = _by_name(run_checks(OutputDir(make_output(pages=pages))))["identity_agreement"]
    assert check["value"] == 0.5 and check["passed"] is False
    assert check["examples"][0]["status"] == "disagree"


def test_fragment_resolution_resolves_toc_targets_on_this_and_other_pages(
    make_output,
) -> None:
    other = page(f"{SITE}other.html", headings=[{"level": 2, "text": "Setup",
                                                 "anchor": "setup", "path": ["Setup"]}])
    toc = [link(f"{SITE}index.html#intro", "Intro", region="table_of_contents"),
           link(f"{SITE}index.html#missing", "Missing", region="table_of_contents"),
           link(f"{SITE}other.html#setup", "Setup", region="table_of_contents"),
           link("#intro", "Intro again", target="fragment"),
           link("http://elsewhere.example/x#y", "Out", region="table_of_contents")]
    home = page(f"{SITE}index.html", links=toc, headings=[
        {"level": 1, "text": "Intro", "anchor": "intro", "path": ["Intro"]}])
    check = _by_name(run_checks(OutputDir(make_output(pages=[home, other]))))[
        "fragment_resolution"]
    assert check["details"] == {"resolved": 3, "unresolved": 1, "outside_crawl": 1,
                                "skip_links": 0, "unresolved_fragment_warnings": 0}
    assert check["passed"] is False
    assert check["examples"] == [{"page": f"{SITE}index.html",
                                  "target": f"{SITE}index.html#missing", "fragment": "missing"}]


def test_a_fragment_naming_an_element_of_the_main_content_resolves(make_output) -> None:
    """AsciiDoc glossaries link `#def_stash` to a `dt`, not a heading: on the page."""
    toc = [link(f"{SITE}glossary.html#def_stash", "stash", target="fragment"),
           link(f"{SITE}glossary.html#def_gone", "gone", target="fragment")]
    glossary = page(f"{SITE}glossary.html", links=toc, headings=[
        {"level": 1, "text": "Glossary", "anchor": "glossary", "path": ["Glossary"]}])
    glossary["fragment_ids"] = ["def_stash", "def_tree"]
    check = _by_name(run_checks(OutputDir(make_output(pages=[glossary]))))[
        "fragment_resolution"]
    assert (check["details"]["resolved"], check["details"]["unresolved"]) == (1, 1)
    assert [e["fragment"] for e in check["examples"]] == ["def_gone"]


def test_a_skip_link_to_the_template_is_no_content_target(make_output) -> None:
    """Javadoc (JDK 17) opens every page with `<a href="#skip-navbar-top">Skip navigation
    links</a>`, whose target is an empty span closing the top `nav`: the links as the
    crawler wrote them for commons-lang3's pages. The page's first link, to its own page,
    outside the content: a skip link, left out (it made 1 of 18 targets unresolved)."""
    url = f"{SITE}org/acme/Clock.html"
    links = [link(f"{url}#skip-navbar-top", "Skip navigation links",
                  region="primary_navigation", target="fragment", container="navigation"),
             link(f"{url}#method-summary", "Method", region="primary_navigation",
                  target="fragment", container="navigation", position=1)]
    links += [link(f"{url}#tick()", "tick", target="fragment", position=n) for n in range(16)]
    clock = page(url, links=links, headings=[
        {"level": 1, "text": "Class Clock", "anchor": None, "path": ["Class Clock"]},
        {"level": 2, "text": "Method Summary", "anchor": "method-summary",
         "path": ["Class Clock", "Method Summary"]}])
    clock["fragment_ids"] = ["tick()"]
    check = _by_name(run_checks(OutputDir(make_output(pages=[clock]))))["fragment_resolution"]
    assert (check["details"]["resolved"], check["details"]["unresolved"],
            check["details"]["skip_links"]) == (17, 0, 1)
    assert check["passed"] is True
    # The same link after another one is no skip link: it counts, unresolved.
    overview = link(f"{SITE}index.html", "Overview", region="primary_navigation",
                    container="navigation")
    moved = page(url, links=[overview, *links], headings=clock["headings"],
                 fragment_ids=["tick()"])
    check = _by_name(run_checks(OutputDir(make_output(pages=[moved]))))["fragment_resolution"]
    assert (check["details"]["unresolved"], check["details"]["skip_links"]) == (1, 0)


def test_missing_pages_file_is_a_one_line_error(make_output) -> None:
    out = make_output(pages=[page(SITE)])
    (out / "pages.jsonl").unlink()
    result = docscrawl("check", str(out))
    assert result.returncode == 2 and "no pages.jsonl" in result.stderr


def _chunk(i: int, markdown: str, path: list[str], **meta: Any) -> dict[str, Any]:
    return {"id": f"c{i}", "page_id": "p", "text": markdown, "markdown": markdown,
            "metadata": {"region": "main_content", "heading_path": path,
                         "source_url": f"{SITE}#s{i}", **meta}}


def test_section_precision_finds_a_heading_the_chunk_does_not_name(make_output) -> None:
    record = page(SITE)
    sections = [{"heading_path": ["API", "get"], "anchor": "get", "block_range": [1, 2]},
                {"heading_path": ["API", "put"], "anchor": "put", "block_range": [3, 4]}]
    chunks = [
        _chunk(0, "## Options\n\ntext\n\n## File Path\n\ntext", ["Options"]),  # sibling
        _chunk(1, "## get\n\nx\n\n## put\n\ny", ["API"], sections=sections),
        _chunk(2, "## Options\n\n```md\n# not a heading\n```", ["Options"]),
        _chunk(3, "## Install ¶\n\ntext", ["Guide", "Install"]),
    ]
    out = make_output(pages=[record], chunks=chunks)
    check = _by_name(run_checks(OutputDir(out)))["section_precision"]
    assert (check["value"], check["passed"]) == (0.25, False)
    assert check["examples"] == [{"chunk": "c0", "url": f"{SITE}#s0",
                                  "heading_path": "Options", "unnamed": "File Path"}]
    result = docscrawl("check", str(out), "-t", "max_unnamed_section_share=0.3")
    assert "PASS  Section precision: 25.0% <= 30%" in result.stdout


def test_plain_headings_counts_self_link_headings(make_output) -> None:
    record = page(SITE)
    chunks = [_chunk(0, f"## [Installation]({SITE}#installation)\n\ntext", ["Installation"]),
              _chunk(1, "## Usage\n\ntext [a link](x#y)", ["Usage"])]
    out = make_output(pages=[record], chunks=chunks)
    result = docscrawl("check", str(out))
    assert result.returncode == 1
    assert "FAIL  Plain headings: 50.0% <= 0%" in result.stdout
    assert f"heading=[Installation]({SITE}#installation)" in result.stdout
    check = _by_name(run_checks(OutputDir(out)))["section_precision"]
    assert check["passed"] is True  # the link's text is the heading the path names


def test_a_duplicate_of_a_url_without_a_page_fails_the_invariant(make_output) -> None:
    a, b, c, d = (f"{SITE}{name}.html" for name in "abcd")
    log = [event(a, "extracted", canonical_url=a),
           event(b, "duplicate", reason="redirect", duplicate_of=a),
           event(c, "duplicate", reason="redirect", duplicate_of=b),  # through b: a page
           event(d, "duplicate", reason="redirect", duplicate_of=f"{SITE}gone.html")]
    out = make_output(pages=[page(a)], log=log)
    check = _by_name(run_checks(OutputDir(out)))["duplicate_targets"]
    assert not check["passed"]
    assert check["examples"] == [{"url": d, "duplicate_of": f"{SITE}gone.html"}]
    assert check["figure"] == "2 of 3 duplicates point at a page"
    loop = make_output("loop", pages=[page(a)], log=[
        event(b, "duplicate", reason="redirect", duplicate_of=c),
        event(c, "duplicate", reason="redirect", duplicate_of=b)])
    assert not _by_name(run_checks(OutputDir(loop)))["duplicate_targets"]["passed"]
    result = docscrawl("check", str(out))
    assert result.returncode == 1 and "FAIL  duplicates point at pages" in result.stdout
