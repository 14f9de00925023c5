"""Where a crawl's CPU goes, by stage, from a cProfile file (no py-spy needed).

    .venv/bin/python -m cProfile -o crawl.prof -m scrapy crawl docs -a site=URL -a out=DIR
    .venv/bin/python benchmarks/scale/stages.py crawl.prof [--top 25]

Prints the inclusive share of each stage of the crawl (the spider's parse and link
discovery, the extraction pipeline, the export, the render middleware's check, the end of
the crawl, and what is left: Scrapy, the frontier, the crawl log), then the functions with
the most self time. The stages do not nest in one another (pipelines run after the spider
callback returns), so their shares add up. What a second core could take over is the
parse, link discovery and extraction: `pool_probe.py` measures that work page by page.

cProfile slows Python code more than C code (json, lxml), so shares, not seconds, are what
to compare; `run.py` measures the real CPU per page.
"""

from __future__ import annotations

import argparse
import pstats
import re
import sys
from pathlib import Path

# stage -> (path suffixes, function name): a stage's entry point, wherever the module lives
STAGES: dict[str, tuple[tuple[str, ...], str]] = {
    "spider: parse, page structure, links": (("spiders/docs.py",), "_parse_html"),
    "extraction pipeline": (("pipelines/extract.py", "extract/pipeline.py"), "process_item"),
    "export: records, chunks, lines": (("pipelines/export.py", "export/pipeline.py"),
                                       "process_item"),
    "render middleware check": (("render/middleware.py",), "process_response"),
    "end of crawl": (("crawl/session.py", "crawl/finish.py"), "finish"),
}

Key = tuple[str, int, str]
_LIB = re.compile(r"^.*/lib/python3\.\d+/(site-packages/)?")


def _matches(key: Key, suffixes: tuple[str, ...], name: str) -> bool:
    path, _line, func = key
    return func == name and path.endswith(suffixes)


def stage_seconds(stats: pstats.Stats) -> tuple[dict[str, float], float]:
    """Inclusive seconds per stage and the profile's total."""
    table = stats.stats  # type: ignore[attr-defined]
    total = max((row[3] for row in table.values()), default=0.0)
    seconds = {}
    for stage, (suffixes, name) in STAGES.items():
        entries = {key: row for key, row in table.items() if _matches(key, suffixes, name)}
        # An entry point called by another of the same stage (the session's `finish`
        # calling `CrawlEnd.finish`) is already inside that one's inclusive time.
        seconds[stage] = sum(row[3] for row in entries.values()
                             if not any(caller in entries for caller in row[4]))
    return seconds, total


def self_time(stats: pstats.Stats, top: int) -> list[tuple[float, str]]:
    """The `top` functions by self time, as (seconds, `file:line(function)`)."""
    table = stats.stats  # type: ignore[attr-defined]
    rows = sorted(((row[2], key) for key, row in table.items()), reverse=True)[:top]
    return [(tt, f"{_short(path)}:{line}({func})") for tt, (path, line, func) in rows]


def _short(path: str) -> str:
    """A frame's file without the interpreter's or the checkout's prefix."""
    path = _LIB.sub("", path)
    at = path.rfind("/docscrawl/")
    return path[at + 1:] if at >= 0 else path


def report(profile: Path, top: int = 25) -> str:
    stats = pstats.Stats(str(profile))
    seconds, total = stage_seconds(stats)
    lines = [f"{profile}: {total:.1f} s profiled", "", "| stage | share |", "|---|---:|"]
    for stage, value in seconds.items():
        lines.append(f"| {stage} | {100 * value / total:.1f}% |")
    rest = total - sum(seconds.values())
    lines.append(f"| Scrapy, frontier, crawl log, the rest | {100 * rest / total:.1f}% |")
    lines += ["", f"top {top} by self time:"]
    lines += [f"  {100 * tt / total:5.1f}%  {name}" for tt, name in self_time(stats, top)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    if not args.profile.is_file():
        print(f"stages.py: no profile at {args.profile}", file=sys.stderr)
        return 2
    print(report(args.profile, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
