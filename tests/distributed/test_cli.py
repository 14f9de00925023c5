"""`python -m docscrawl.distributed`: the on-call view of a shared crawl."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from docscrawl.distributed import SharedFrontier, main
from tests.conftest import ROOT


def test_status_and_reset(shared: SharedFrontier, capsys: pytest.CaptureFixture[str]) -> None:
    shared.push({"url": "https://docs.example/"})
    common = ["--redis-url", _url(shared), "--crawl-key", shared.crawl_key]
    assert main(["status", *common]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["pending"], status["started"], status["finished"]) == (1, True, False)
    assert main(["reset", *common]) == 2  # needs --yes
    assert "--yes" in capsys.readouterr().err
    assert main(["reset", *common, "--yes"]) == 0
    assert shared.pending() == 0


def test_unreachable_redis_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "--redis-url", "redis://127.0.0.1:1/0", "--crawl-key", "k"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("docscrawl.distributed: ") and "\n" not in err


def test_module_imports_no_scrapy() -> None:
    code = "import sys, docscrawl.distributed; print('scrapy' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, check=True)
    assert result.stdout.strip() == "False"


def _url(shared: SharedFrontier) -> str:
    kwargs = shared.redis.connection_pool.connection_kwargs
    return f"redis://{kwargs['host']}:{kwargs['port']}/{kwargs.get('db', 0)}"
