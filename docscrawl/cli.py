"""The `docscrawl` console command: inspect crawl outputs.

    docscrawl summary OUTPUT_DIR
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from docscrawl.summary import summarize


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="docscrawl", description="Inspect docscrawl output.")
    commands = parser.add_subparsers(dest="command", required=True)
    summary = commands.add_parser("summary", help="what a crawl did and where its files are")
    summary.add_argument("out", type=Path, help="crawl output directory (holds run.json)")
    args = parser.parse_args(argv)
    if args.command == "summary":
        if not (args.out / "run.json").is_file():
            print(f"docscrawl: error: no run.json in {args.out}", file=sys.stderr)
            return 2
        print(summarize(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
