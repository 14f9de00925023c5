"""The browser's guard proxy with real Chromium: a public crawl's browser never reaches a
private address, whatever the page asks for; a crawl of a loopback site renders through it.
(DNS rebinding itself, a name whose answer changes, is in tests/e2e/test_rebinding.py.)"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from docscrawl.discovery.browserproxy import REFUSED_HEADER, GuardProxy
from docscrawl.discovery.netguard import AddressGuard
from docscrawl.render.browser import launch_options

CHROMIUM = "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's Chromium")


class Intranet(BaseHTTPRequestHandler):
    """A private server that counts every request it gets."""

    def do_GET(self) -> None:
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        body = (b"<html><body><main><h1>Intranet</h1><p>Only for the intranet.</p>"
                b"<script>fetch('/api')</script></main></body></html>")
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def intranet() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Intranet)
    server.hits = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


async def browse(guard: AddressGuard, urls: list[str]) -> tuple[GuardProxy, list[Any]]:
    """Open each URL in Chromium launched behind a guard proxy; the responses (or errors)."""
    from playwright.async_api import async_playwright

    proxy = await GuardProxy(lambda: guard).start()
    options = launch_options(CHROMIUM)
    options["args"] += proxy.chromium_args()
    options["proxy"] = proxy.launch_proxy()
    results: list[Any] = []
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(**options)
            page = await browser.new_page()
            for url in urls:
                try:
                    response = await page.goto(url, timeout=15_000)
                    results.append((response.status, await response.all_headers(),
                                    await page.content()))
                except Exception as exc:  # a navigation error is an answer too
                    results.append(exc)
            await browser.close()
    finally:
        await proxy.close()
    return proxy, results


def test_a_public_crawls_browser_reaches_no_private_address(
        intranet: ThreadingHTTPServer) -> None:
    guard = AddressGuard("docs.example", resolve=lambda host: ["93.184.216.34"])
    assert guard.active
    port = intranet.server_address[1]
    urls = [f"http://127.0.0.1:{port}/a", f"http://localhost:{port}/b",
            f"http://[::ffff:127.0.0.1]:{port}/c"]
    proxy, results = asyncio.run(browse(guard, urls))
    assert intranet.hits == [], intranet.hits  # Chromium never connected directly
    assert proxy.connections >= len(urls)  # every request came through the proxy
    for url, result in zip(urls, results, strict=True):
        assert not isinstance(result, Exception), (url, result)
        status, headers, content = result
        assert status == 403 and REFUSED_HEADER.lower() in headers, (url, headers)
        assert "Only for the intranet." not in content
    assert guard.refused_at_connect("localhost") is not None


def test_a_loopback_crawl_renders_through_the_proxy(intranet: ThreadingHTTPServer) -> None:
    guard = AddressGuard("127.0.0.1")  # the crawl's own site is loopback: the guard is off
    assert not guard.active
    port = intranet.server_address[1]
    proxy, results = asyncio.run(browse(guard, [f"http://127.0.0.1:{port}/docs/"]))
    status, _, content = results[0]
    assert status == 200 and "Only for the intranet." in content
    assert intranet.hits[0] == "/docs/" and proxy.connections >= 1


async def ask_without_the_secret(port: int, heads: list[bytes]) -> list[bytes]:
    """Another local process using the crawl's proxy: the first line of each answer."""
    proxy = await GuardProxy(lambda: AddressGuard("127.0.0.1")).start()
    answers = []
    try:
        for head in heads:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(head.replace(b"PORT", str(port).encode()))
            await writer.drain()
            answers.append((await reader.read(4096)).split(b"\r\n", 1)[0])
            writer.close()
    finally:
        await proxy.close()
    assert proxy.unauthorized == len(heads)
    return answers


def test_the_proxy_serves_the_crawls_browser_alone(intranet: ThreadingHTTPServer) -> None:
    """With the guard off (a loopback crawl), the proxy is still no open proxy: a request
    without the browser's secret gets a 407 and reaches nothing."""
    port = intranet.server_address[1]
    answers = asyncio.run(ask_without_the_secret(port, [
        b"GET http://127.0.0.1:PORT/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"CONNECT 127.0.0.1:PORT HTTP/1.1\r\nHost: 127.0.0.1:PORT\r\n\r\n",
        b"GET http://127.0.0.1:PORT/y HTTP/1.1\r\nProxy-Authorization: Basic "
        b"ZG9jc2NyYXdsOmd1ZXNz\r\n\r\n",  # docscrawl:guess
    ]))
    assert answers == [b"HTTP/1.1 407 Proxy Authentication Required"] * 3
    assert intranet.hits == []
