"""A small static HTTP server for fixture sites, used by `make demo` and the tests.

    python -m docscrawl.demo.server fixtures/sites/demo --port 8765

Serves files like nginx does (`dir/` -> `dir/index.html`, `dir` -> 301 `dir/`), and reads
`_routes.json` at the site root for paths that must misbehave on purpose:

    {"/v2/old/": {"status": 301, "location": "/v2/new/"},
     "/robots.txt": {"status": 503},
     "/v2/big.html": {"status": 200, "repeat": "<p>filler</p>", "times": 100000}}

A route may give `status`, `location`, `headers`, `body`, `content_type`, `repeat`+`times`.
`{{ORIGIN}}` in served HTML, XML and text files (gzipped ones too) becomes the origin the
client asked for, so sitemaps and canonical links can be absolute whatever the port.
Requests in proxy form (`GET http://host/path`) are served from the same tree, which lets a
test pose as a public host. Every request is recorded (method, URL path, user-agent).
"""

from __future__ import annotations

import argparse
import gzip
import json
import mimetypes
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

mimetypes.add_type("application/gzip", ".gz")
mimetypes.add_type("text/markdown", ".md")
mimetypes.add_type("text/plain", ".txt")
TEMPLATED_SUFFIXES = frozenset({".html", ".xml", ".txt", ".gz"})


class FixtureHandler(SimpleHTTPRequestHandler):
    """Static files plus the routes table; quiet; records requests on the server."""

    server: FixtureServer

    def do_GET(self) -> None:
        self._serve(head=False)

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def _serve(self, *, head: bool) -> None:
        parts = urlsplit(self.path)
        path = parts.path or "/"
        self.server.record(self.command, path, self.headers.get("User-Agent", ""),
                           self.headers.get("Host", ""))
        route = self.server.routes.get(path)
        if route is not None:
            self._send_route(route, head=head)
            return
        self.path = path + (f"?{parts.query}" if parts.query else "")
        origin = f"{parts.scheme}://{parts.netloc}" if parts.netloc else (
            f"http://{self.headers.get('Host') or self.server.url.split('://', 1)[1]}")
        if self._send_templated(origin, head=head):
            return
        if head:
            super().do_HEAD()
        else:
            super().do_GET()

    def _send_templated(self, origin: str, *, head: bool) -> bool:
        """Serve a file holding `{{ORIGIN}}` with the origin filled in; False if none."""
        local = Path(self.translate_path(self.path))
        if local.is_dir():
            local = local / "index.html"
        if local.suffix not in TEMPLATED_SUFFIXES or not local.is_file():
            return False
        raw = local.read_bytes()
        zipped = local.suffix == ".gz"
        text = gzip.decompress(raw) if zipped else raw
        if b"{{ORIGIN}}" not in text:
            return False
        if local.name == "index.html" and not self.path.split("?", 1)[0].endswith(
                ("/", "index.html")):
            return False  # let the base class send its directory redirect
        data = text.replace(b"{{ORIGIN}}", origin.encode("ascii"))
        data = gzip.compress(data, mtime=0) if zipped else data
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(local)))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not head:
            self.wfile.write(data)
        return True

    def _send_route(self, route: dict[str, Any], *, head: bool) -> None:
        body = route.get("body", "")
        if "repeat" in route:
            body = route["repeat"] * int(route.get("times", 1))
        data = body.encode("utf-8") if isinstance(body, str) else bytes(body)
        self.send_response(int(route.get("status", 200)))
        if "location" in route:
            self.send_header("Location", route["location"])
        self.send_header("Content-Type", route.get("content_type", "text/html; charset=utf-8"))
        self.send_header("Content-Length", str(len(data)))
        for name, value in (route.get("headers") or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request stderr lines."""


class FixtureServer(ThreadingHTTPServer):
    """ThreadingHTTPServer that knows its routes and keeps a request log."""

    daemon_threads = True

    def __init__(self, root: Path, routes: dict[str, dict[str, Any]], port: int = 0) -> None:
        self.root = root
        self.routes = routes
        self.requests: list[tuple[str, str, str, str]] = []
        self.times: list[float] = []  # time.monotonic() of each request, same order
        self._lock = threading.Lock()
        super().__init__(("127.0.0.1", port), partial(FixtureHandler, directory=str(root)))

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up mid-response (a killed crawler) is not an error here."""

    def record(self, method: str, path: str, user_agent: str, host: str) -> None:
        """Remember one request."""
        with self._lock:
            self.requests.append((method, path, user_agent, host))
            self.times.append(time.monotonic())

    @property
    def paths(self) -> list[str]:
        """Paths requested so far, in order."""
        with self._lock:
            return [path for _, path, _, _ in self.requests]

    @property
    def url(self) -> str:
        """Base URL, e.g. `http://127.0.0.1:40123`."""
        return f"http://127.0.0.1:{self.server_address[1]}"


class StaticSite:
    """Context manager running a FixtureServer in a daemon thread."""

    def __init__(self, root: Path, *, routes: dict[str, dict[str, Any]] | None = None,
                 port: int = 0) -> None:
        merged = load_routes(root)
        merged.update(routes or {})
        self.server = FixtureServer(root, merged, port)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FixtureServer:
        self._thread.start()
        return self.server

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def load_routes(root: Path) -> dict[str, dict[str, Any]]:
    """The `_routes.json` table of a fixture site, or an empty one."""
    path = root / "_routes.json"
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> None:
    """Serve a fixture site until interrupted; prints its URL."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    if not args.root.is_dir():
        parser.error(f"not a directory: {args.root}")
    server = FixtureServer(args.root.resolve(), load_routes(args.root), args.port)
    print(server.url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
