"""The browser's forward proxy: every request Chromium makes is checked where it connects.

Chromium resolves names itself, so a name whose DNS answer turns private after the crawl
checked it (DNS rebinding) would reach that private address from a rendered page. The
crawl therefore launches Chromium with `--proxy-server` pointing at `GuardProxy`, a small
HTTP forward proxy running in the crawl's own asyncio loop, with `<-loopback>` in the
bypass list (Chromium otherwise connects to loopback hosts directly). For each request
(`CONNECT host:port` for https and WebSockets, an absolute URL for plain http) the proxy
resolves the host, checks every answer with the crawl's guard (`netguard.connect_guard`,
`AddressGuard.connect_check`: the same policy as Scrapy's connections, inactive for a crawl
of a private or loopback site) and connects to the checked address itself, so no second
lookup can differ. A refused request gets a 403 whose `X-Docscrawl-Refused` header holds
the rule; the guard remembers the host (`refused_at_connect`).

Chromium's own resolver is switched off (`--host-resolver-rules`, all but the proxy), and
WebRTC may not send UDP outside the proxy, so nothing bypasses it. The proxy serves the crawl's
own browser alone: each proxy starts with a random secret that Chromium is given through
Playwright's proxy credentials (`launch_proxy`), and a request without it gets a 407, so
another local process cannot use the proxy to reach what the crawl may reach. A proxy
configured in the
environment (`http_proxy`, `https_proxy`, honouring `no_proxy`) is chained to, unchecked,
as Scrapy's own requests use it. Plain http requests are served one per connection
(`Connection: close` both ways), which keeps the proxy free of HTTP framing.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hmac
import logging
import secrets
import socket
from collections.abc import Callable
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

from docscrawl.discovery.netguard import AddressGuard, connect_guard

__all__ = ["REFUSED_HEADER", "GuardProxy"]

logger = logging.getLogger(__name__)

REFUSED_HEADER = "X-Docscrawl-Refused"
HEAD_LIMIT = 64 * 1024  # bytes of a request or response head
CONNECT_TIMEOUT = 15.0  # seconds to resolve and connect upstream
HOP_HEADERS = frozenset({b"connection", b"keep-alive", b"proxy-connection",
                         b"proxy-authorization", b"proxy-authenticate", b"te", b"trailer",
                         b"upgrade"})
CHUNK = 64 * 1024
PROXY_USER = "docscrawl"


class Refused(Exception):
    """The guard refused the address a host resolved to; the message is its rule."""


class GuardProxy:
    """An HTTP forward proxy on 127.0.0.1 that connects only to addresses the guard allows."""

    def __init__(self, guard: Callable[[], AddressGuard | None] = connect_guard) -> None:
        self._guard = guard
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.refused: list[tuple[str, str]] = []  # (host, rule), for tests and stats
        self.connections = 0
        self.unauthorized = 0  # requests without the proxy secret (answered 407)
        self._secret = secrets.token_urlsafe(24)
        self._expected = b"Basic " + base64.b64encode(
            f"{PROXY_USER}:{self._secret}".encode())

    @property
    def port(self) -> int:
        assert self._server is not None, "start() first"
        return int(self._server.sockets[0].getsockname()[1])

    async def start(self) -> GuardProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    def launch_proxy(self) -> dict[str, str]:
        """Playwright's `proxy` launch option: every request through this proxy, loopback
        included (`<-loopback>`), with the proxy's secret (Playwright answers the 407)."""
        return {"server": f"http://127.0.0.1:{self.port}", "bypass": "<-loopback>",
                "username": PROXY_USER, "password": self._secret}

    def chromium_args(self) -> list[str]:
        """Chromium flags that leave no way around the proxy: no resolver of its own, no
        UDP outside it."""
        return ["--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
                "--force-webrtc-ip-handling-policy=disable_non_proxied_udp"]

    def _authorized(self, head_lines: list[bytes]) -> bool:
        """True when the request carries this proxy's secret."""
        for line in head_lines:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"proxy-authorization":
                return hmac.compare_digest(value.strip(), self._expected)
        return False

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for pending in list(self._tasks):
            pending.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    # -- one client connection --------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        current = asyncio.current_task()
        if current is not None:
            self._tasks.add(current)
        self.connections += 1
        upstream: asyncio.StreamWriter | None = None
        try:
            head = await _read_head(reader)
            if head is None:
                return
            method, target, rest = _request_line(head)
            if not self._authorized(rest):
                self.unauthorized += 1
                _answer(writer, 407, "proxy authentication required")
                return
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                up_reader, upstream = await self._open(host, int(port), "https",
                                                       tunnel=target)
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                await writer.drain()
                await _pipe_both(reader, writer, up_reader, upstream)
                return
            parts = urlsplit(target)
            if parts.scheme != "http" or not parts.hostname:
                _answer(writer, 400, "absolute http URL expected")
                return
            up_reader, upstream = await self._open(parts.hostname, parts.port or 80, "http")
            path = target if self._chained("http", parts.hostname) else (
                (parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
            upstream.write(_rewritten(method, path, rest))
            await _pipe_response(reader, writer, up_reader, upstream)
        except Refused as refused:
            _answer(writer, 403, str(refused), refused=str(refused))
        except (TimeoutError, OSError, ValueError) as exc:
            with contextlib.suppress(Exception):
                _answer(writer, 502, f"{type(exc).__name__}: {exc}")
        finally:
            for stream in (writer, upstream):
                if stream is not None:
                    stream.close()
            if current is not None:
                self._tasks.discard(current)

    def _chained(self, scheme: str, host: str) -> str | None:
        """The environment's proxy for `scheme`, unless `no_proxy` exempts `host`."""
        proxy = getproxies().get(scheme)
        if not proxy or proxy_bypass(host):
            return None
        return proxy if "://" in proxy else f"http://{proxy}"

    async def _open(self, host: str, port: int, scheme: str, *,
                    tunnel: str | None = None,
                    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Connect to `host` at an address the guard allows (or through the chained proxy)."""
        host = host.strip("[]")
        chained = self._chained(scheme, host)
        if chained is not None:
            proxy = urlsplit(chained)
            reader, writer = await asyncio.wait_for(asyncio.open_connection(
                proxy.hostname, proxy.port or 80), CONNECT_TIMEOUT)
            if tunnel is not None:
                writer.write(f"CONNECT {tunnel} HTTP/1.1\r\nHost: {tunnel}\r\n\r\n".encode())
                answer = await _read_head(reader)
                if answer is None or b" 200" not in answer.split(b"\r\n", 1)[0]:
                    writer.close()
                    raise OSError(f"chained proxy refused CONNECT {tunnel}")
            return reader, writer
        address = await self._checked_address(host, port)
        return await asyncio.wait_for(asyncio.open_connection(address, port), CONNECT_TIMEOUT)

    async def _checked_address(self, host: str, port: int) -> str:
        loop = asyncio.get_running_loop()
        infos = await asyncio.wait_for(loop.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP), CONNECT_TIMEOUT)
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        if not addresses:
            raise OSError(f"{host} does not resolve")
        guard = self._guard()
        for address in addresses if guard is not None else ():
            rule = guard.connect_check(host, address) if guard is not None else None
            if rule is not None:  # one private answer refuses the host (AddressGuard.check)
                self.refused.append((host, rule))
                logger.info("docscrawl: browser request to %s refused: %s", host, rule)
                raise Refused(rule)
        return addresses[0]


async def _read_head(reader: asyncio.StreamReader) -> bytes | None:
    """A message head up to its blank line; None when the peer closed first."""
    try:
        return await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    except asyncio.LimitOverrunError as exc:
        raise ValueError(f"message head over {HEAD_LIMIT} bytes") from exc


def _request_line(head: bytes) -> tuple[str, str, list[bytes]]:
    line, *rest = head[:-4].split(b"\r\n")
    method, target, _version = line.decode("latin-1").split(" ", 2)
    return method.upper(), target, rest


def _without_hop_headers(lines: list[bytes]) -> list[bytes]:
    return [h for h in lines if h.split(b":", 1)[0].strip().lower() not in HOP_HEADERS]


def _rewritten(method: str, path: str, headers: list[bytes]) -> bytes:
    lines = [f"{method} {path} HTTP/1.1".encode("latin-1"), *_without_hop_headers(headers),
             b"Connection: close"]
    return b"\r\n".join(lines) + b"\r\n\r\n"


def _answer(writer: asyncio.StreamWriter, status: int, text: str, *,
            refused: str | None = None) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 407: "Proxy Authentication Required",
              502: "Bad Gateway"}[status]
    body = f"docscrawl: {text}\n".encode("utf-8", "replace")
    extra = f"{REFUSED_HEADER}: {refused}\r\n" if refused else ""
    if status == 407:
        extra += 'Proxy-Authenticate: Basic realm="docscrawl"\r\n'
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\n{extra}"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("latin-1")
                 + body)


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()


async def _pipe_both(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter,
                     up_r: asyncio.StreamReader, up_w: asyncio.StreamWriter) -> None:
    """A tunnel: bytes both ways until both sides are done."""
    await asyncio.gather(_copy(client_r, up_w), _copy(up_r, client_w))


async def _pipe_response(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter,
                         up_r: asyncio.StreamReader, up_w: asyncio.StreamWriter) -> None:
    """Send the request body on, and the response back with `Connection: close`."""
    sending = asyncio.ensure_future(_copy(client_r, up_w))
    try:
        head = await _read_head(up_r)
        if head is None:
            raise OSError("upstream closed before answering")
        status, *headers = head[:-4].split(b"\r\n")
        client_w.write(b"\r\n".join([status, *_without_hop_headers(headers),
                                     b"Connection: close"]) + b"\r\n\r\n")
        while data := await up_r.read(CHUNK):
            client_w.write(data)
            await client_w.drain()
    finally:
        sending.cancel()
