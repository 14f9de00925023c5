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
    assert points[0] == (0, 100.0)
    assert [pages for pages, _ in points] == [0, 30, 60, 90, 110]
    assert all(mb == 100 + pages / 2 for pages, mb in points)  # the sample of that second
    assert end == 300.0
