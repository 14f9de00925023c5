"""Search index build cost against crawl cost, measured side by side in one run.

    python -m benchmarks.index_cost --outputs /tmp/cost requests-docs flask-docs
    python -m benchmarks.index_cost --outputs /tmp/cost --all        # every corpus site

For each corpus site: crawl it (`scrapy crawl docs`, render=never, 400 pages at most),
then build its index from scratch (`docscrawl index OUT --rebuild`), `--repeat` times
(the least CPU of each step is kept), then bring the index up to date again with nothing
changed. Each step is its own process; its CPU (user + system, from the children's
rusage) includes start-up, as a user would pay it. Reports CPU seconds per step, chunks,
and the ratio index build / crawl (the target is <= 0.15).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.retrieval import corpus_sites, crawl_site

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SITES = ("requests-docs", "flask-docs", "pytest-docs", "git-docs", "celery-docs")


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(step: Any) -> float:
    """CPU seconds the child processes `step` runs take."""
    before = child_cpu()
    step()
    return child_cpu() - before


def index(out: Path, *rest: str) -> None:
    subprocess.run([sys.executable, "-m", "docscrawl.cli", "index", str(out), *rest],
                   cwd=ROOT, check=True, capture_output=True)


def measure(name: str, url: str, out: Path, repeat: int = 1) -> dict[str, Any]:
    """Crawl and build `repeat` times, alternating, and keep each step's least CPU: on a
    shared machine a step's CPU time varies by a third from run to run, and the minimum
    is the run least disturbed, for both sides of the ratio alike."""
    crawls, builds = [], []
    for _ in range(repeat):
        if out.exists():
            subprocess.run(["rm", "-rf", str(out)], check=True)
        crawls.append(timed(lambda: crawl_site(name, url, out)))
        builds.append(timed(lambda: index(out, "--rebuild")))
    crawl, build = min(crawls), min(builds)
    again = timed(lambda: index(out))
    chunks = sum(1 for _ in (out / "chunks.jsonl").open(encoding="utf-8"))
    return {"site": name, "chunks": chunks, "crawl_cpu_s": round(crawl, 2),
            "index_cpu_s": round(build, 2), "unchanged_update_cpu_s": round(again, 2),
            "ratio": round(build / crawl, 3) if crawl else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", nargs="*", help=f"corpus site names (default: "
                                                 f"{' '.join(DEFAULT_SITES)})")
    parser.add_argument("--outputs", type=Path, required=True,
                        help="directory for the crawl outputs (OUTPUTS/NAME, replaced)")
    parser.add_argument("--all", action="store_true", help="every corpus site")
    parser.add_argument("--repeat", type=int, default=3,
                        help="crawls and builds per site; the least CPU of each is kept")
    args = parser.parse_args(argv)
    known = corpus_sites()
    names = list(known) if args.all else (args.sites or list(DEFAULT_SITES))
    unknown = [name for name in names if name not in known]
    if unknown:
        parser.error(f"not corpus sites: {', '.join(unknown)}")
    rows = []
    for name in names:
        rows.append(measure(name, known[name], args.outputs / name, max(1, args.repeat)))
        print(json.dumps(rows[-1]), flush=True)
    crawl = sum(r["crawl_cpu_s"] for r in rows)
    build = sum(r["index_cpu_s"] for r in rows)
    ratios = sorted(r["ratio"] for r in rows if r["ratio"] is not None)
    print(json.dumps({"sites": len(rows), "crawl_cpu_s": round(crawl, 2),
                      "index_cpu_s": round(build, 2),
                      "ratio_total": round(build / crawl, 3) if crawl else None,
                      "ratio_max": ratios[-1] if ratios else None}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
