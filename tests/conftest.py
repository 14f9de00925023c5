"""Shared fixtures: fixture sites served on 127.0.0.1 and a subprocess `scrapy crawl`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from docscrawl.crawl.ledger import Ledger
from docscrawl.demo.server import FixtureServer, StaticSite
from docscrawl.jsonl import open_jsonl
from docscrawl.runs import published_dir

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SITES = FIXTURES / "sites"
CONTRACT_CHECK = ROOT.parent / "shared" / "tools" / "contract_check.py"

# `make test` runs the suite on two xdist workers, one test file at a time per worker
# (`--dist loadfile`: a file's module fixtures are made once). Files that share a session
# fixture's crawl are sent to one worker together, so it is crawled once.
SHARE_A_WORKER = {
    "tests/e2e/test_faults.py": "fault-site",  # fault_site_crawl (tests/e2e/conftest.py)
    "tests/e2e/test_track_spill.py": "fault-site",
}


def xdist_scope(nodeid: str) -> str:
    """The unit of work a test belongs to: its file, or its group in `SHARE_A_WORKER`."""
    path = nodeid.split("::", 1)[0]
    return SHARE_A_WORKER.get(path, path)


# Directories whose files run crawls and servers (seconds to a minute each): handed out
# first, so that the last files a worker takes are short and the other is not left waiting.
SLOW_FIRST = ("tests/distributed/", "tests/e2e/", "tests/bench/", "tests/state/",
              "tests/render/", "tests/ops/")


def slow_rank(nodeid: str) -> int:
    """0 for a test in a `SLOW_FIRST` directory, else 1."""
    return 0 if nodeid.startswith(SLOW_FIRST) else 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, `SLOW_FIRST` files first (a stable sort: files stay whole and
    in order); the controller hands files out in this order."""
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: slow_rank(item.nodeid))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadfile`, except that the files of `SHARE_A_WORKER` go together, in the
    order collected (`SLOW_FIRST`), not xdist's largest-file-first."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling  # only where xdist runs the suite

    config.option.loadscopereorder = False

    class LoadFileGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

    return LoadFileGroups(config, log)


@pytest.fixture(scope="session")
def demo_site() -> Iterator[FixtureServer]:
    """The bundled demo docs site, as `make demo` serves it."""
    with StaticSite(SITES / "demo") as server:
        yield server


# Runs the command after the script's path and writes the peak RSS of it and its children
# (KiB) to the file named first: the crawl's own, not the largest process this test
# process ever waited for (a compiler run by another test on this worker would count).
PEAK_RSS_WRAPPER = (
    "import resource, subprocess, sys\n"
    "status = subprocess.call(sys.argv[2:])\n"
    "with open(sys.argv[1], 'w') as f:\n"
    "    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(status)\n")


def run_crawl(
    site: str, out: Path, *args: str, settings: dict[str, Any] | None = None,
    env: dict[str, str] | None = None, timeout: float = 180, peak_rss: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """`scrapy crawl docs -a site=... -a out=...` in a subprocess, as a user runs it; with
    `peak_rss`, the crawl's peak RSS in KiB (its children included) is written there."""
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={site}",
               "-a", f"out={out}"]
    for arg in args:
        command += ["-a", arg]
    merged = {"DOCSCRAWL_PROGRESS_INTERVAL": "1", "LOG_LEVEL": "INFO", **(settings or {})}
    for name, value in merged.items():
        command += ["-s", f"{name}={value}"]
    if peak_rss is not None:
        command = [sys.executable, "-c", PEAK_RSS_WRAPPER, str(peak_rss), *command]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every line of a JSONL file, parsed (`path.gz` when only the compressed file is there:
    a `compress=gzip` crawl)."""
    with open_jsonl(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


class CrawlOutput:
    """A crawl's output directory with convenient views."""

    def __init__(self, out: Path, result: subprocess.CompletedProcess[str]) -> None:
        self.out = out
        self.result = result
        self.pages = read_jsonl(out / "pages.jsonl")
        self.log = read_jsonl(out / "crawl_log.jsonl")
        self.run = json.loads((out / "run.json").read_text(encoding="utf-8"))

    def events(self, url_suffix: str) -> list[dict[str, Any]]:
        """Log events whose URL ends with `url_suffix`."""
        return [e for e in self.log if e["url"].endswith(url_suffix)]

    def terminal(self, url_suffix: str) -> dict[str, Any]:
        """The one terminal event of a discovered URL."""
        found = [e for e in self.events(url_suffix)
                 if e["event"] in {"extracted", "duplicate", "unchanged", "skipped", "failed"}]
        assert len(found) == 1, (url_suffix, found)
        return found[0]

    def page(self, canonical_suffix: str) -> dict[str, Any]:
        """The page whose canonical URL ends with `canonical_suffix`."""
        found = [p for p in self.pages if p["canonical_url"].endswith(canonical_suffix)]
        assert len(found) == 1, (canonical_suffix, [p["canonical_url"] for p in self.pages])
        return found[0]


def crawl(site: str, out: Path, *args: str, **kwargs: Any) -> CrawlOutput:
    """Run a crawl that must succeed, and load its output."""
    result = run_crawl(site, out, *args, **kwargs)
    assert result.returncode == 0, result.stderr[-3000:]
    return CrawlOutput(out, result)


def assert_log_invariants(output: CrawlOutput) -> None:
    """Every discovered URL has exactly one terminal event; the contract holds."""
    terminal: dict[str, int] = {}
    discovered = [e["url"] for e in output.log if e["event"] == "discovered"]
    assert len(discovered) == len(set(discovered)), "a URL was logged discovered twice"
    for event in output.log:
        if event["event"] in {"extracted", "duplicate", "unchanged", "skipped", "failed"}:
            terminal[event["url"]] = terminal.get(event["url"], 0) + 1
    for url in discovered:
        assert terminal.get(url) == 1, (url, terminal.get(url))
    if CONTRACT_CHECK.exists():
        check = subprocess.run([sys.executable, str(CONTRACT_CHECK), str(plain_copy(output.out))],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout


def plain_copy(out: Path) -> Path:
    """`out` itself, or for a `compress=gzip` output a decompressed copy of its published
    files beside it (the contract checker reads plain JSONL files)."""
    files = published_dir(out)
    if not any(files.glob("*.jsonl.gz")):
        return out
    copy = Path(tempfile.mkdtemp(prefix="plain-", dir=out.parent))
    for path in files.iterdir():
        name = path.name.removesuffix(".gz")
        with open_jsonl(path) if path.name.endswith(".gz") else path.open("rb") as src:
            (copy / name).write_bytes(src.read())
    return copy


@pytest.fixture
def ledger() -> Iterator[Ledger]:
    """A scratch crawl ledger (`docscrawl.crawl.ledger`), closed and deleted after the test."""
    opened = Ledger.open()
    yield opened
    opened.close()
