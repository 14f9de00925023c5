"""`docscrawl search`, `docscrawl index` and `docscrawl mcp`: argument parsing and output.

    docscrawl search OUT QUERY [--version V] [-k N] [--json] [--embedder NAME]
    docscrawl index OUT [--rebuild] [--embedder NAME]
    docscrawl mcp OUT [OUT ...] [--embedder NAME]
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from docscrawl.search.index import IndexError_, SearchIndex, remove_index
from docscrawl.search.rank import Result, Searcher, VersionError, section_label

EMBEDDER_HELP = ("semantic model: wordllama (default), sentence-transformers:NAME, "
                 "fastembed:NAME or none (env DOCSCRAWL_EMBEDDER)")


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the search subcommands on the `docscrawl` parser."""
    search = commands.add_parser("search", help="search a crawl's chunks, with citations")
    search.add_argument("out", type=Path, help="crawl output directory")
    search.add_argument("query", help="the question, identifier or command")
    search.add_argument("--version", dest="doc_version", metavar="V",
                        help="only this documentation version (filtered before ranking)")
    search.add_argument("-k", type=int, default=5, help="results (default 5)")
    search.add_argument("--json", action="store_true", help="one JSON object per result")
    search.add_argument("--embedder", help=EMBEDDER_HELP)

    index = commands.add_parser("index", help="build or update the search index of a crawl")
    index.add_argument("out", type=Path, help="crawl output directory")
    index.add_argument("--rebuild", action="store_true", help="start from an empty index")
    index.add_argument("--embedder", help=EMBEDDER_HELP)

    mcp = commands.add_parser("mcp", help="serve crawls to assistants over MCP (stdio)")
    mcp.add_argument("outs", type=Path, nargs="+", help="crawl output directories")
    mcp.add_argument("--embedder", help=EMBEDDER_HELP)


def run(args: argparse.Namespace) -> int:
    """Run one search subcommand; errors become one line on stderr and exit status 2."""
    try:
        if args.command == "search":
            return _search(args)
        if args.command == "index":
            return _index(args)
        from docscrawl.search.mcp import serve

        serve(args.outs, embedder=args.embedder)
        return 0
    except (IndexError_, VersionError) as exc:
        print(f"docscrawl: error: {exc}", file=sys.stderr)
        return 2


def _search(args: argparse.Namespace) -> int:
    index = SearchIndex.open(args.out, embedder=args.embedder)
    result = Searcher(index).search(args.query, version=args.doc_version, k=max(args.k, 1))
    if args.json:
        for hit in result.hits:
            print(json.dumps(hit.as_json(), ensure_ascii=False))
    else:
        print(format_result(result))
    return 0


def _index(args: argparse.Namespace) -> int:
    if args.rebuild:
        remove_index(args.out)
    index = SearchIndex.open(args.out, embedder=args.embedder, update=False)
    built = index.refresh()
    print(f"{args.out}/search.sqlite3: {built.total} chunks ({built.added} added, "
          f"{built.deleted} deleted, {built.relinked} with new inbound links); "
          f"embedder {index.embedder.name if index.embedder else 'none'}")
    return 0


def snippet(text: str, width: int = 240) -> str:
    """The start of a chunk's Markdown on one line."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def format_result(result: Result) -> str:
    """Human output: rank, title › heading path, version, URL#anchor, snippet."""
    lines = [f"# {result.note()}"]
    if not result.hits:
        lines.append("no results")
    for rank, hit in enumerate(result.hits, 1):
        meta = hit.meta
        path = section_label(meta)
        version = meta.get("version") or "unversioned"
        lines.append(f"{rank}. {path}  [{version}]")
        lines.append(f"   {hit.url()}")
        lines.append(textwrap.indent(snippet(str(hit.record.get("markdown") or "")), "   "))
    return "\n".join(lines)
