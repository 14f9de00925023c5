"""Rendering speed, before and after a change, in one run: pages/s of the same crawl of a
client-rendered site with two checkouts of docscrawl, run alternately.

    .venv/bin/python benchmarks/render_speed.py --before REV [--after REV] [--rounds 3]

The site is `render_bench.write_site`'s: N history-routed pages (the SPA fixture's app and
generated Markdown), every one rendered. Each checkout is a `git archive` of its revision
(`--after` defaults to this working tree). Each round crawls with both checkouts, the order
alternating from round to round, so that both see the same machine load; the machine is
shared, so the ratio of each round (after / before) is the number to read, next to the
absolute pages/s. pages/s (steady) counts from the first page fetched to the last page
event of the crawl log; pages/s (wall) over the whole command (Python start, browser
launch and shutdown included).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.render_bench import crawl, write_site  # noqa: E402
from docscrawl.demo.server import StaticSite  # noqa: E402


def checkout(rev: str, into: Path) -> Path:
    """The tree of `rev` (a git revision of this repository), extracted into `into`."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="git revision of the old code")
    parser.add_argument("--after", help="git revision of the new code (default: this tree)")
    parser.add_argument("--pages", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-s", dest="settings", action="append", default=[],
                        metavar="NAME=VALUE", help="a Scrapy setting for both crawls")
    options = parser.parse_args()
    settings = dict(item.split("=", 1) for item in options.settings)
    with tempfile.TemporaryDirectory(prefix="render-speed-") as tmp:
        tmp_path = Path(tmp)
        trees = {"before": checkout(options.before, tmp_path / "before"),
                 "after": (checkout(options.after, tmp_path / "after") if options.after
                           else ROOT)}
        write_site(tmp_path / "site", options.pages)
        results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        loads = []
        with StaticSite(tmp_path / "site") as server:
            for run in range(options.rounds):
                order = list(trees) if run % 2 == 0 else list(reversed(trees))
                loads.append(os.getloadavg()[0])
                for name in order:
                    out = tmp_path / f"{name}_{run}"
                    result = crawl(f"{server.url}/b/", out, "render=auto", settings=settings,
                                   tree=trees[name])
                    if result["rendered"] != options.pages:
                        raise SystemExit(f"{name}: {result['rendered']} of {options.pages} "
                                         "pages rendered")
                    results[name].append(result)
                    print(f"round {run + 1} {name:<7}wall {result['wall_s']:5.1f} s  "
                          f"{result['steady_pages_s']:5.2f} pages/s steady  "
                          f"{result['wall_pages_s']:5.2f} wall", flush=True)
    print(f"\nrender speed: {options.pages} client-rendered pages, {os.cpu_count()} cores, "
          f"load average {min(loads):.1f}-{max(loads):.1f} at round starts; "
          f"before {options.before}, after {options.after or 'working tree'}")
    print("pages/s: median (each round)")
    for name, runs in results.items():
        for metric in ("steady_pages_s", "wall_pages_s"):
            values = [r[metric] for r in runs]
            print(f"  {name:<7}{metric.replace('_pages_s', ''):<7}"
                  f"{statistics.median(values):5.2f} ("
                  + ", ".join(f"{v:.2f}" for v in values) + ")")
    for metric in ("steady_pages_s", "wall_pages_s"):
        ratios = [a[metric] / b[metric] for a, b in zip(results["after"], results["before"],
                                                         strict=True)]
        print(f"after/before {metric.replace('_pages_s', '')}: median "
              f"{statistics.median(ratios):.2f}x (" + ", ".join(f"{r:.2f}" for r in ratios)
              + ")")


if __name__ == "__main__":
    main()
