"""Response heads are bounded like bodies: a server that answers with megabytes of headers
ends `skipped` `too_large` and never holds them all in the crawl's memory."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CrawlOutput, run_crawl

PAGE = ("<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>"
        + "An ordinary page of documentation with enough words to be one. " * 6
        + "</p>{links}</main></body></html>")
HEADER_LINES = 2_000  # x 8 KiB: 16 MB of headers


class RawServer:
    """An HTTP/1.0 server on 127.0.0.1 written on a socket, so that it can send a head no
    HTTP library would; counts the bytes of head it managed to send per path."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.head_sent: dict[str, int] = {}
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            request = conn.recv(65536).decode("latin-1")
            path = request.split(" ", 2)[1] if " " in request else "/"
            if path == "/docs/":
                body = PAGE.format(title="Index", links=(
                    "<a href='/docs/huge-head'>huge</a> <a href='/docs/fine'>fine</a>"))
            elif path == "/docs/fine":
                body = PAGE.format(title="Fine", links="")
            elif path == "/docs/huge-head":
                body = PAGE.format(title="Huge head", links="")
                sent = 0
                try:
                    conn.sendall(b"HTTP/1.0 200 OK\r\n")
                    line = b"X-Filler: " + b"a" * 8180 + b"\r\n"
                    for _ in range(HEADER_LINES):
                        conn.sendall(line)
                        sent += len(line)
                except OSError:
                    pass
                self.head_sent[path] = sent
                return
            else:
                conn.sendall(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                return
            data = body.encode()
            conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Length: "
                         + str(len(data)).encode() + b"\r\n\r\n" + data)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def raw_server() -> Iterator[RawServer]:
    server = RawServer()
    yield server
    server.close()


def test_a_huge_response_head_is_too_large(raw_server: RawServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_crawl(f"http://127.0.0.1:{raw_server.port}/docs/", out, "render=never")
    assert result.returncode == 0, result.stderr[-2000:]
    output = CrawlOutput(out, result)
    end = output.terminal("/docs/huge-head")
    assert (end["event"], end["reason"]) == ("skipped", "too_large"), end
    assert "DOCSCRAWL_MAX_HEADER_BYTES" in end["rule"]
    assert output.terminal("/docs/fine")["event"] == "extracted"
    # the crawl hung up long before the server had sent its 16 MB
    assert raw_server.head_sent["/docs/huge-head"] < HEADER_LINES * 8192 // 2
