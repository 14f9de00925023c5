"""The scale benchmark's runner works end to end (`run.py --quick`); figures are not judged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
RUNNER = ROOT / "benchmarks" / "scale" / "run.py"


@pytest.mark.e2e
def test_quick_run_produces_figures(tmp_path: Path) -> None:
    figures = tmp_path / "figures.json"
    result = subprocess.run(
        [sys.executable, str(RUNNER), "--quick", "--scratch", str(tmp_path / "scratch"),
         "--json", str(figures)],
        cwd=ROOT, capture_output=True, text=True, timeout=480,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "| 500 | bare |" in result.stdout
    assert "CPU/page docscrawl/bare" in result.stdout

    data = json.loads(figures.read_text())
    assert data["server"] in {"nginx", "devserver"}
    kinds = {run["kind"] for run in data["runs"]}
    assert kinds == {"bare", "docscrawl", "docscrawl_recrawl", "docscrawl_inventory"}
    pages = {run["kind"]: run["pages"] for run in data["runs"]}
    assert pages["docscrawl_inventory"] == pages["bare"] == pages["docscrawl"]
    for run in data["runs"]:
        assert run["exit_status"] == 0
        assert run["pages"] > 0
        assert run["cpu_s"] > 0 and run["wall_s"] > 0 and run["peak_rss_mb"] > 0
    (summary,) = data["summaries"]
    assert summary["n"] == 500
    ratios = summary["ratios"]
    for name in ("cpu_per_page", "peak_rss", "pages_per_s", "recrawl_cpu_to_first",
                 "inventory_pages_per_cpu_s_to_bare"):
        assert ratios[name] > 0


def test_site_generator_is_deterministic(tmp_path: Path) -> None:
    sys.path.insert(0, str(RUNNER.parent))
    import gensite

    gensite.generate(tmp_path / "a", 120, seed=3)
    gensite.generate(tmp_path / "b", 120, seed=3)
    pages = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.html"))
    assert len(pages) == 120
    for page in pages:
        assert (tmp_path / "a" / page).read_bytes() == (tmp_path / "b" / page).read_bytes()
    html = (tmp_path / "a" / gensite.page_path(50)).read_text()
    assert html.count('class="toctree-l1') >= 50  # the sidebar
    for needle in ("<h4>", "highlight-", "<table", 'rel="next"', 'rel="prev"', "nav-item"):
        assert needle in html
    gensite.write_site_files(tmp_path / "a", 120, "http://127.0.0.1:9")
    sitemap = (tmp_path / "a" / "sitemap.xml").read_text()
    assert sitemap.count("<loc>http://127.0.0.1:9/") == 120
    assert "Sitemap: http://127.0.0.1:9/sitemap.xml" in (tmp_path / "a" / "robots.txt").read_text()


def test_rss_samples_follow_the_child(tmp_path: Path) -> None:
    """`run.py --rss-every`: the child's VmRSS and CPU over time, beside its log. The child
    holds 40 MB until the test has seen a sample taken while it held them."""
    import threading

    sys.path.insert(0, str(RUNNER.parent))
    import run

    release, held = tmp_path / "release", tmp_path / "held"
    child = ("import pathlib, time\n"
             "block = bytearray(40 * 1024 * 1024)\n"
             f"pathlib.Path({str(held)!r}).touch()\n"
             f"while not pathlib.Path({str(release)!r}).exists(): time.sleep(0.01)\n")
    log = tmp_path / "child.log"
    samples = tmp_path / "child.log.rss.tsv"
    result: list[tuple[int, run.Usage, float, run.proctree.TreeSampler]] = []
    thread = threading.Thread(target=lambda: result.append(run.measured(
        [sys.executable, "-c", child], cwd=tmp_path, log=log, timeout=120, rss_every=0.05)))
    thread.start()
    try:
        def rows() -> list[list[float]]:
            text = samples.read_text() if samples.exists() else ""
            return [[float(x) for x in line.split("\t")] for line in text.splitlines()
                    if line.count("\t") == 2 and not line.endswith("\t")]  # whole rows
        deadline = 1200  # polls of 0.05 s: a minute at most on a loaded machine
        while deadline and not (held.exists() and any(mb > 40 for _, mb, _ in rows())):
            thread.join(0.05)
            deadline -= 1
    finally:
        release.touch()
        thread.join()
    status, usage, _wall, _tree = result[0]
    assert status == 0 and usage.peak_rss_mb > 40 and usage.minor_faults > 0
    assert 0 <= usage.sys_cpu_s <= usage.cpu_s
    times = [t for t, _, _ in rows()]
    assert times == sorted(times) and max(mb for _, mb, _ in rows()) > 40
    cpu = [c for _, _, c in rows()]  # the child's own CPU so far: it only grows
    assert cpu == sorted(cpu) and cpu[-1] <= usage.cpu_s
