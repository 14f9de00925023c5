"""`wait_for_content` with real Chromium: a fetch in flight keeps the wait open, so an
article whose second half arrives late is read whole; an idle page is read without that
wait. The page is served by a real HTTP server on 127.0.0.1 that holds the late part until
the test releases it (no timing involved in what the page shows)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from docscrawl.render.browser import DEBIAN_CHROMIUM, launch_options

pytestmark = pytest.mark.skipif(not Path(DEBIAN_CHROMIUM).exists(),
                                reason="needs Debian's Chromium")

FIRST = "The first half of the article is written by the page's script at once. " * 5
PAGE = f"""<!DOCTYPE html><html><head><title>Late</title></head><body><main id="m"></main>
<script>
document.getElementById("m").innerHTML = "<h1>Article</h1><p>{FIRST}</p>";
fetch("/late").then((r) => r.text()).then((t) => {{
  document.getElementById("m").insertAdjacentHTML("beforeend", t);
}});
</script></body></html>""".encode()
LATE = b'<p id="late">The second half came from a slow fetch.</p>'


class Held(BaseHTTPRequestHandler):
    """`/` is the page; `/late` answers once the test sets `release`."""

    def do_GET(self) -> None:
        server: Any = self.server
        if self.path == "/late":
            server.arrived.set()
            server.release.wait(60)
            body = LATE
        else:
            body = PAGE
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def held() -> Iterator[Any]:
    server: Any = ThreadingHTTPServer(("127.0.0.1", 0), Held)
    server.arrived, server.release = threading.Event(), threading.Event()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()


async def render(url: str, server: Any, *, hold_s: float, busy_ms: int) -> str:
    """The page's HTML as `wait_for_content` (settle 50 ms) left it; `/late` is held until
    the fetch has arrived and `hold_s` more seconds (10x the settle time) have passed."""
    from playwright.async_api import async_playwright

    from docscrawl.render.playwright_handler import TRACK_REQUESTS_JS, wait_for_content

    async with async_playwright() as driver:
        browser = await driver.chromium.launch(**launch_options(DEBIAN_CHROMIUM))
        page = await browser.new_page()
        await page.add_init_script(TRACK_REQUESTS_JS)
        await page.goto(url)

        async def read() -> str:
            await wait_for_content(page, None, 50, 60_000, 200, busy_ms=busy_ms)
            return await page.content()

        reading = asyncio.ensure_future(read())
        await asyncio.to_thread(server.arrived.wait, 60)
        await asyncio.sleep(hold_s)  # time enough for a wait that ignores the fetch to end
        server.release.set()
        html = await reading
        await browser.close()
    return html


def test_a_fetch_in_flight_keeps_the_wait_open(held: Any) -> None:
    html = asyncio.run(render(f"http://127.0.0.1:{held.server_port}/", held, hold_s=0.5,
                              busy_ms=60_000))
    assert FIRST.strip() in html
    assert 'id="late"' in html
