"""Search index build cost against crawl cost, measured side by side in one run.

    python -m benchmarks.index_cost --outputs /tmp/cost requests-docs flask-docs
    python -m benchmarks.index_cost --outputs /tmp/cost --all        # every corpus site
    python -m benchmarks.index_cost --outputs /tmp/cost --embedders wordllama,minilm

For each corpus site: crawl it (`scrapy crawl docs`, render=never, 400 pages at most),
then build its index from scratch (`docscrawl index OUT --rebuild`), `--repeat` times
(the least CPU of each step is kept), then bring the index up to date again with nothing
changed. Each step is its own process; its CPU (user + system, from the children's
rusage) includes start-up, as a user would pay it. Reports CPU seconds per step, chunks,
and the ratio index build / crawl (the target is <= 0.5 with the default model). With
`--embedders A,B` each crawl is indexed by every model named, in turn (a figure per
model, the same crawl's CPU beside them); the index size is reported per chunk, and a
model with section vectors reports how many sections it embedded (its build's CPU grows
with them, not with start-up: docs/search.md, ninth sitting).

Measured as an installed package runs: docscrawl's modules are compiled to bytecode first
and the children run without PYTHONDONTWRITEBYTECODE (a process that compiles every module
it imports pays about 0.04 s more, which the helpers' environment did before).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import sqlite3
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


def index_bytes(out: Path) -> int:
    """The index's size on disk: the database and the vector files a search maps."""
    return sum(p.stat().st_size for p in out.glob("search.*") if p.is_file())


def section_count(out: Path) -> int:
    """Sections with a vector in the index (0 without a section model)."""
    db = sqlite3.connect(f"file:{out / 'search.sqlite3'}?mode=ro", uri=True)
    try:
        return int(db.execute("SELECT count(*) FROM sections").fetchone()[0])
    except sqlite3.OperationalError:    # an index without the table
        return 0
    finally:
        db.close()


def as_installed() -> None:
    """Compile docscrawl's modules and let the children read (and write) bytecode, as an
    installed package is run."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(ROOT / "docscrawl", quiet=1)


def measure(name: str, url: str, out: Path, repeat: int = 1,
            embedders: tuple[str | None, ...] = (None,)) -> dict[str, Any]:
    """Crawl and build `repeat` times, alternating, and keep each step's least CPU: on a
    shared machine a step's CPU time varies by a third from run to run, and the minimum
    is the run least disturbed, for both sides of the ratio alike."""
    crawls: list[float] = []
    builds: dict[str | None, list[float]] = {e: [] for e in embedders}
    sizes: dict[str | None, int] = {}
    sections: dict[str | None, int] = {}
    for _ in range(repeat):
        if out.exists():
            subprocess.run(["rm", "-rf", str(out)], check=True)
        crawls.append(timed(lambda: crawl_site(name, url, out)))
        for embedder in embedders:
            flags = ("--rebuild", "--embedder", embedder) if embedder else ("--rebuild",)
            builds[embedder].append(timed(lambda flags=flags: index(out, *flags)))
            sizes[embedder] = index_bytes(out)
            sections[embedder] = section_count(out)
    crawl = min(crawls)
    extra = ("--embedder", embedders[-1]) if embedders[-1] else ()
    again = timed(lambda: index(out, *extra))
    chunks = sum(1 for _ in (out / "chunks.jsonl").open(encoding="utf-8"))
    row: dict[str, Any] = {"site": name, "chunks": chunks, "crawl_cpu_s": round(crawl, 2),
                           "unchanged_update_cpu_s": round(again, 2)}
    for embedder in embedders:
        build = min(builds[embedder])
        suffix = f"[{embedder}]" if embedder else ""
        row[f"index_cpu_s{suffix}"] = round(build, 2)
        row[f"ratio{suffix}"] = round(build / crawl, 3) if crawl else None
        row[f"index_bytes_per_chunk{suffix}"] = sizes[embedder] // max(chunks, 1)
        if sections[embedder]:
            row[f"sections{suffix}"] = sections[embedder]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", nargs="*", help=f"corpus site names (default: "
                                                 f"{' '.join(DEFAULT_SITES)})")
    parser.add_argument("--outputs", type=Path, required=True,
                        help="directory for the crawl outputs (OUTPUTS/NAME, replaced)")
    parser.add_argument("--all", action="store_true", help="every corpus site")
    parser.add_argument("--repeat", type=int, default=3,
                        help="crawls and builds per site; the least CPU of each is kept")
    parser.add_argument("--embedders", default="",
                        help="comma-separated models to build each crawl's index with "
                             "(as --embedder; default: the default model)")
    args = parser.parse_args(argv)
    embedders = tuple(e.strip() for e in args.embedders.split(",") if e.strip()) or (None,)
    known = corpus_sites()
    names = list(known) if args.all else (args.sites or list(DEFAULT_SITES))
    unknown = [name for name in names if name not in known]
    if unknown:
        parser.error(f"not corpus sites: {', '.join(unknown)}")
    as_installed()
    rows = []
    for name in names:
        rows.append(measure(name, known[name], args.outputs / name, max(1, args.repeat),
                            embedders))
        print(json.dumps(rows[-1]), flush=True)
    crawl = sum(r["crawl_cpu_s"] for r in rows)
    total: dict[str, Any] = {"sites": len(rows), "crawl_cpu_s": round(crawl, 2)}
    for embedder in embedders:
        suffix = f"[{embedder}]" if embedder else ""
        build = sum(r[f"index_cpu_s{suffix}"] for r in rows)
        ratios = sorted(r[f"ratio{suffix}"] for r in rows if r[f"ratio{suffix}"] is not None)
        total.update({f"index_cpu_s{suffix}": round(build, 2),
                      f"ratio_total{suffix}": round(build / crawl, 3) if crawl else None,
                      f"ratio_max{suffix}": ratios[-1] if ratios else None})
    print(json.dumps(total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
