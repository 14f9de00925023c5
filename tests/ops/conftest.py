"""A real Scrapyd on a free 127.0.0.1 port, started from a temporary home directory."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

BIN = Path(sys.executable).parent
DEPLOY = ROOT / "deploy"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read().decode("utf-8"))


class Scrapyd:
    """One running scrapyd: its URL, home directory and process."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        conf = (DEPLOY / "scrapyd.conf").read_text(encoding="utf-8")
        lines = [f"http_port     = {self.port}" if line.startswith("http_port") else line
                 for line in conf.splitlines()]
        (home / "scrapyd.conf").write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.out = (home / "scrapyd.out").open("w")
        # As a user runs it: from the virtualenv, nothing on PYTHONPATH (which would come
        # before the deployed egg on the jobs' path).
        env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        self.process = subprocess.Popen([str(BIN / "scrapyd"), "--pidfile=", "-l", "scrapyd.log"],
                                        cwd=home, stdout=self.out, stderr=subprocess.STDOUT,
                                        env=env)

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"scrapyd exited: {(self.home / 'scrapyd.out').read_text()}")
            try:
                if get_json(f"{self.url}/daemonstatus.json")["status"] == "ok":
                    return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError("scrapyd did not answer daemonstatus.json in time")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.out.close()


@pytest.fixture(scope="session")
def scrapyd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scrapyd]:
    """A Scrapyd configured by deploy/scrapyd.conf (only the port changed)."""
    server = Scrapyd(tmp_path_factory.mktemp("scrapyd-home"))
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def project_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files scrapyd-deploy packs, copied so the egg build leaves the work tree alone."""
    dest = tmp_path_factory.mktemp("project")
    for name in ("scrapy.cfg", "setup.py", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "docscrawl", dest / "docscrawl",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest
