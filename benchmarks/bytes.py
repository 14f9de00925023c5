"""Where the bytes of a crawl output go: per file, per page, per field, against the HTML.

    python -m benchmarks.bytes --outputs /tmp/bytes flask-docs git-docs   # read outputs
    python -m benchmarks.bytes --outputs /tmp/bytes --crawl flask-docs    # crawl first
    python -m benchmarks.bytes --outputs /tmp/bytes --crawl --arg compress=gzip git-docs
    python -m benchmarks.bytes --outputs /tmp/bytes --as-gzip git-docs   # a plain crawl, gzipped
    python -m benchmarks.bytes --outputs /tmp/bytes --crawl --arg render=auto sdl2-docs
    python -m benchmarks.bytes --outputs /tmp/bytes --index-parts r-manuals go-spec

For each corpus site (`real-sites.sh`, found as the retrieval benchmark finds it), read
the output folder OUTPUTS/NAME (crawling it first with `--crawl`: render=never unless an
`--arg` says otherwise, `--max-pages` pages): the bytes of every file of the published
run, of the state (`state.sqlite3`, `site_model.json`) and of the search index
(`search.*`) if one was built; the HTML crawled (the `bytes` of the crawl log's `fetched`
events: every response body the crawl read); the ratios output/HTML without state and
index (the target is <= 1.5) and with both (<= 3); and, per JSONL file, the bytes each
top-level field takes on disk as written (key, value and separator; uncompressed), so that
`links` against `markdown` is a figure, not a guess.
With `--as-gzip`, a plain output is measured as `compress=gzip` would have published it:
a copy whose published files are compressed by the crawler's own `compress_jsonl` (the
same bytes as a `compress=gzip` crawl of that run, without crawling the site twice).
With `--index-parts`, the search index's bytes per chunk by part (`index_parts`: sqlite's
`dbstat` pages of each table and its indexes, the vector files).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.question_sites import SITES_SCRIPT
from docscrawl.jsonl import dumps_value, jsonl_path, read_jsonl
from docscrawl.runs import published_dir
from docscrawl.seekjsonl import compress_jsonl
from docscrawl.vocab import OUTPUT_FILES

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SITES = ("flask-docs", "mkdocs-docs", "git-docs", "glib-docs", "pytest-docs",
                 "octave-manual")
FIELD_FILES = ("pages.jsonl", "structure.jsonl", "chunks.jsonl", "templates.jsonl")
STATE_FILES = ("state.sqlite3", "state.sqlite3-wal", "site_model.json")


def corpus_sites(script: Path = SITES_SCRIPT) -> dict[str, str]:
    """name -> start URL, from the corpus script."""
    listing = subprocess.run(["bash", str(script), "list"], capture_output=True,
                             text=True, check=True).stdout
    return {line.split()[0]: line.split()[1] for line in listing.splitlines() if line.strip()}


def crawl(url: str, out: Path, max_pages: int, extra: list[str]) -> None:
    """One crawl of the site into `out` (replaced), as a user runs it (an `extra`
    render=... comes after render=never: the last value of an argument is the one)."""
    subprocess.run(["rm", "-rf", str(out)], check=True)
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={url}",
               "-a", f"out={out}", "-a", "render=never", "-a", f"max_pages={max_pages}",
               "-s", "LOG_LEVEL=WARNING"]
    for arg in extra:
        command += ["-a", arg]
    subprocess.run(command, cwd=ROOT, check=True)


def field_bytes(record: dict[str, Any]) -> dict[str, int]:
    """Bytes of each top-level field in the record's JSON line: `"key":value,`."""
    return {key: len((dumps_value(key) + ":" + dumps_value(value)).encode("utf-8")) + 1
            for key, value in record.items()}


def html_bytes(run: Path) -> tuple[int, int]:
    """(bytes of every response body the crawl read, pages written)."""
    total = pages = 0
    for event in read_jsonl(jsonl_path(run, "crawl_log.jsonl")):
        if event.get("event") == "fetched":
            total += event.get("bytes") or 0
        elif event.get("event") in ("extracted", "unchanged"):
            pages += 1
    return total, pages


def measure(out: Path) -> dict[str, Any]:
    """The byte figures of one output folder."""
    run = published_dir(out)
    files = {path.name: path.stat().st_size for path in sorted(run.iterdir())
             if path.is_file()}
    state = {name: (out / name).stat().st_size for name in STATE_FILES
             if (out / name).is_file()}
    index = {path.name: path.stat().st_size for path in sorted(out.glob("search.*"))
             if path.is_file()}
    fields: dict[str, Counter[str]] = {}
    for name in FIELD_FILES:
        counts: Counter[str] = Counter()
        for record in read_jsonl(jsonl_path(run, name)):
            counts.update(field_bytes(record))
        if counts:
            fields[name] = counts
    html, pages = html_bytes(run)
    output = sum(files.values())
    return {"html": html, "pages": pages, "files": files, "state": state, "index": index,
            "fields": {name: dict(counts.most_common()) for name, counts in fields.items()},
            "output": output, "ratio_output": round(output / html, 2) if html else None,
            # a crawl without state= keeps its state in the output folder
            "ratio_no_index": round((output + sum(state.values())) / html, 2) if html else None,
            "ratio_all": (round((output + sum(state.values()) + sum(index.values())) / html, 2)
                          if html else None)}


# the search index's tables by part (a name not here is "other")
INDEX_PARTS = {"chunks": "chunk rows", "fts": "FTS index", "vocab": "vocab FTS",
               "pages": "pages, aliases, urls", "aliases": "pages, aliases, urls",
               "urls": "pages, aliases, urls", "sections": "sections", "meta": "meta"}


def index_parts(out: Path) -> dict[str, Any]:
    """Bytes per chunk of each part of `out`'s search index: the pages of its tables and
    their indexes (`dbstat`, page slack included), of which the compressed lines, and the
    vector files."""
    # read-write: a read-only connection to a WAL file leaves its 32 KB -shm behind
    db = sqlite3.connect(out / "search.sqlite3")
    try:
        chunks = int(db.execute("SELECT count(*) FROM chunks").fetchone()[0]) or 1
        parts: Counter[str] = Counter()
        for name, size in db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
            table = name.removeprefix("sqlite_autoindex_").rsplit("_1", 1)[0]
            parts[INDEX_PARTS.get(table.split("_")[0], "other")] += size
        parts["of chunk rows: the FTS rows"] = db.execute(
            "SELECT sum(length(rows)) FROM chunks").fetchone()[0] or 0
    finally:
        db.close()
    for path in out.glob("search.*.npy"):
        parts["vector files"] += path.stat().st_size
    return {"chunks": chunks, "per_chunk": {name: round(size / chunks)
                                            for name, size in parts.most_common()}}


def measure_gzipped(out: Path) -> dict[str, Any]:
    """The figures of `out` as `compress=gzip` publishes it (a compressed copy)."""
    with tempfile.TemporaryDirectory(prefix="bytes-gz-") as scratch:
        copy = Path(scratch) / out.name
        shutil.copytree(out, copy, symlinks=True)
        run = published_dir(copy)
        for name in OUTPUT_FILES:
            if (run / name).is_file():
                compress_jsonl(run / name)
        return measure(copy)


def mb(count: float) -> str:
    return f"{count / 1e6:.2f}"


def report(name: str, figures: dict[str, Any], top: int) -> str:
    """The per-site table, Markdown."""
    html, pages = figures["html"], max(figures["pages"], 1)
    lines = [f"### {name}: {figures['pages']} pages, HTML {mb(html)} MB, output "
             f"{mb(figures['output'])} MB ({figures['ratio_output']}x), with state "
             f"{figures['ratio_no_index']}x, with state and index {figures['ratio_all']}x",
             "", "| file | MB | bytes/page | x HTML |",
             "| --- | ---: | ---: | ---: |"]
    rows = {**figures["files"], **figures["state"], **figures["index"]}
    for file, size in sorted(rows.items(), key=lambda item: -item[1]):
        lines.append(f"| {file} | {mb(size)} | {size // pages:,} | "
                     f"{size / html if html else 0:.2f} |")
    for file, counts in figures["fields"].items():
        total = sum(counts.values())
        shown = ", ".join(f"{key} {value * 100 / total:.0f}%"
                          for key, value in list(counts.items())[:top])
        lines.append(f"\n{file} fields (of {mb(total)} MB uncompressed): {shown}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", nargs="*", help="corpus site names (default: "
                                                 f"{' '.join(DEFAULT_SITES)})")
    parser.add_argument("--outputs", type=Path, required=True,
                        help="directory of the outputs, OUTPUTS/NAME")
    parser.add_argument("--crawl", action="store_true", help="crawl each site first")
    parser.add_argument("--max-pages", type=int, default=400)
    parser.add_argument("--arg", action="append", default=[],
                        help="a spider argument for --crawl (NAME=VALUE), repeatable")
    parser.add_argument("--top", type=int, default=6, help="fields shown per file")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--as-gzip", action="store_true",
                        help="measure each output as compress=gzip would publish it")
    parser.add_argument("--index-parts", action="store_true",
                        help="also the search index's bytes per chunk by part")
    parser.add_argument("--sites-script", type=Path, default=SITES_SCRIPT,
                        help=f"the corpus script (default: {SITES_SCRIPT})")
    args = parser.parse_args(argv)
    names = args.sites or list(DEFAULT_SITES)
    known = corpus_sites(args.sites_script) if args.crawl else {}
    results: dict[str, Any] = {}
    for name in names:
        out = args.outputs / name
        if args.crawl:
            crawl(known[name], out, args.max_pages, args.arg)
        if not out.is_dir():
            print(f"{name}: no output at {out} (use --crawl)", file=sys.stderr)
            continue
        results[name] = measure_gzipped(out) if args.as_gzip else measure(out)
        print(report(name, results[name], args.top), end="\n\n")
        if args.index_parts and (out / "search.sqlite3").is_file():
            results[name]["index_parts"] = parts = index_parts(out)
            print(f"index per chunk ({parts['chunks']} chunks), bytes: " + ", ".join(
                f"{part} {size}" for part, size in parts["per_chunk"].items()), end="\n\n")
    html = sum(r["html"] for r in results.values())
    if html:
        output = sum(r["output"] for r in results.values())
        state = output + sum(sum(r["state"].values()) for r in results.values())
        everything = state + sum(sum(r["index"].values()) for r in results.values())
        print(f"total: HTML {mb(html)} MB, output {mb(output)} MB ({output / html:.2f}x), "
              f"with state {mb(state)} MB ({state / html:.2f}x), "
              f"with state and index {mb(everything)} MB ({everything / html:.2f}x)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
