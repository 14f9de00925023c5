"""A fault-injecting HTTP server on 127.0.0.1: one server, one path per fault.

Used by the hostile-input tests and `benchmarks/fault_suite.py`. `/docs/` links to every
fault page; `FAULTS` says what each path does and what the crawl log must say about it.

    python -m tests.support.faultserver --port 8780
"""

from __future__ import annotations

import argparse
import gzip
import html
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

PAGE = ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>"
        "</head><body><main><h1>{title}</h1><p>{text}</p></main></body></html>")


@dataclass(frozen=True, slots=True)
class Fault:
    """What a path does, and the crawl-log outcome expected for it."""

    path: str
    event: str
    reason: str | None
    note: str


FAULTS: tuple[Fault, ...] = (
    Fault("/docs/flaky-500", "extracted", None, "500 twice, then 200: retried with backoff"),
    Fault("/docs/flaky-502", "extracted", None, "502 once, then 200"),
    Fault("/docs/retry-after-429", "extracted", None, "429 with Retry-After: 1, then 200"),
    Fault("/docs/retry-after-503", "extracted", None, "503 with Retry-After: 1, then 200"),
    Fault("/docs/busy/", "extracted", None, "first and last of 12 links: 503, Retry-After: 1"),
    Fault("/docs/retry-after-long", "failed", "http_429", "429 asking for an hour: not waited"),
    Fault("/docs/always-500", "failed", "http_500", "500 every time: retries exhausted"),
    Fault("/docs/stall", "failed", "timeout", "headers never come: download timeout"),
    Fault("/docs/reset", "failed", "connection", "connection reset mid-body"),
    Fault("/docs/loop-a", "failed", "redirect_loop", "loop-a -> loop-b -> loop-a"),
    Fault("/docs/loop-b", "failed", "redirect_loop", "loop-b -> loop-a -> loop-b"),
    Fault("/docs/chain/0", "failed", "too_many_redirects", "a 25-hop redirect chain"),
    Fault("/docs/hops/0", "duplicate", "redirect", "13 hops to a page: followed"),
    Fault("/docs/to-missing", "failed", "http_404", "a redirect to a page that is not there"),
    Fault("/docs/to-forbidden", "skipped", "robots", "a redirect to a page robots.txt forbids"),
    Fault("/docs/to-page", "duplicate", "redirect", "a redirect to a page linked directly too"),
    Fault("/docs/empty", "failed", "empty_body", "200 with an empty body"),
    Fault("/docs/soft-404", "failed", "soft_404", "200 'Page not found' page"),
    Fault("/docs/huge", "skipped", "too_large", "60 MB streamed without Content-Length"),
    Fault("/docs/gzip-bomb", "skipped", "too_large", "100 MB of zeros gzipped to 100 kB"),
    Fault("/docs/binary", "skipped", "non_html", "random bytes served as text/html"),
    Fault("/docs/deep", "extracted", None, "HTML nested 20,000 levels deep"),
    Fault("/docs/malformed", "extracted", None, "unclosed tags, a stray </html> mid-page"),
    Fault("/docs/many-links", "extracted", None, "100,000 links"),
    Fault("/docs/shift-jis", "extracted", None, "Shift_JIS declared only in <meta charset>"),
    Fault("/docs/cp1252", "extracted", None, "windows-1252 declared only in <meta charset>"),
    Fault("/docs/bom", "extracted", None, "UTF-8 with a BOM and no declaration"),
    Fault("/docs/base", "extracted", None, "<base href> moves relative links"),
    Fault("/docs/based/target.html", "extracted", None, "reached only through <base href>"),
    Fault("/docs/schemes", "extracted", None, "javascript:, mailto:, data:, file: links"),
    Fault("/docs/calendar/2026/1", "extracted", None, "an infinite calendar (trap)"),
    Fault("/docs/cal/2026/1/", "extracted", None, "an endless calendar: months into years"),
    Fault("/docs/session;jsessionid=ABC123", "extracted", None, "a session id in the path"),
    Fault("/docs/elsewhere", "extracted", None, "links to another origin (localhost)"),
    Fault("/docs/forbidden/secret.html", "skipped", "robots", "disallowed by robots.txt"),
    Fault("/docs/redirect-elsewhere", "skipped", "offsite_redirect", "redirects to localhost"),
)
# The redirect cases, on their own index (`/docs/redirects/`: the distributed test).
# The crawl settings the fault site is crawled with. The download timeout leaves room for
# the reactor to be busy extracting a hostile page (100,000 links take seconds on a loaded
# machine, and a request in flight meanwhile must not time out); `stall` outlasts it.
FAULT_SETTINGS = {"DOWNLOAD_TIMEOUT": "8", "DOCSCRAWL_TRAP_PATTERN_LIMIT": "5",
                  "DOCSCRAWL_RETRY_BACKOFF": "0.1"}
STALL_SECONDS = 20

REDIRECT_FAULTS = tuple(f for f in FAULTS if f.path in (
    "/docs/loop-a", "/docs/loop-b", "/docs/chain/0", "/docs/hops/0", "/docs/to-missing",
    "/docs/to-forbidden", "/docs/to-page", "/docs/redirect-elsewhere", "/docs/bom"))
SHIFT_JIS_TEXT = "日本語のドキュメント"
CP1252_TEXT = "Café déjà vu – “quotes”"
HUGE_BYTES = 60 * 1024 * 1024
BOMB_BYTES = 100 * 1024 * 1024


class FaultHandler(BaseHTTPRequestHandler):
    """Dispatches on the path; records every request on the server."""

    server: FaultServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        self.server.record(path, dict(self.headers.items()))
        handler = ROUTES.get(path)
        if path in ("/robots.txt", "/robots-real.txt"):
            handler = robots_txt
        if handler is None and path.startswith("/docs/calendar/"):
            handler = calendar
        elif handler is None and path.startswith("/docs/cal/"):
            handler = year_calendar
        elif handler is None and path.startswith(("/docs/chain/", "/docs/hops/")):
            handler = chain
        elif handler is None and path.startswith(("/docs/gen/", "/docs/busy/page-")):
            handler = generated
        if handler is None:
            self.send_page(404, "Not here", "No such page.", status_text="Not Found")
            return
        handler(self, path)

    def end_headers(self) -> None:
        """Every response closes its connection. Over a kept-alive connection the crawler's
        HTTP pool (Twisted's) resends a GET by itself when the connection drops before the
        answer: one crawler attempt would then count as two requests here."""
        self.send_header("Connection", "close")
        self.close_connection = True
        super().end_headers()

    def send_bytes(self, status: int, body: bytes, *, content_type: str = "text/html",
                   headers: dict[str, str] | None = None) -> None:
        """One complete response."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def send_page(self, status: int, title: str, text: str, *, status_text: str = "",
                  headers: dict[str, str] | None = None) -> None:
        """An HTML page in UTF-8."""
        body = PAGE.format(title=title, text=text).encode("utf-8")
        self.send_bytes(status, body, content_type="text/html; charset=utf-8", headers=headers)

    def redirect(self, location: str) -> None:
        """A 302 to `location`."""
        self.send_bytes(302, b"", headers={"Location": location})

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


class FaultServer(ThreadingHTTPServer):
    """ThreadingHTTPServer with per-path hit counters and a request log."""

    daemon_threads = True

    def __init__(self, port: int = 0, *, robots: str = "plain", sitemap_urls: int = 0,
                 host: str = "127.0.0.1") -> None:
        """`robots`: plain, redirect (to /robots-real.txt) or huge (5 MB, a rule past
        500 KiB); `sitemap_urls` > 0 adds hostile sitemaps to robots.txt, the big one
        listing that many URLs. `host`: the address to listen on."""
        super().__init__((host, port), FaultHandler)
        self.robots = robots
        self.sitemap_urls = sitemap_urls
        self.hits: Counter[str] = Counter()
        self.requests: list[tuple[str, dict[str, str], float]] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()

    def record(self, path: str, headers: dict[str, str]) -> int:
        """Count a request; returns how many times the path was hit, this one included."""
        with self._lock:
            self.hits[path] += 1
            self.requests.append((path, headers, time.monotonic()))
            return self.hits[path]

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients hanging up are part of the game here."""

    @property
    def url(self) -> str:
        return f"http://{self.server_address[0]}:{self.server_address[1]}"


def index(h: FaultHandler, path: str) -> None:
    faults = REDIRECT_FAULTS if path == "/docs/redirects/" else FAULTS
    links = "".join(f'<li><a href="{f.path}">{html.escape(f.note)}</a></li>' for f in faults)
    body = PAGE.format(title="Fault index", text="Every fault.").replace(
        "</main>", f"<ul>{links}</ul></main>")
    h.send_bytes(200, body.encode("utf-8"), content_type="text/html; charset=utf-8")


def flaky(failures: int, status: int, retry_after: str | None = None) -> Callable[..., None]:
    def handle(h: FaultHandler, path: str) -> None:
        if h.server.hits[path] <= failures:
            headers = {"Retry-After": retry_after} if retry_after else None
            h.send_page(status, "Busy", "Try again.", headers=headers)
        else:
            h.send_page(200, f"Recovered {path.rsplit('/', 1)[-1]}", "It works after retrying.")
    return handle


def stall(h: FaultHandler, path: str) -> None:
    h.server.stopping.wait(STALL_SECONDS)  # bounded: the crawler's timeout fires first


def reset(h: FaultHandler, path: str) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.send_header("Content-Length", "100000")
    h.end_headers()
    h.wfile.write(b"<html><body><p>" + b"partial " * 500)
    h.wfile.flush()
    h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    h.close_connection = True
    h.connection.shutdown(socket.SHUT_RD)
    h.rfile.close()
    h.wfile.close()
    h.connection.close()  # linger 0: the kernel sends RST


def chain(h: FaultHandler, path: str) -> None:
    """/docs/chain/N: 25 hops to a page; /docs/hops/N: 13."""
    folder, hop = path.rsplit("/", 1)
    hops = 25 if folder.endswith("chain") else 13
    if int(hop) >= hops:
        h.send_page(200, "End of the chain", f"{hops} hops later.")
    else:
        h.redirect(f"{folder}/{int(hop) + 1}")


def huge(h: FaultHandler, path: str) -> None:
    h.send_response(200)
    h.send_header("Content-Type", "text/html")
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()
    chunk = b"<p>" + b"x" * 65530 + b"</p>"
    try:
        for _ in range(HUGE_BYTES // len(chunk)):
            h.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        h.wfile.write(b"0\r\n\r\n")
    except OSError:
        pass  # the crawler hung up: that is the point


def gzip_bomb(h: FaultHandler, path: str) -> None:
    h.send_bytes(200, BOMB, headers={"Content-Encoding": "gzip"})


def deep(h: FaultHandler, path: str) -> None:
    body = ("<html><head><title>Deep</title></head><body><main><h1>Deep</h1><p>Deep text.</p>"
            + "<div>" * 20000 + "bottom" + "</div>" * 20000 + "</main></body></html>")
    h.send_bytes(200, body.encode())


def many_links(h: FaultHandler, path: str) -> None:
    links = "".join(f'<a href="#s{n}">s{n}</a> <a href="/docs/paged?page={n % 150}">p</a>'
                    for n in range(50000))
    body = f"<html><head><title>Many links</title></head><body><main><h1>Many links</h1>{links}"
    h.send_bytes(200, (body + "</main></body></html>").encode())


def encoded(text: str, charset: str, title: str) -> Callable[..., None]:
    def handle(h: FaultHandler, path: str) -> None:
        body = (f'<html><head><meta charset="{charset}"><title>{title}</title></head>'
                f"<body><main><h1>{title}</h1><p>{text}</p></main></body></html>")
        h.send_bytes(200, body.encode(charset), content_type="text/html")
    return handle


def bom(h: FaultHandler, path: str) -> None:
    body = ("<html><head><title>BOM</title></head><body><main><h1>Byte order mark</h1>"
            "<p>Ünïcödé text after a BOM.</p></main></body></html>")
    h.send_bytes(200, b"\xef\xbb\xbf" + body.encode("utf-8"), content_type="text/html")


def calendar(h: FaultHandler, path: str) -> None:
    month = int(path.rsplit("/", 1)[-1])
    body = (f"<html><head><title>Calendar {month}</title></head><body><main>"
            f"<h1>Month {month}</h1><p>Events of month {month} of an endless calendar.</p>"
            f'<a href="/docs/calendar/2026/{month + 1}">next month</a></main></body></html>')
    h.send_bytes(200, body.encode())


def year_calendar(h: FaultHandler, path: str) -> None:
    """/docs/cal/<year>/<month>/: previous and next month, December rolls into January."""
    year, month = (int(part) for part in path.strip("/").split("/")[-2:])
    after = (year + 1, 1) if month == 12 else (year, month + 1)
    before = (year - 1, 12) if month == 1 else (year, month - 1)
    body = (f"<html><head><title>{year}-{month:02}</title></head><body><main>"
            f"<h1>Events of {year}-{month:02}</h1><p>Nothing happens in {month}/{year}.</p>"
            f'<a href="/docs/cal/{before[0]}/{before[1]}/">previous</a> '
            f'<a href="/docs/cal/{after[0]}/{after[1]}/">next</a></main></body></html>')
    h.send_bytes(200, body.encode())


def elsewhere(h: FaultHandler, path: str) -> None:
    other = f"http://localhost:{h.server.server_address[1]}"
    body = (f"<html><head><title>Elsewhere</title></head><body><main><h1>Elsewhere</h1>"
            f'<p><a href="{other}/docs/based/target.html">the same server under another '
            f'name</a> and <img src="{other}/docs/logo.png" alt="logo"></p></main></body></html>')
    h.send_bytes(200, body.encode())


def redirect_elsewhere(h: FaultHandler, path: str) -> None:
    h.redirect(f"http://localhost:{h.server.server_address[1]}/docs/session")


def rebind(h: FaultHandler, path: str) -> None:
    """Links to names whose DNS answer turns private (tests/e2e/rebinding.py)."""
    port = h.server.server_address[1]
    body = (f"<html><head><title>Rebinding</title></head><body><main><h1>Rebinding</h1>"
            f'<p><a href="http://rebind.test:{port}/docs/secret">a link</a> and '
            f'<a href="/docs/rebind-redirect">a redirect</a></p></main></body></html>')
    h.send_bytes(200, body.encode())


ROBOTS = "User-agent: *\nDisallow: /docs/forbidden/\n"
HOSTILE_SITEMAPS = ("/sitemap-laughs.xml", "/sitemap-xxe.xml", "/sitemap-offhost.xml",
                    "/sitemap-big.xml")


def robots_txt(h: FaultHandler, path: str) -> None:
    server = h.server
    if server.robots == "redirect" and path == "/robots.txt":
        h.send_bytes(301, b"", headers={"Location": "/robots-real.txt"})
        return
    text = ROBOTS
    if server.sitemap_urls:
        text += "".join(f"Sitemap: {server.url}{p}\n" for p in HOSTILE_SITEMAPS)
    if server.robots == "huge":
        filler = "# " + "x" * 1000 + "\n"
        text += filler * 600 + "Disallow: /docs/\n" + filler * 4400  # rule past 500 KiB
    h.send_bytes(200, text.encode(), content_type="text/plain")


LAUGHS = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
          + "".join(f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10 if i else "&lol;" * 10}">'
                    for i in range(10))
          + ']><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
          "<url><loc>&lol9;</loc></url></urlset>")
XXE = ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
       '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
       "<url><loc>http://127.0.0.1/docs/&xxe;</loc></url></urlset>")


def sitemap_big(h: FaultHandler, path: str) -> None:
    head = '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    urls = "".join(f"<url><loc>{h.server.url}/docs/gen/{n}</loc></url>"
                   for n in range(h.server.sitemap_urls))
    h.send_bytes(200, (head + urls + "</urlset>").encode(), content_type="application/xml")


def sitemap_offhost(h: FaultHandler, path: str) -> None:
    body = ('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            "<url><loc>http://other.example/docs/x</loc></url>"
            "<url><loc>file:///etc/passwd</loc></url></urlset>")
    h.send_bytes(200, body.encode(), content_type="application/xml")


def generated(h: FaultHandler, path: str) -> None:
    n = path.rsplit("/", 1)[-1]
    h.send_page(200, f"Generated page {n}", f"Listed in a sitemap of many URLs ({n}).")


def static(status: int, body: str | bytes, content_type: str = "text/html") -> Callable[..., None]:
    data = body.encode("utf-8") if isinstance(body, str) else body
    return lambda h, path: h.send_bytes(status, data, content_type=content_type)


BOMB = gzip.compress(b"\0" * BOMB_BYTES, compresslevel=9, mtime=0)
ROUTES: dict[str, Callable[[FaultHandler, str], None]] = {
    "/sitemap-laughs.xml": static(200, LAUGHS, "application/xml"),
    "/sitemap-xxe.xml": static(200, XXE, "application/xml"),
    "/sitemap-big.xml": sitemap_big,
    "/sitemap-offhost.xml": sitemap_offhost,
    "/docs/": index,
    "/docs/flaky-500": flaky(2, 500),
    "/docs/flaky-502": flaky(1, 502),
    "/docs/retry-after-429": flaky(1, 429, "1"),
    "/docs/retry-after-503": flaky(1, 503, "1"),
    "/docs/retry-after-long": flaky(99, 429, "3600"),
    "/docs/busy/": static(200, "<html><head><title>Busy</title></head><body><main><h1>Busy</h1>"
                               + "".join(f'<a href="{path}">{path}</a> ' for path in (
                                   "/docs/busy/a", *(f"/docs/busy/page-{n}" for n in range(10)),
                                   "/docs/busy/b")) + "</main></body></html>"),
    "/docs/busy/a": flaky(1, 503, "1"),
    "/docs/busy/b": flaky(1, 503, "1"),
    "/docs/always-500": flaky(99, 500),
    "/docs/stall": stall,
    "/docs/reset": reset,
    "/docs/loop-a": lambda h, p: h.redirect("/docs/loop-b"),
    "/docs/loop-b": lambda h, p: h.redirect("/docs/loop-a"),
    "/docs/to-missing": lambda h, p: h.redirect("/docs/missing-page"),
    "/docs/to-forbidden": lambda h, p: h.redirect("/docs/forbidden/secret.html"),
    "/docs/to-page": lambda h, p: h.redirect("/docs/bom"),
    "/docs/redirects/": index,
    "/docs/empty": static(200, b""),
    "/docs/soft-404": static(200, PAGE.format(title="Page not found",
                                              text="Sorry, nothing here.")),
    "/docs/huge": huge,
    "/docs/gzip-bomb": gzip_bomb,
    "/docs/binary": static(200, bytes(range(256)) * 64),
    "/docs/deep": deep,
    "/docs/malformed": static(200, "<html><head><title>Malformed</title><body><main><h1>Bad"
                                   " markup<p>Unclosed paragraph<ul><li>one<li>two</html>"
                                   "<p>After a stray end tag.</p><div><span>open"),
    "/docs/many-links": many_links,
    "/docs/shift-jis": encoded(SHIFT_JIS_TEXT, "shift_jis", "Shift JIS"),
    "/docs/cp1252": encoded(CP1252_TEXT, "windows-1252", "Windows 1252"),
    "/docs/bom": bom,
    "/docs/base": static(200, '<html><head><title>Base</title><base href="/docs/based/">'
                              '</head><body><main><h1>Base</h1><p><a href="target.html">'
                              "relative to base</a></p></main></body></html>"),
    "/docs/based/target.html": static(200, PAGE.format(title="Based target",
                                                       text="Found through base href.")),
    "/docs/schemes": static(200, "<html><head><title>Schemes</title></head><body><main>"
                                 "<h1>Schemes</h1><p><a href=\"javascript:alert(1)\">js</a>"
                                 '<a href="mailto:a@example.org">mail</a>'
                                 '<a href="data:text/html,hi">data</a>'
                                 '<a href="file:///etc/passwd">file</a>'
                                 '<a href="ftp://127.0.0.1/x">ftp</a></p></main></body></html>'),
    "/docs/session": static(200, PAGE.format(title="Session page",
                                             text="Linked with a session id.")),
    "/docs/elsewhere": elsewhere,
    "/docs/redirect-elsewhere": redirect_elsewhere,
    "/docs/rebind": rebind,
    "/docs/rebind-redirect": lambda h, p: h.redirect(
        f"http://rebind2.test:{h.server.server_address[1]}/docs/secret"),
    "/docs/rebind-js": lambda h, p: h.send_bytes(200, (
        "<html><head><title>Rebinding in the browser</title></head><body><main><h1>Rebinding"
        "</h1><p id='out'>Waiting.</p><script>fetch('http://rebind3.test:"
        f"{h.server.server_address[1]}/docs/secret').then(r => r.text()).then(t => "
        "document.getElementById('out').textContent = t)</script><iframe src='http://"
        f"rebind4.test:{h.server.server_address[1]}/docs/secret'></iframe><a href='http://"
        f"rebind5.test:{h.server.server_address[1]}/docs/secret'>a page</a></main></body></html>"
    ).encode()),
    "/docs/secret": static(200, PAGE.format(title="Secret", text="Only for the intranet.")),
    "/docs/paged": static(200, PAGE.format(title="Paged", text="One of many query pages.")),
}


class RunningFaultServer:
    """Context manager: a FaultServer in a daemon thread."""

    def __init__(self, port: int = 0, **options: Any) -> None:
        self.server = FaultServer(port, **options)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self.server

    def __exit__(self, *exc: object) -> None:
        self.server.stopping.set()
        self.server.shutdown()
        self.server.server_close()


def main(argv: list[str] | None = None) -> None:
    """Serve the faults until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    server = FaultServer(args.port)
    print(f"{server.url}/docs/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        time.sleep(0)
        server.server_close()


if __name__ == "__main__":
    main()
