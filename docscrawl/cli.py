"""The `docscrawl` console command: inspect crawl outputs.

    docscrawl summary OUT
    docscrawl log OUT [--event E] [--reason R] [--url PATTERN] [--json] [--limit N]
    docscrawl why OUT URL [--json]          (URL OUT is read too)
    docscrawl check OUT [--threshold NAME=VALUE ...] [--json]
    docscrawl report OUT -o report.html
    docscrawl merge OUT1 OUT2 ... -o OUT
    docscrawl search OUT [--version V] [-k N] [--json] [--] QUERY
    docscrawl context OUT [--version V] [--budget TOKENS] [--json] [--] QUESTION
    docscrawl index OUT [--rebuild]
    docscrawl mcp OUT [OUT ...]

Exit status: 0 on success, 1 when `check` finds a failing check, 2 on a usage error or
a missing or malformed output directory (one line on stderr).

`--` ends the options: what follows is an argument even when it starts with `-`
(`docscrawl search OUT -- --save-exact`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from docscrawl.inspect.output import OutputDir, OutputError, Progress
from docscrawl.search.cli import add_commands as add_search_commands
from docscrawl.terminal import for_terminal, json_text

if TYPE_CHECKING:
    from docscrawl.inspect.check import Thresholds

EXIT_OK, EXIT_FAILED_CHECK, EXIT_ERROR = 0, 1, 2
END_OF_OPTIONS = ("an argument that starts with '-' goes after '--', which ends the options: "
                  "docscrawl search OUT -- --save-exact")
SEARCH_COMMANDS = frozenset({"search", "context", "index", "mcp"})


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = Parser(prog="docscrawl", description="Inspect docscrawl output.",
                    epilog=END_OF_OPTIONS)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    summary = commands.add_parser("summary", help="what a crawl did and where its files are")
    summary.add_argument("out", type=Path, help="crawl output directory (holds run.json)")

    log = commands.add_parser("log", help="events, skip reasons and rules, failures, "
                                          "rendered pages, slowest fetches")
    log.add_argument("out", type=Path, help="crawl output directory")
    log.add_argument("--event", help="only events of this kind (skipped, failed, ...)")
    log.add_argument("--reason", help="only events with this reason (robots, http_404, ...)")
    log.add_argument("--url", metavar="PATTERN",
                     help="only URLs matching: a glob with * ? [ ], else a substring")
    log.add_argument("--limit", type=int, default=50,
                     help="matching events listed with a filter (0: all; default 50)")
    log.add_argument("--examples", type=int, default=3, help="example URLs per rule")
    log.add_argument("--top", type=int, default=10, help="slowest fetches shown")
    log.add_argument("--json", action="store_true", help="print JSON instead of text")

    why = commands.add_parser("why", help="the whole history of one URL",
                              usage="%(prog)s [-h] [--nearest N] [--json] OUT URL")
    why.add_argument("out", metavar="OUT", help="crawl output directory "
                     "(URL OUT, the other order, is read too)")
    why.add_argument("url", metavar="URL", help="the URL (as linked, any spelling)")
    why.add_argument("--nearest", type=int, default=5, help="nearest URLs listed when unknown")
    why.add_argument("--json", action="store_true", help="print JSON instead of text")

    check = commands.add_parser(
        "check", help="the extraction checks and a log invariant; exit 1 on failure")
    check.add_argument("out", type=Path, nargs="?", help="crawl output directory")
    check.add_argument("--threshold", "-t", action="append", default=[], metavar="NAME=VALUE",
                       help="override a threshold, e.g. min_heading_coverage=0.9 "
                            "(repeatable; names in `docscrawl check --help-thresholds`)")
    check.add_argument("--help-thresholds", action="store_true",
                       help="list thresholds and their defaults, then exit")
    check.add_argument("--json", action="store_true", help="print JSON instead of text")

    report = commands.add_parser("report", help="one self-contained HTML report")
    report.add_argument("out", type=Path, help="crawl output directory")
    report.add_argument("-o", "--output", type=Path, required=True, help="HTML file to write")
    report.add_argument("--threshold", "-t", action="append", default=[], metavar="NAME=VALUE")

    merge = commands.add_parser("merge", help="combine the part outputs of several workers")
    merge.add_argument("parts", type=Path, nargs="+", help="part output directories")
    merge.add_argument("-o", "--output", type=Path, required=True, help="merged output directory")
    merge.add_argument("--force", action="store_true",
                       help="replace the output in a non-empty -o directory "
                       "(never deletes a part nor other files)")
    add_search_commands(commands)
    return parser


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors about an argument that starts with `-` say
    how to pass one (`--`): a search for `--save-exact` otherwise reads as an option."""

    def error(self, message: str) -> NoReturn:
        if "required: query" in message or "unrecognized arguments: -" in message:
            message += f"; {END_OF_OPTIONS}"
        super().error(message)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.command in SEARCH_COMMANDS:
        from docscrawl.search.cli import run

        return run(args)
    progress = Progress(enabled=not args.quiet)
    try:
        return _dispatch(args, progress)
    except OutputError as exc:
        print(f"docscrawl: error: {for_terminal(str(exc))}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # `docscrawl log OUT | head`
        sys.stderr.close()
        return EXIT_OK


def _thresholds(values: list[str]) -> Thresholds:
    from docscrawl.inspect.check import Thresholds, parse_threshold

    thresholds = Thresholds()
    for value in values:
        try:
            parse_threshold(thresholds, value)
        except ValueError as exc:
            raise OutputError(str(exc)) from None
    return thresholds


def _emit(data: Any, as_json: bool, formatter: Callable[[Any], str]) -> None:
    """Print a command's result: crawled text inside is shown, never obeyed."""
    print(json_text(data, indent=2) if as_json else for_terminal(formatter(data)))


def _dispatch(args: argparse.Namespace, progress: Progress) -> int:
    # Imported here: `search` and `index` start without the extraction code `check` needs.
    from docscrawl.inspect.check import Thresholds, format_checks, run_checks
    from docscrawl.inspect.log import LogFilter, analyze_log, format_log
    from docscrawl.inspect.report import collect_report, render_report
    from docscrawl.inspect.summary import summarize
    from docscrawl.inspect.why import format_history, output_and_url, url_history

    if args.command == "summary":
        OutputDir(args.out)
        print(for_terminal(summarize(args.out)))
    elif args.command == "log":
        flt = LogFilter(reason=args.reason, event=args.event, url=args.url)
        data = analyze_log(OutputDir(args.out, progress=progress), flt, examples=args.examples,
                           top=args.top, limit=max(args.limit, 0))
        _emit(data, args.json, format_log)
    elif args.command == "why":
        out, url = output_and_url(args.out, args.url)
        history = url_history(OutputDir(out, progress=progress), url, nearest=args.nearest)
        _emit(history, args.json, format_history)
    elif args.command == "check":
        if args.help_thresholds:
            for name, value in vars(Thresholds()).items():
                print(f"{name}={value}")
            return EXIT_OK
        if args.out is None:
            raise OutputError("check: the output directory argument OUT is required")
        result = run_checks(OutputDir(args.out, progress=progress),
                             _thresholds(args.threshold))
        _emit(result, args.json, format_checks)
        return EXIT_OK if result["passed"] else EXIT_FAILED_CHECK
    elif args.command == "report":
        data = collect_report(OutputDir(args.out, progress=progress),
                              _thresholds(args.threshold))
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(render_report(data), encoding="utf-8")
        print(f"report written to {args.output}")
    elif args.command == "merge":
        # a part a worker left unfinished (killed) is read as it was left
        parts = [OutputDir(path, progress=progress, unfinished=True) for path in args.parts]
        # merge rebuilds the end of a crawl's site model (the extractors): imported only here, so
        # the other commands (search above all) start fast.
        from docscrawl.inspect.merge import merge_outputs

        run = merge_outputs(parts, args.output, force=args.force, progress=progress)
        print(f"merged {len(parts)} parts into {args.output}: {run['pages_written']} pages, "
              f"{run['chunks_written']} chunks, {run['counts']['events'].get('discovered', 0)} "
              "URLs discovered")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
