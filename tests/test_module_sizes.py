"""No module outside `extract/` over 400 lines (issue 28; `search/` too):
a module that grows past it holds more than one job and is split by job."""

from __future__ import annotations

from pathlib import Path

import docscrawl

ROOT = Path(docscrawl.__file__).resolve().parent
MAX_LINES = 400
SIZED_ELSEWHERE = ("extract",)  # its own target (issue 28)


def test_no_module_over_400_lines() -> None:
    over = {}
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in SIZED_ELSEWHERE:
            continue
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            over[str(relative)] = lines
    assert not over, f"modules over {MAX_LINES} lines (split them by job): {over}"
