"""An HTTP server on 127.0.0.1 that wants credentials: for the tests that check where the
crawl's secrets go (tests/e2e/test_secrets.py, tests/ops/test_scrapyd.py)."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

USER, PASSWORD, API_KEY = "alice", "pw-9f3a61c2e5", "key-b7d04e18aa"
BASIC = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
SECRETS = (PASSWORD, API_KEY, BASIC.split()[1])
PAGE = ("<!DOCTYPE html><html lang='en'><head><title>{0}</title></head><body><main>"
        "<h1>{0}</h1><p>{1}</p>{2}</main></body></html>")


class AuthHandler(BaseHTTPRequestHandler):
    """Basic auth and X-Api-Key required everywhere. Of a.html and b.html, the first one
    asked for answers 503 once (`Retry-After: 0`: retried at once); the first request
    for the other is held until the test releases it, so that the retry, ranked below
    it, waits in Scrapy's queue meanwhile."""

    server: AuthServer

    def do_GET(self) -> None:
        server, path = self.server, self.path
        authorized = (self.headers.get("Authorization") == BASIC
                      and self.headers.get("X-Api-Key") == API_KEY)
        with server.lock:
            server.requests.append((path, authorized))
            first = path not in server.answered
            server.answered.add(path)
            if path in ("/docs/a.html", "/docs/b.html") and first:
                role = "fail" if server.failed is None else "hold"
                server.failed = server.failed or path
            else:
                role = "serve"
        if not authorized:
            self.send(401, "Who are you?", headers={"WWW-Authenticate": 'Basic realm="d"'})
        elif path == "/docs/":
            self.send(200, PAGE.format("Docs", "The documentation's first page. " * 12,
                                       "<a href='a.html'>A</a> <a href='b.html'>B</a>"))
        elif path in ("/docs/a.html", "/docs/b.html") and role == "fail":
            self.send(503, "Busy", headers={"Retry-After": "0"})
        elif path in ("/docs/a.html", "/docs/b.html"):
            if role == "hold":
                server.holding.set()
                server.release.wait(120)
            name = path.rsplit("/", 1)[1]
            self.send(200, PAGE.format(name, f"The text of {name}. " * 20, ""))
        else:
            self.send(404, "Not here")

    def send(self, status: int, body: str, *, headers: dict[str, str] | None = None) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


class AuthServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), AuthHandler)
        self.lock = threading.Lock()
        self.requests: list[tuple[str, bool]] = []
        self.answered: set[str] = set()
        self.failed: str | None = None
        self.holding = threading.Event()
        self.release = threading.Event()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A crawl that hangs up is no error here."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@contextmanager
def running_auth_server() -> Iterator[AuthServer]:
    """An AuthServer in a daemon thread; held requests are let go when it stops."""
    server = AuthServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()


def secret_hits(*roots: Path) -> list[tuple[str, str]]:
    """(file, secret) for every file under `roots` holding a secret, in any form."""
    hits = []
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                hits += [(str(path), s) for s in SECRETS if s.encode() in data]
    return hits
