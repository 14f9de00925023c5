"""The incremental benchmark runs end to end (its correctness checks, not its timings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.e2e


def test_incremental_benchmark_quick_run(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "incremental.py"), "--pages", "60",
         "--change", "3", "--site", "small", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    figures = json.loads((out / "incremental.json").read_text(encoding="utf-8"))
    assert [run["changes"] for run in figures["runs"]] == [
        {"added": 61}, {"unchanged": 61}, {"unchanged": 58, "changed": 3}]
    assert figures["checks"]["exactly_the_edited_pages_changed"] is True
    assert figures["checks"]["chunks_to_add_only_from_edited_pages"] is True
    assert all(run["cpu_s"] > 0 for run in figures["runs"])
    assert "CPU ratio" in result.stdout
