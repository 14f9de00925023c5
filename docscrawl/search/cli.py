"""`docscrawl search`, `docscrawl index` and `docscrawl mcp`: argument parsing and output.

    docscrawl search OUT [--version V] [-k N] [--json] [--embedder NAME] [--] QUERY
    docscrawl context OUT [--version V] [--budget TOKENS] [--json] [--embedder NAME] [--] QUESTION
    docscrawl index OUT [--rebuild] [--embedder NAME]
    docscrawl mcp OUT [OUT ...] [--embedder NAME]
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

from docscrawl.search.context import (
    DEFAULT_BUDGET,
    ContextError,
    build_context,
    check_question,
    format_context,
)
from docscrawl.search.hits import Result, section_label
from docscrawl.search.index import IndexError_, SearchIndex, remove_index
from docscrawl.search.rank import Searcher, VersionError
from docscrawl.terminal import for_terminal, json_text

EMBEDDER_HELP = ("semantic model: wordllama (default), minilm[:TOKENS][@BACKEND], "
                 "wordllama+minilm (chunk vectors + one MiniLM vector per section; "
                 "BACKEND numpy, onnx-fp32 or onnx-int8, the last two with onnxruntime, "
                 "onnx-int8 by default where it is installed), sentence-transformers:NAME, "
                 "fastembed:NAME or none (env DOCSCRAWL_EMBEDDER)")


def add_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """Register the search subcommands on the `docscrawl` parser."""
    search = commands.add_parser(
        "search", help="search a crawl's chunks, with citations",
        usage="%(prog)s [-h] [--version V] [-k N] [--json] [--embedder NAME] OUT [--] QUERY",
        epilog="A query that starts with '-' goes after '--', which ends the options: "
               "docscrawl search OUT -- --save-exact")
    search.add_argument("out", type=Path, help="crawl output directory")
    search.add_argument("query", help="the question, identifier or command (one that "
                                      "starts with '-': after '--')")
    search.add_argument("--version", dest="doc_version", metavar="V",
                        help="only this documentation version (filtered before ranking; "
                             "18.20.4, v18 or 18 name a crawl's v18.20.4)")
    search.add_argument("-k", type=int, default=5, metavar="N", help="results (default 5)")
    search.add_argument("--json", action="store_true",
                        help="one JSON object per result (with no_good_match)")
    search.add_argument("--embedder", help=EMBEDDER_HELP)

    context = commands.add_parser(
        "context", help="the best sections for a question within a token budget, cited",
        usage="%(prog)s [-h] [--version V] [--budget TOKENS] [--json] [--embedder NAME] "
              "OUT [--] QUESTION")
    context.add_argument("out", type=Path, help="crawl output directory")
    context.add_argument("query", metavar="question", help="the question (one that starts "
                                                          "with '-': after '--')")
    context.add_argument("--version", dest="doc_version", metavar="V",
                         help="only this documentation version (as search's --version)")
    context.add_argument("--budget", type=int, default=DEFAULT_BUDGET, metavar="TOKENS",
                         help=f"tokens of section text at most (default {DEFAULT_BUDGET})")
    context.add_argument("--json", action="store_true", help="one JSON object")
    context.add_argument("--embedder", help=EMBEDDER_HELP)

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
        if args.command == "context":
            return _context(args)
        from docscrawl.search.mcp import serve

        serve(args.outs, embedder=args.embedder)
        return 0
    except (IndexError_, VersionError, ContextError) as exc:
        print(f"docscrawl: error: {for_terminal(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `docscrawl context OUT "..." | head`
        sys.stderr.close()
        return 0


def _search(args: argparse.Namespace) -> int:
    query = check_question(args.query)  # before the index is opened (a build can take a while)
    index = SearchIndex.open(args.out, embedder=args.embedder)
    result = Searcher(index).search(query, version=args.doc_version, k=max(args.k, 1))
    if args.json:
        for hit in result.hits:
            print(json_text({**hit.as_json(), "no_good_match": result.no_good_match,
                             "query_match": round(result.match, 3)}))
    else:
        print(for_terminal(format_result(result)))
    return 0


def _context(args: argparse.Namespace) -> int:
    if args.budget < 1:  # before the index is opened (a build can take a while)
        raise ContextError(f"the budget must be a positive number of tokens (got {args.budget})")
    index = SearchIndex.open(args.out, embedder=args.embedder)
    context = build_context(Searcher(index), args.query, version=args.doc_version,
                            budget=args.budget)
    if args.json:
        print(json_text(context.as_json()))
    else:
        print(for_terminal(format_context(context)))
    return 0


def _index(args: argparse.Namespace) -> int:
    if args.rebuild:
        remove_index(args.out)
    index = SearchIndex.open(args.out, embedder=args.embedder, update=False)
    built = index.refresh()
    print(f"{args.out}/search.sqlite3: {built.total} chunks ({built.added} added, "
          f"{built.deleted} deleted, {built.relinked} with new inbound links); "
          f"embedder {_embedder_label(index)}")
    return 0


def _embedder_label(index: SearchIndex) -> str:
    """The chunk model, and the section model with its backend when there is one."""
    if index.embedder is None:
        return "none"
    return index.embedder.name + (f" + sections {index.sections.key}" if index.sections else "")


def snippet(text: str, width: int = 240) -> str:
    """The start of a chunk's Markdown on one line."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def format_result(result: Result) -> str:
    """Human output: rank, title › heading path, version, URL#anchor, snippet; a line
    first when none of them matches well."""
    lines = [f"# {result.note()}"]
    weak = result.match_note()
    if weak:
        lines.append(f"# {weak}")
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
