"""One MCP session stays open while its output is crawled again and its index rebuilt:
every call answers from the files as they are now (no stale byte offsets, new text found)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from tests.conftest import ROOT, SITES, crawl, read_jsonl
from tests.search.mcp_session import call, mcp_session

anyio = pytest.importorskip("anyio")
pytest.importorskip("mcp")

pytestmark = pytest.mark.e2e

WORD = "zyzzyvarium"
ADDED = "".join(f"<p>{WORD} note {i}: a paragraph the second crawl finds on the start "
                f"page, long enough to move every later line of pages.jsonl.</p>\n"
                for i in range(60))


def _line_of(out: Path, suffix: str) -> int:
    urls = [p["canonical_url"] for p in read_jsonl(out / "pages.jsonl")]
    return next(i for i, url in enumerate(urls) if url.endswith(suffix))


async def _across_recrawl(site: Path, out: Path, seed: str) -> dict[str, str]:
    install = f"{seed}guide/install.html"
    found = {}
    async with mcp_session(out) as session:
        found["before"] = await call(session, "get_page", url=install)
        found["search_before"] = await call(session, "search_docs", query=WORD)
        start = site / "docs" / "index.html"
        html = start.read_text(encoding="utf-8")
        assert "</h1>\n" in html
        start.write_text(html.replace("</h1>\n", "</h1>\n" + ADDED, 1), encoding="utf-8")
        await anyio.to_thread.run_sync(partial(crawl, seed, out))
        found["after"] = await call(session, "get_page", url=install)
        found["search_after"] = await call(session, "search_docs", query=WORD)
        found["start_after"] = await call(session, "get_page", url=seed)
        rebuild = await anyio.to_thread.run_sync(partial(
            subprocess.run, [sys.executable, "-m", "docscrawl.cli", "index", str(out),
                             "--rebuild"], cwd=ROOT, capture_output=True, text=True))
        assert rebuild.returncode == 0, rebuild.stderr
        found["search_rebuilt"] = await call(session, "search_docs", query=WORD)
        found["after_rebuild"] = await call(session, "get_page", url=install)
        found["versions"] = await call(session, "list_versions")
    return found


def test_session_follows_a_recrawl(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(SITES / "demo", site)
    out = tmp_path / "out"
    with StaticSite(site) as server:
        seed = f"{server.url}/docs/"
        crawl(seed, out)
        assert _line_of(out, "/docs/") < _line_of(out, "/guide/install.html")
        found = anyio.run(_across_recrawl, site, out, seed)
    # the start page grew: the install page's line moved, and get_page still finds it
    for name in ("before", "after", "after_rebuild"):
        assert 'title="Installing Acme' in found[name] and "# Installing Acme" in found[name]
        assert WORD not in found[name]
    assert f"{WORD} note" not in found["search_before"]
    for name in ("search_after", "search_rebuilt"):
        assert f"{WORD} note" in found[name] and f'url="{seed}#acme-docs"' in found[name]
    assert f"{WORD} note 59" in found["start_after"]
    assert '"chunks"' in found["versions"]
