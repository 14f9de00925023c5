"""Fixtures for the inspection commands: a real crawl of the demo site, and small
hand-made output directories for the cases a real crawl does not produce."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docscrawl.demo.run import DEMO_MAX_BYTES
from docscrawl.demo.server import FixtureServer
from tests.conftest import ROOT, crawl


@pytest.fixture(scope="package")
def demo_out(demo_site: FixtureServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The output directory of one crawl of the demo site, as `make demo` crawls it."""
    out = tmp_path_factory.mktemp("inspect-demo") / "out"
    crawl(f"{demo_site.url}/docs/", out, settings={"DOWNLOAD_MAXSIZE": str(DEMO_MAX_BYTES)})
    return out


@pytest.fixture(scope="package")
def demo_origin(demo_site: FixtureServer) -> str:
    """`http://127.0.0.1:PORT` of the demo site."""
    return demo_site.url


def docscrawl(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the installed console command, as the person on call does."""
    script = Path(sys.executable).parent / "docscrawl"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "docscrawl.cli"]
    return subprocess.run([*command, *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def _sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def page(url: str, **fields: Any) -> dict[str, Any]:
    """A minimal page record (contract fields the checks read)."""
    record: dict[str, Any] = {
        "id": _sha(url), "canonical_url": url, "fetched_url": url,
        "final_url": url, "observed_urls": [url], "redirect_chain": [], "title": "Page",
        "main_heading": "Page", "breadcrumb_source": "visible", "headings": [], "links": [],
        "regions": [], "discovery": [{"reason": "seed", "from": None}],
        "content_hash": _sha("content of " + url),
        "version": {"value": None, "status": "unversioned", "evidence": []}, "warnings": [],
    }
    record.update(fields)
    return record


def event(url: str, kind: str, ts: str = "2026-01-01T00:00:00.000Z", **fields: Any) -> dict:
    """A crawl-log line with every contract field."""
    line: dict[str, Any] = {"ts": ts, "url": url, "event": kind, "reason": None, "rule": None,
                            "discovery": None, "status": None, "redirect_chain": [],
                            "fetch_mode": None, "parser": None, "duplicate_of": None,
                            "elapsed_ms": None, "bytes": None}
    line.update(fields)
    return line


def write_output(path: Path, *, pages: list[dict] = (), log: list[dict] = (),  # type: ignore[assignment]
                 chunks: list[dict] = (), structure: list[dict] = (),  # type: ignore[assignment]
                 run: dict[str, Any] | None = None) -> Path:
    """Write a hand-made output directory."""
    path.mkdir(parents=True, exist_ok=True)
    for name, records in (("pages.jsonl", pages), ("crawl_log.jsonl", log),
                          ("chunks.jsonl", chunks), ("structure.jsonl", structure)):
        with (path / name).open("w", encoding="utf-8") as handle:
            for record in records:
                handle.write(json.dumps(record) + "\n")
    site = "http://docs.example/v2/"
    base = {"site": site, "status": "finished", "finish_reason": "finished", "complete": True,
            "arguments": {"site": site, "allow": [], "deny": [], "max_depth": None}}
    (path / "run.json").write_text(json.dumps({**base, **(run or {})}), encoding="utf-8")
    return path


@pytest.fixture
def make_output(tmp_path: Path) -> Iterator[Any]:
    """`make_output(name, pages=..., log=...)` -> a hand-made output directory."""
    def make(name: str = "out", **kwargs: Any) -> Path:
        return write_output(tmp_path / name, **kwargs)
    yield make
