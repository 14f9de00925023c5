"""CPU and peak RSS of each end-of-crawl step, run again on a copy of a finished output.

    .venv/bin/python benchmarks/scale/endcrawl.py OUT [--scratch DIR] [--reps 3]
    .venv/bin/python benchmarks/scale/endcrawl.py OUT --steps inbound,index

After the last page a crawl updates what it wrote (`crawl.finish.CrawlEnd.finish`); none
of it runs in bare Scrapy, so it counts whole against the CPU target. This script copies
the output folder OUT (a published crawl: `current`, `.runs`, `state.sqlite3`) to a
scratch folder and runs the steps there, in the order `finish` runs them, each in its own
child process: the CPU (`time.process_time` around the step alone, imports not counted)
and the child's peak RSS (`os.wait4`; its interpreter and imports included, about 30 MB).

- `grown`: the grown-records rewrite of pages.jsonl (`page_updater`), every page given its
  own observed URLs, discovery and lastmod again (the crawl's `_grown_records` walk of the
  frontier's tracks is not in it: it needs the live crawl);
- `backfill`: the version backfill of pages.jsonl (`version_updater`) for the first
  `--cold` pages, with the site's version evidence from site_model.json;
- `records`: both, as the code's `finish` does them (one pass over pages.jsonl since
  `rewrite_in_turn`, two before);
- `templates`: `TemplateWriter.finish` (each block's page count);
- `inbound`: `add_inbound_links`, with the backfill's chunk update when it updated pages;
- `index`: `carry.index_output` (the state pointing at the run's lines).
- `inbound_fed` (only when named, with `--cold 0`): `inbound` as a crawl pays it since
  `LinkGraph.feed`, every page's links fed to the graph (as the crawl does while it
  writes them) and then the end pass, which reads no links from pages.jsonl.

The steps write the same bytes again (the output is already finished), so their figures
are those of a crawl's end. After the steps it prints a SHA-256 of each output file and
of the state's rows, to compare two versions of the code on copies of one output.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CODE = Path(os.environ.get("DOCSCRAWL_CODE") or ROOT)  # the checkout whose docscrawl runs
if str(CODE) not in sys.path:
    sys.path.insert(0, str(CODE))

STEPS = ("grown", "backfill", "records", "templates", "inbound", "index")
# `inbound_fed` (asked for by name, not in the default steps): the inbound pass as a crawl
# with `LinkGraph.feed` pays it, the feeding of every page included
EXTRA_STEPS = ("inbound_fed",)
FILES = ("pages.jsonl", "structure.jsonl", "chunks.jsonl", "templates.jsonl")


def _page_lines(run_dir: Path) -> int:
    with (run_dir / "pages.jsonl").open("rb") as handle:
        return sum(1 for _ in handle)


def _grown(run_dir: Path) -> None:
    from docscrawl.crawl.updaters import PAGE_LEADING_FIELDS, page_updater
    from docscrawl.jsonl import read_jsonl, rewrite_jsonl
    grown = {r["canonical_url"]: {k: r.get(k) for k in
                                  ("observed_urls", "discovery", "sitemap_lastmod")}
             for r in read_jsonl(run_dir / "pages.jsonl") if r.get("canonical_url")}
    began = time.process_time()
    rewrite_jsonl(run_dir / "pages.jsonl", page_updater(grown, {}), fields=PAGE_LEADING_FIELDS)
    _done(began, len(grown))


def _cold(run_dir: Path, count: int) -> set[str]:
    """The final URLs of the first `count` pages (the backfill's cold pages)."""
    from docscrawl.jsonl import parse_object
    with (run_dir / "pages.jsonl").open(encoding="utf-8") as handle:
        return {str((parse_object(line) or {}).get("final_url"))
                for _, line in zip(range(count), handle, strict=False)}


def _versions(out: Path, run_dir: Path) -> Any:
    from docscrawl.extract.site_versions import SiteVersions
    site = json.loads((run_dir / "run.json").read_text())["site"]
    versions = SiteVersions(site)
    versions.restore(json.loads((out / "site_model.json").read_text()).get("versions") or {})
    return versions


def _backfill(out: Path, run_dir: Path, cold_count: int) -> dict[str, Any]:
    """The pages.jsonl rewrite; returns the pages it updated (for `inbound`)."""
    from docscrawl.crawl.updaters import VERSION_FIELDS, version_updater
    from docscrawl.jsonl import rewrite_jsonl
    versions, cold = _versions(out, run_dir), _cold(run_dir, cold_count)
    updated: dict[str, Any] = {}
    began = time.process_time()
    if versions.evidence():
        rewrite_jsonl(run_dir / "pages.jsonl", version_updater(versions, cold, updated),
                      fields=VERSION_FIELDS)
    _done(began, len(updated))
    return updated


def _records(out: Path, run_dir: Path, cold_count: int) -> None:
    from docscrawl.crawl import finish
    from docscrawl.jsonl import read_jsonl, rewrite_jsonl
    grown = {r["canonical_url"]: {k: r.get(k) for k in
                                  ("observed_urls", "discovery", "sitemap_lastmod")}
             for r in read_jsonl(run_dir / "pages.jsonl") if r.get("canonical_url")}
    versions, cold = _versions(out, run_dir), _cold(run_dir, cold_count)
    updated: dict[str, Any] = {}
    updates = [(finish.page_updater(grown, {}), finish.PAGE_LEADING_FIELDS),
               (finish.version_updater(versions, cold, updated), finish.VERSION_FIELDS)]
    began = time.process_time()
    if hasattr(finish, "rewrite_in_turn"):
        finish.rewrite_in_turn(run_dir / "pages.jsonl", updates)
    else:
        for transform, fields in updates:
            rewrite_jsonl(run_dir / "pages.jsonl", transform, fields=fields)
    _done(began, len(grown))


def _templates(run_dir: Path) -> None:
    from docscrawl.export.templates import TemplateWriter
    writer = TemplateWriter(run_dir, append=True)
    began = time.process_time()
    kept = writer.finish(run_dir / "pages.jsonl")
    _done(began, kept)


def _inbound(out: Path, run_dir: Path, cold_count: int) -> None:
    from docscrawl.crawl.updaters import chunk_version_update, version_updater
    from docscrawl.export.inbound import add_inbound_links
    from docscrawl.jsonl import parse_object
    _strip_inbound(run_dir / "chunks.jsonl")
    updated: dict[str, Any] = {}
    if cold_count:  # the versions the backfill gave (already in pages.jsonl: read back)
        versions, cold = _versions(out, run_dir), _cold(run_dir, cold_count)
        update = version_updater(versions, cold, updated)
        with (run_dir / "pages.jsonl").open(encoding="utf-8") as handle:
            for _, line in zip(range(cold_count), handle, strict=False):  # `_cold`'s pages
                update(parse_object(line) or {})
    began = time.process_time()
    linked = add_inbound_links(run_dir, update=chunk_version_update(updated) if updated
                               else None)
    _done(began, linked)


def _inbound_fed(out: Path, run_dir: Path, cold_count: int) -> None:
    """`inbound` as a crawl that fed its pages' links to the graph as it wrote them
    (`LinkGraph.feed`) pays it: the CPU of feeding every page (its links decoded before
    the clock starts: the crawl has them in memory) and of the end pass."""
    from docscrawl.export.inbound import add_inbound_links
    from docscrawl.export.linkgraph import LinkGraph
    from docscrawl.export.linkrows import page_lines
    from docscrawl.export.templates import TEMPLATES_FILE, TemplateBlock, template_blocks
    from docscrawl.jsonfields import field
    if cold_count:
        raise SystemExit("inbound_fed: run it with --cold 0")
    _strip_inbound(run_dir / "chunks.jsonl")
    blocks = {template_id: TemplateBlock(template_id, "", links) for template_id, links
              in template_blocks(run_dir / TEMPLATES_FILE)}
    pages = [(field(line, "canonical_url"), field(line, "links"),
              [blocks[t] for t in field(line, "template_ids") or ()],
              field(line, "template_offsets") or [])
             for line in page_lines(run_dir / "pages.jsonl")]
    began = time.process_time()
    graph = LinkGraph()
    for source, links, page_blocks, offsets in pages:
        graph.feed(source, links, page_blocks, offsets)
    linked = add_inbound_links(run_dir, graph=graph)
    _done(began, linked)


def _strip_inbound(chunks: Path) -> None:
    """chunks.jsonl as the crawl leaves it before the inbound pass: without the inbound
    fields the finished output has (the last two of each chunk's metadata)."""
    from docscrawl.jsonl import replacing
    marker = ',"inbound_links":'
    with chunks.open(encoding="utf-8") as src, replacing(chunks) as dst:
        for line in src:
            at = line.rfind(marker)
            dst.write(line[:at] + "}}\n" if at > 0 and line.endswith("}}\n") else line)


def _index(out: Path, run_dir: Path) -> None:
    from docscrawl.incremental.carry import index_output
    from docscrawl.incremental.state import StateStore
    store = StateStore.open(out)
    began = time.process_time()
    pointed = index_output(store, run_dir)
    _done(began, pointed)
    store.close()


def _done(began: float, count: int) -> None:
    print(json.dumps({"cpu_s": time.process_time() - began, "count": count}), flush=True)


def run_step(step: str, out: Path, cold: int) -> None:
    """One step on the output `out` (its published run), in this process."""
    run_dir = (out / "current").resolve()
    if step == "grown":
        _grown(run_dir)
    elif step == "backfill":
        _backfill(out, run_dir, cold)
    elif step == "records":
        _records(out, run_dir, cold)
    elif step == "templates":
        _templates(run_dir)
    elif step == "inbound":
        _inbound(out, run_dir, cold)
    elif step == "inbound_fed":
        _inbound_fed(out, run_dir, cold)
    elif step == "index":
        _index(out, run_dir)
    else:
        raise SystemExit(f"unknown step {step!r}")


def child(step: str, out: Path, cold: int, code: Path) -> tuple[float, float, int]:
    """(CPU seconds of the step, peak RSS MB of its process, the step's count)."""
    env = {**os.environ, "DOCSCRAWL_CODE": str(code)}
    proc = subprocess.Popen([sys.executable, __file__, "--child", step, str(out),
                             "--cold", str(cold)], stdout=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    text = proc.stdout.read().decode()
    _pid, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"step {step} failed ({status})")
    result = json.loads(text.strip().splitlines()[-1])
    return float(result["cpu_s"]), usage.ru_maxrss / 1024, int(result["count"])


def _repoint(copy: Path, out: Path) -> None:
    """The copy's state points at the copy's runs: `index` then releases (unpins) the
    copy's, never the original output's."""
    import sqlite3
    db = sqlite3.connect(copy / "state.sqlite3")
    try:
        with db:
            db.execute("UPDATE sources SET run_dir = replace(run_dir, ?, ?)",
                       (str(out.resolve()), str(copy.resolve())))
    finally:
        db.close()


_CLOCK = {"indexed_at", "updated_at"}  # state columns that say when, not what


def digests(out: Path) -> dict[str, str]:
    """SHA-256 of each output file and of the state's rows (sorted; the copy's path and
    the clock's columns left out)."""
    import sqlite3
    run_dir = (out / "current").resolve()
    found = {}
    for name in FILES:
        path = run_dir / name
        if path.is_file():
            found[name] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    db = sqlite3.connect(out / "state.sqlite3")
    try:
        tables = [row[0] for row in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"
            " ORDER BY name")]
        digest = hashlib.sha256()
        for table in tables:
            columns = ", ".join(row[1] for row in db.execute(f"PRAGMA table_info({table})")
                                if row[1] not in _CLOCK)
            rows = sorted(repr(tuple(str(v).replace(str(out), "OUT") for v in row))
                          for row in db.execute(f"SELECT {columns} FROM {table}"))
            digest.update(f"{table}:{len(rows)}\n{chr(10).join(rows)}".encode())
        found["state rows"] = digest.hexdigest()[:16]
    finally:
        db.close()
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="a finished crawl's output folder")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/docscrawl-endcrawl"))
    parser.add_argument("--steps", default=",".join(STEPS))
    parser.add_argument("--reps", type=int, default=1, help="copies, each run through")
    parser.add_argument("--cold", type=int, default=100,
                        help="pages given the site's version by the backfill")
    parser.add_argument("--code", type=Path, default=CODE,
                        help="the checkout whose docscrawl runs the steps (another version, "
                        "to compare: the digests say whether it wrote the same bytes)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        run_step(args.child, args.out, args.cold)
        return 0
    steps = [s for s in args.steps.split(",") if s]
    pages = _page_lines((args.out / "current").resolve())
    load = os.getloadavg()
    print(f"{args.out}: {pages} pages; code {args.code}; load {load[0]:.1f} {load[1]:.1f}; "
          f"reps {args.reps}")
    figures: dict[str, list[tuple[float, float]]] = {step: [] for step in steps}
    for rep in range(args.reps):
        copy = args.scratch / f"copy-{rep}"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(args.out, copy, symlinks=True)
        _repoint(copy, args.out)
        os.sync()  # the copy on disk: its write-back is not charged to the first step
        for step in steps:
            cpu, rss, _count = child(step, copy, args.cold, args.code)
            figures[step].append((cpu, rss))
        if rep == args.reps - 1:
            sums = digests(copy)
        shutil.rmtree(copy, ignore_errors=True)
    print("| step | CPU s (min of reps) | ms per page | peak RSS MB |")
    print("| --- | ---: | ---: | ---: |")
    total = 0.0
    for step in steps:
        cpu = min(c for c, _ in figures[step])
        rss = max(r for _, r in figures[step])
        total += cpu
        print(f"| {step} | {cpu:.2f} | {1000 * cpu / max(pages, 1):.2f} | {rss:.1f} |")
    print(f"| all | {total:.2f} | {1000 * total / max(pages, 1):.2f} | |")
    for name, value in sums.items():
        print(f"sha256 {name}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
