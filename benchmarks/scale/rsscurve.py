"""RSS and CPU against pages done, from one scale run's samples and its crawl log.

    .venv/bin/python benchmarks/scale/rsscurve.py WORK/docscrawl-50000-0.log [--points 10]

`run.py --rss-every S` samples the crawler's VmRSS and its own CPU into LOG.rss.tsv
(seconds since the start, MB, CPU seconds; its first line `# start EPOCH`); docscrawl logs
a progress line ("N pages done") every few seconds into LOG.scrapy. Joined, they say
whether memory grew with the pages or at the end of the crawl, and what each stretch of
pages cost (CPU ms a page between two points): a peak or a total alone does not.
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
import time
from pathlib import Path

START = "# start "
_PROGRESS = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\S* \[docscrawl\.extensions\.progress\]"
                       r" INFO: docscrawl progress: (\d+) pages done")
_CLOSING = "[scrapy.core.engine] INFO: Closing spider"


Sample = tuple[float, float, float | None]  # seconds since the start, MB, CPU s or None


def samples(tsv: Path) -> tuple[float | None, list[Sample]]:
    """(start epoch or None, [(seconds, MB, CPU s or None), ...]) of an .rss.tsv (an older
    file has no CPU column)."""
    start, rows = None, list[Sample]()
    for line in tsv.read_text().splitlines():
        if line.startswith(START):
            start = float(line[len(START):])
            continue
        parts = line.split("\t")
        if len(parts) in (2, 3) and all(parts):
            rows.append((float(parts[0]), float(parts[1]),
                         float(parts[2]) if len(parts) == 3 else None))
    return start, rows


def progress(scrapy_log: Path) -> list[tuple[float, int]]:
    """(epoch, pages done) of each progress line before the spider closes (the last one is
    written after the end of the crawl), and (epoch of the close, -1) last when it closed
    (the log's times are local time)."""
    found = []
    with scrapy_log.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            match = _PROGRESS.match(line)
            if match:
                found.append((_epoch(match.group(1)), int(match.group(2))))
            elif _CLOSING in line:
                found.append((_epoch(line[:19]), -1))
                break
    return found


def _epoch(stamp: str) -> float:
    return time.mktime(time.strptime(stamp, "%Y-%m-%d %H:%M:%S"))


Point = tuple[int, float, float | None]  # pages done, MB, CPU s or None


def curve(log: Path, points: int = 10) -> tuple[list[Point], float | None]:
    """About `points` (pages done, MB, CPU s) evenly spread over the crawl's pages, each
    the last sample taken at or before its progress line; and the end of the crawl (the
    largest sample after the spider closed, or after the last progress line; None when
    there is none)."""
    start, rows = samples(log.with_name(log.name + ".rss.tsv"))
    lines = progress(log.with_name(log.name + ".scrapy"))
    closed = lines.pop()[0] if lines and lines[-1][1] < 0 else None
    if start is None or not rows or not lines:
        return [], None
    joined: list[Point] = []
    for when, pages in lines:
        before = [(mb, cpu) for seconds, mb, cpu in rows if start + seconds <= when]
        if before:  # surely before the line
            joined.append((pages, *before[-1]))
    if not joined:
        return [], None
    last = joined[-1][0]
    step = max(last // points, 1)
    picked: list[Point] = []
    for point in joined:
        if not picked or point[0] >= picked[-1][0] + step:
            picked.append(point)
    if picked[-1][0] != last:
        picked.append(joined[-1])
    end = closed if closed is not None else lines[-1][0]
    after = [mb for seconds, mb, _ in rows if start + seconds > end + 1]
    return picked, max(after) if after else None


def stretches(points: list[Point]) -> list[tuple[int, int, float]]:
    """(from pages, to pages, CPU ms a page) between consecutive points that carry CPU:
    whether a page costs more late in the crawl than early."""
    found = []
    for (p0, _, c0), (p1, _, c1) in itertools.pairwise(points):
        if c0 is not None and c1 is not None and p1 > p0:
            found.append((p0, p1, 1000 * (c1 - c0) / (p1 - p0)))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="WORK/KIND-N-REP.log of run.py --rss-every")
    parser.add_argument("--points", type=int, default=10)
    args = parser.parse_args(argv)
    found, end = curve(args.log, args.points)
    if not found:
        print(f"no samples or no progress lines for {args.log}", file=sys.stderr)
        return 1
    for pages, mb, cpu in found:
        print(f"{pages:>8} pages  {mb:7.1f} MB" + (f"  {cpu:8.1f} CPU s" if cpu is not None
                                                    else ""))
    for first, last, ms in stretches(found):
        print(f"  pages {first:,}-{last:,}: {ms:.1f} CPU ms a page")
    if end is not None:
        print(f"  end of crawl {end:7.1f} MB (largest sample after the spider closed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
