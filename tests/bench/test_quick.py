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
