"""`python -m docscrawl.demo.run` from a package installed without its checkout (what
`pip install .` gives): one line saying where the demo lives, exit status 2."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_demo_without_its_site_says_so_in_one_line(tmp_path: Path) -> None:
    site_packages = tmp_path / "site-packages"
    shutil.copytree(ROOT / "docscrawl", site_packages / "docscrawl",
                    ignore=shutil.ignore_patterns("__pycache__"))
    run = subprocess.run([sys.executable, "-m", "docscrawl.demo.run", "--port", "0"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(site_packages)})
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "make demo" in lines[0], run.stderr
    assert "Traceback" not in run.stderr
