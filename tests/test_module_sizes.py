"""No module outside `extract/` over 400 lines (`search/` included), none inside `extract/`
over 600 (issue 28): a module that grows past it holds more than one job and is split by
job."""

from __future__ import annotations

from pathlib import Path

import docscrawl

ROOT = Path(docscrawl.__file__).resolve().parent
MAX_LINES = 400
MAX_EXTRACT_LINES = 600  # extraction rules run long: one rule family per module
SIZED_ELSEWHERE = ("extract",)  # its own limit, below


def _over(paths: list[Path], limit: int) -> dict[str, int]:
    """Modules among `paths` longer than `limit` lines, by path relative to the package."""
    over = {}
    for path in paths:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            over[str(path.relative_to(ROOT))] = lines
    return over


def test_no_module_over_400_lines() -> None:
    paths = [
        path for path in sorted(ROOT.rglob("*.py"))
        if path.relative_to(ROOT).parts[0] not in SIZED_ELSEWHERE
    ]
    over = _over(paths, MAX_LINES)
    assert not over, f"modules over {MAX_LINES} lines (split them by job): {over}"


def test_no_extract_module_over_600_lines() -> None:
    paths = sorted((ROOT / "extract").rglob("*.py"))
    assert paths
    over = _over(paths, MAX_EXTRACT_LINES)
    assert not over, f"extract/ modules over {MAX_EXTRACT_LINES} lines (split them by job): {over}"
