"""Crawls of copies of the demo site, served for the whole session: as shipped (a test may
edit the copy and crawl it again), and altered with a hostile page and a long one."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docscrawl.demo.server import StaticSite
from tests.conftest import SITES, crawl

HOSTILE_PAGE = Path(__file__).parent / "hostile.html"
PARTS, BIG_PARAGRAPHS = 30, 250


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, str]]:
    """(site copy, output directory, seed URL) of a finished crawl of the demo site."""
    base = tmp_path_factory.mktemp("search")
    site = base / "site"
    shutil.copytree(SITES / "demo", site)
    out = base / "out"
    with StaticSite(site) as server:
        seed = f"{server.url}/docs/"
        crawl(seed, out)
        yield site, out, seed


def copy_output(out: Path, to: Path) -> Path:
    """A copy of the crawl output `out` at `to`, without its search index files."""
    shutil.copytree(out, to, symlinks=True)
    for path in to.glob("search.*"):
        path.unlink()
    return to


def edit_chunks(out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """One chunk of `out` gone, one changed (new words and a new id), as a re-crawl
    would leave chunks.jsonl: (the gone chunk, the changed one)."""
    path = (out / "chunks.jsonl").resolve()
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    gone = json.loads(lines[1])
    changed = json.loads(lines[2])
    changed["id"] += "-changed"
    changed["text"] += " zorbleflux quintessential"
    changed["markdown"] += " zorbleflux quintessential"
    path.write_text("".join([lines[0], json.dumps(changed) + "\n", *lines[3:]]),
                    encoding="utf-8")
    return gone, changed


def long_page(client_html: str) -> str:
    """The demo's Client page (Sphinx markup) with many more sections: PARTS short ones
    and one of BIG_PARAGRAPHS paragraphs, longer than a get_page part."""
    sections = [f'<section id="part-{i}"><h2>Part {i}<a class="headerlink" '
                f'href="#part-{i}">¶</a></h2>\n'
                + "".join(f"<p>Part {i} paragraph {j}: the client retries request {j} "
                          f"after a timeout and logs attempt {i}.{j} once.</p>\n"
                          for j in range(10))
                + "</section>\n" for i in range(1, PARTS + 1)]
    sections.insert(PARTS // 2, '<section id="big-section"><h2>Big section<a class='
                    '"headerlink" href="#big-section">¶</a></h2>\n'
                    + "".join(f"<p>Big paragraph {j}: the pool keeps connection {j} open "
                              f"until the server closes it.</p>\n"
                              for j in range(BIG_PARAGRAPHS))
                    + "</section>\n")
    end = "</dd></dl>\n"
    at = client_html.index(end) + len(end)
    return client_html[:at] + "".join(sections) + client_html[at:]


@pytest.fixture(scope="session")
def altered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """(output directory, seed URL) of a crawl of the demo site whose Configure page is
    hostile (tests/search/hostile.html: forged tags and citation lines in its title,
    breadcrumb, heading and text) and whose Client page is long (`long_page`)."""
    base = tmp_path_factory.mktemp("altered")
    site = base / "site"
    shutil.copytree(SITES / "demo", site)
    shutil.copy(HOSTILE_PAGE, site / "docs" / "guide" / "configure.html")
    client = site / "docs" / "api" / "client.html"
    client.write_text(long_page(client.read_text(encoding="utf-8")), encoding="utf-8")
    out = base / "out"
    with StaticSite(site) as server:
        seed = f"{server.url}/docs/"
        crawl(seed, out)
        yield out, seed
