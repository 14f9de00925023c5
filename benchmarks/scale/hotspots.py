"""Summarise a py-spy raw (collapsed-stack) profile of a crawl: where the CPU went.

    py-spy record -r 100 --nonblocking -f raw -o crawl.txt -- \
        .venv/bin/python -m scrapy crawl docs -a site=http://127.0.0.1:PORT/ -a out=/tmp/o
    .venv/bin/python benchmarks/scale/hotspots.py crawl.txt [--top 40] [--match docscrawl]

Prints, as shares of all on-CPU samples: inclusive time per function (a function counted
once per sample however deep it recurs), self time per function, and inclusive time per
top-level docscrawl entry point (the outermost `docscrawl/` frame of each sample).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^():]+?)(?::(?P<line>\d+))?\)$")


def frame_name(frame: str) -> str:
    """`func (path/to/module.py:12)` -> `module.py:func`, the site-packages prefix cut."""
    match = FRAME.match(frame.strip())
    if not match:
        return frame.strip()
    path = match["file"]
    for cut in ("site-packages/", "/work/main/", "lib/python3.11/"):
        if cut in path:
            path = path.split(cut, 1)[1]
    return f"{path}:{match['func']}"


def load(path: Path) -> list[tuple[list[str], int]]:
    stacks = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            stacks.append(([frame_name(f) for f in stack.split(";")], int(count)))
    return stacks


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--match", default="", help="only functions whose name contains this")
    args = parser.parse_args(argv)
    stacks = load(args.profile)
    total = sum(count for _, count in stacks) or 1
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    entry: Counter[str] = Counter()
    for frames, count in stacks:
        for name in set(frames):
            inclusive[name] += count
        own[frames[-1]] += count
        outer = next((f for f in frames if f.startswith("docscrawl/")
                      and not f.startswith("docscrawl/commands/")), "(outside docscrawl)")
        entry[outer] += count
    print(f"{total} samples\n\n## inclusive")
    for name, count in inclusive.most_common():
        if args.match in name:
            print(f"{100 * count / total:6.1f}%  {name}")
            args.top -= 1
            if args.top <= 0:
                break
    print("\n## self")
    for name, count in own.most_common(25):
        print(f"{100 * count / total:6.1f}%  {name}")
    print("\n## outermost docscrawl frame")
    for name, count in entry.most_common(25):
        print(f"{100 * count / total:6.1f}%  {name}")


if __name__ == "__main__":
    main()
