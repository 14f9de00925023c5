"""End to end: a `max_pages` crawl spends its budget on the pages the site's navigation
puts first, not on the entries of its general index (`docscrawl.discovery.budget`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from tests.conftest import FIXTURES, assert_log_invariants, crawl
from tests.support.navsite import build_site

pytestmark = pytest.mark.e2e

GENERATORS = FIXTURES / "pages" / "generators"
ENTRIES = 120
TUTORIAL = ["tutorial/index.html"] + [
    f"tutorial/{page}.html" for part in (1, 2, 3)
    for page in (f"part{part}", f"step{part}a", f"step{part}b")]


def _links(hrefs: list[tuple[str, str]], *, toctree: bool) -> str:
    items = "".join(f'<li class="toctree-l1"><a class="reference internal" href="{href}">'
                    f"{text}</a></li>" for href, text in hrefs)
    return (f'<div class="toctree-wrapper compound"><ul>{items}</ul></div>' if toctree
            else f"<ul>{items}</ul>")


def _pages(*, toctree: bool) -> dict[str, tuple[str, str]]:
    """A seed whose navigation leads to a three-level tutorial and to a general index of
    ENTRIES API entries (each its own page, as Sphinx autosummary writes them)."""
    def page(title: str, text: str, hrefs: list[tuple[str, str]]) -> tuple[str, str]:
        return title, (f'<section id="s"><h1>{title}</h1><p>{text}</p>'
                       f"{_links(hrefs, toctree=toctree)}</section>")

    pages = {
        "index.html": page("Welcome", "Start with the tutorial.",
                           [("tutorial/index.html", "Tutorial"), ("genindex.html", "Index")]),
        "tutorial/index.html": page("Tutorial", "Three parts.",
                                    [(f"part{n}.html", f"Part {n}") for n in (1, 2, 3)]),
    }
    for n in (1, 2, 3):
        pages[f"tutorial/part{n}.html"] = page(
            f"Part {n}", "Two steps.", [(f"step{n}a.html", "First"), (f"step{n}b.html", "Next")])
        for step in "ab":
            pages[f"tutorial/step{n}{step}.html"] = page(f"Step {n}{step}", "Do this.", [])
    entries = "".join(f'<li><a href="api/entry{i}.html#pkg.entry{i}">entry{i}() '
                      f"(in module pkg)</a></li>" for i in range(ENTRIES))
    pages["genindex.html"] = ("Index", (
        '<h1 id="index">Index</h1><table style="width: 100%" class="indextable '
        'genindextable"><tr><td style="width: 33%; vertical-align: top;"><ul>'
        f"{entries}</ul></td></tr></table>"))
    for i in range(ENTRIES):
        pages[f"api/entry{i}.html"] = page(f"pkg.entry{i}", f"The entry {i} function.", [])
    return pages


@pytest.mark.parametrize(("template", "index_href", "toctree"), [
    ("sphinx_alabaster.html", "genindex.html", True),  # declared: <link rel="index">
    ("mkdocs_material.html", None, False),  # found by its shape: a page that is all links
])
def test_max_pages_takes_the_navigation_before_index_entries(
    tmp_path: Path, template: str, index_href: str | None, toctree: bool,
) -> None:
    site = tmp_path / "site"
    build_site(site, GENERATORS / template, _pages(toctree=toctree), index_href=index_href)
    budget = 2 + len(TUTORIAL)  # the seed, the index page and the tutorial
    with StaticSite(site) as server:
        output = crawl(f"{server.url}/", tmp_path / "out", f"max_pages={budget}")
    taken = sorted(p["canonical_url"].removeprefix(server.url + "/") for p in output.pages)
    assert taken == sorted(["", "genindex.html", *TUTORIAL]), taken
    skipped = [e for e in output.log if e["event"] == "skipped" and e["reason"] == "max_pages"]
    assert len(skipped) == ENTRIES and all("/api/entry" in e["url"] for e in skipped)
    assert output.run["complete"] is False
    assert_log_invariants(output)
