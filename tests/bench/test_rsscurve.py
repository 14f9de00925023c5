"""RSS against pages done (`benchmarks/scale/rsscurve.py`): samples joined with the
crawl's progress lines by time."""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "benchmarks" / "scale"))

import rsscurve  # noqa: E402


def test_samples_joined_with_progress_lines(tmp_path: Path) -> None:
    start = time.mktime(time.strptime("2026-12-03 10:00:00", "%Y-%m-%d %H:%M:%S"))
    log = tmp_path / "docscrawl-100-0.log"
    # one sample a second, 100 MB + 1 per second; the end of the crawl peaks at 300
    rows = [f"{s}.0\t{100 + s}.0" for s in range(60)] + ["61.0\t300.0", "62.0\t120.0"]
    (tmp_path / "docscrawl-100-0.log.rss.tsv").write_text(
        f"{rsscurve.START}{start}\n" + "\n".join(rows) + "\n")
    lines = [f"2026-12-03 10:00:{s:02d} [docscrawl.extensions.progress] INFO: docscrawl "
             f"progress: {s * 2} pages done, 5 queued, 0 skipped, 0 failed, 9 pages/min"
             for s in range(0, 60, 5)]
    (tmp_path / "docscrawl-100-0.log.scrapy").write_text(
        "2026-12-03 10:00:00 [scrapy.core.engine] INFO: Spider opened\n"
        + "\n".join(lines) + "\n2026-12-03 10:00:59 [scrapy.core.engine] INFO: Closing "
        "spider (finished)\n" + lines[-1].replace("10:00:55", "10:01:02") + "\n")
    points, end = rsscurve.curve(log, points=5)
    assert points[0] == (0, 100.0, None)  # an older file: no CPU column
    assert [pages for pages, _, _ in points] == [0, 30, 60, 90, 110]
    assert all(mb == 100 + pages / 2 for pages, mb, _ in points)  # the sample of that second
    assert end == 300.0
    assert rsscurve.stretches(points) == []


def test_cpu_by_stretch(tmp_path: Path) -> None:
    """A page costs 10 ms of CPU for the first 60 pages and 30 ms after: the stretches say
    so, where the total's average would not."""
    start = time.mktime(time.strptime("2026-12-03 10:00:00", "%Y-%m-%d %H:%M:%S"))
    log = tmp_path / "docscrawl-120-0.log"
    cpu = [0.01 * min(2 * s, 60) + 0.03 * max(2 * s - 60, 0) for s in range(61)]
    (tmp_path / "docscrawl-120-0.log.rss.tsv").write_text(
        f"{rsscurve.START}{start}\n"
        + "".join(f"{s}.0\t100.0\t{cpu[s]:.2f}\n" for s in range(61)))
    (tmp_path / "docscrawl-120-0.log.scrapy").write_text("".join(
        f"2026-12-03 10:00:{s:02d} [docscrawl.extensions.progress] INFO: docscrawl "
        f"progress: {2 * s} pages done, 0 queued\n" for s in range(0, 60, 10)))
    points, _ = rsscurve.curve(log, points=5)
    assert [round(ms, 6) for _, _, ms in rsscurve.stretches(points)] == [10, 10, 10, 30, 30]
    assert [(first, last) for first, last, _ in rsscurve.stretches(points)] == [
        (0, 20), (20, 40), (40, 60), (60, 80), (80, 100)]
