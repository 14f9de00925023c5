"""One crawl of a copy of the demo site, served for the whole session (a test may edit
the copy and crawl it again)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from tests.conftest import SITES, crawl


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
