"""Keep a crawl of a public site from reaching private addresses (SSRF guard).

The guard is active only when the seed host itself is public: crawling a site
on 127.0.0.1 or an intranet host is allowed, following a public site's link
to one is not (skip reason `private_address`).

A host is checked twice: when a URL is admitted (`check`, its verdict kept), and at
every connection, on the address actually connected to (`connect_check`, called by
`docscrawl.discovery.resolver` for each lookup Scrapy makes). A DNS answer that changes
in between (DNS rebinding) is refused at connection time and remembered
(`refused_at_connect`), so the page is `skipped` `private_address` rather than `dns`.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from functools import cached_property

__all__ = ["AddressGuard", "connect_guard", "install_connect_guard", "is_private_ip",
           "resolve_host"]

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_LOCALHOST = "localhost"
_RULE = "{} is loopback/private/link-local"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def is_private_ip(ip: str) -> bool:
    """Return True for a non-public address literal (brackets and `%zone` allowed).

    Covers loopback, private (RFC 1918, ULA), link-local, unspecified, reserved,
    multicast, carrier-grade NAT (100.64.0.0/10) and IPv4-mapped forms of these.
    Raises ValueError when *ip* is not an IP address.
    """
    return _is_private(ipaddress.ip_address(_strip_ip(ip)))


def _strip_ip(ip: str) -> str:
    return ip.strip().removeprefix("[").removesuffix("]").partition("%")[0]


def _is_private(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return _is_private(address.ipv4_mapped)
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_unspecified
        or address.is_reserved
        or address.is_multicast
        or (isinstance(address, ipaddress.IPv4Address) and address in _CGNAT)
    )


def _as_ip(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(_strip_ip(host))
    except ValueError:
        return None


def resolve_host(host: str) -> list[str]:
    """Return the addresses *host* resolves to; [] when it does not resolve."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return [str(info[4][0]) for info in infos]


class AddressGuard:
    """Refuse hosts that resolve to private addresses, when the seed host is public."""

    def __init__(
        self, seed_host: str, *, resolve: Callable[[str], list[str]] = resolve_host
    ) -> None:
        self._seed_host = _clean_host(seed_host)
        self._resolve = resolve
        self._verdicts: dict[str, str | None] = {}
        self._refused_at_connect: dict[str, str] = {}

    @cached_property
    def active(self) -> bool:
        """True when the seed host is public (an unresolvable seed counts as public)."""
        return self._private_reason(self._seed_host) is None

    def check(self, host: str) -> str | None:
        """Return None when *host* may be fetched, else the rule text that refuses it.

        Hostnames are resolved once per guard; one private address blocks the host;
        an unresolvable host is allowed (its fetch fails later, as `dns`).
        """
        if not self.active:
            return None
        host = _clean_host(host)
        if host in self._refused_at_connect:  # its DNS answer turned private since
            return self._refused_at_connect[host]
        if host not in self._verdicts:
            self._verdicts[host] = self._private_reason(host)
        return self._verdicts[host]

    def connect_check(self, host: str, address: str) -> str | None:
        """None when `host` may be connected to at `address` (what its lookup answered
        now), else the rule that refuses it (also kept: `refused_at_connect`)."""
        if not self.active:
            return None
        ip = _as_ip(address)
        if ip is None or not _is_private(ip):
            return None
        host = _clean_host(host)
        rule = _RULE.format(f"{host} ({_strip_ip(address)} when connecting)")
        self._refused_at_connect[host] = rule
        return rule

    def refused_at_connect(self, host: str) -> str | None:
        """The rule that refused a connection to `host`, if one did."""
        return self._refused_at_connect.get(_clean_host(host))

    def _private_reason(self, host: str) -> str | None:
        literal = _as_ip(host)
        if literal is not None:
            return _RULE.format(_strip_ip(host)) if _is_private(literal) else None
        if host == _LOCALHOST or host.endswith("." + _LOCALHOST):  # RFC 6761
            return _RULE.format(host)
        for address in self._resolve(host):
            resolved = _as_ip(address)
            if resolved is not None and _is_private(resolved):
                return _RULE.format(f"{host} ({_strip_ip(address)})")
        return None


_CONNECT_GUARD: list[AddressGuard] = []  # the running crawl's guard (one per process)


def install_connect_guard(guard: AddressGuard) -> None:
    """Make `guard` the one every connection of this process is checked against."""
    _CONNECT_GUARD[:] = [guard]


def connect_guard() -> AddressGuard | None:
    """The guard installed by the running crawl, if any."""
    return _CONNECT_GUARD[0] if _CONNECT_GUARD else None


def _clean_host(host: str) -> str:
    """Lowercase, without brackets or a trailing dot."""
    return host.strip().lower().removeprefix("[").removesuffix("]").rstrip(".")
