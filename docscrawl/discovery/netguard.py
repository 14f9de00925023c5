"""Keep a crawl from reaching addresses its seed gives it no business with (SSRF guard).

Every address has a kind (`address_kind`): public, private (RFC 1918, CGNAT, ULA, the old
site-local `fec0::/10`), loopback (with `0.0.0.0` and `::`, which reach this host),
link-local, cloud metadata (`169.254.169.254`, `fd00:ec2::254`...) or special-purpose
(multicast, reserved, documentation). An IPv6 address that carries an IPv4 one (mapped
`::ffff:0:0/96`, 6to4 `2002::/16`, Teredo `2001::/32`, NAT64 `64:ff9b::/96`) has the kind
of the IPv4 address it leads to. What a crawl may reach depends on its seed host:

- a public seed: public addresses only (skip reason `private_address`);
- a private or loopback seed (an intranet site, one on 127.0.0.1): public, private and
  loopback addresses, and whatever kind the seed itself is; never link-local or cloud
  metadata addresses unless `DOCSCRAWL_ALLOW_LINK_LOCAL` is on (`allow_link_local`), so
  a page of an intranet site cannot send the crawl to the machine's metadata service.
  A link-local seed adds link-local addresses (still not the metadata ones).

A host is checked twice: when a URL is admitted (`check`, its resolution kept), and at
every connection, on the address actually connected to (`connect_check`, called by
`docscrawl.discovery.resolver` for each lookup Scrapy makes, and by the browser's guard
proxy). A DNS answer that changes in between (DNS rebinding) is refused at connection
time and remembered (`refused_at_connect`), so the page is `skipped` `private_address`
rather than `dns`.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from enum import StrEnum
from functools import cached_property

__all__ = ["AddressGuard", "AddressKind", "address_kind", "connect_guard",
           "install_connect_guard", "is_private_ip", "resolve_host"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
ALLOW_LINK_LOCAL_SETTING = "DOCSCRAWL_ALLOW_LINK_LOCAL"
_LOCALHOST = "localhost"


class AddressKind(StrEnum):
    """What an address reaches, as the guard sees it (the value is the rule's word)."""

    PUBLIC = "public"
    PRIVATE = "private"
    LOOPBACK = "loopback"
    LINK_LOCAL = "link-local"
    METADATA = "cloud metadata"
    SPECIAL = "special-purpose"


def _networks(*cidrs: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(cidr) for cidr in cidrs)


# First match wins; an address in none is public when Python's `is_global` agrees.
_KINDS: tuple[tuple[AddressKind, tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]],
              ...] = (
    (AddressKind.METADATA, _networks(
        "169.254.169.254/32",  # AWS, GCP, Azure, OCI, OpenStack, DigitalOcean...
        "169.254.170.2/32",  # AWS ECS task metadata
        "100.100.100.200/32",  # Alibaba Cloud
        "fd00:ec2::254/128",  # AWS over IPv6
    )),
    (AddressKind.LOOPBACK, _networks("127.0.0.0/8", "0.0.0.0/8", "::1/128", "::/128")),
    (AddressKind.LINK_LOCAL, _networks("169.254.0.0/16", "fe80::/10")),
    (AddressKind.PRIVATE, _networks(
        "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10",  # CGNAT
        "fc00::/7", "fec0::/10",  # unique local, deprecated site-local
    )),
    (AddressKind.SPECIAL, _networks(
        "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15", "198.51.100.0/24",
        "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",  # multicast, reserved, broadcast
        "::/8", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "3fff::/20",
        "ff00::/8",  # IPv4-compatible, local NAT64, discard, IETF, documentation, multicast
    )),
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded_ipv4(address: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The IPv4 address an IPv6 one leads to, and how (None for a plain IPv6 address)."""
    if address.ipv4_mapped is not None:
        return "IPv4-mapped", address.ipv4_mapped
    if address.sixtofour is not None:
        return "6to4", address.sixtofour
    if address.teredo is not None:
        return "Teredo", address.teredo[1]  # the client: where the traffic ends up
    if address in _NAT64:
        return "NAT64", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _kind(address: IPAddress) -> AddressKind:
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None:
            return _kind(embedded[1])
    for kind, networks in _KINDS:
        if any(address in network for network in networks):
            return kind
    return AddressKind.PUBLIC if address.is_global else AddressKind.SPECIAL


def address_kind(ip: str) -> AddressKind:
    """The kind of an address literal (brackets and `%zone` allowed).

    Raises ValueError when *ip* is not an IP address.
    """
    return _kind(ipaddress.ip_address(_strip_ip(ip)))


def is_private_ip(ip: str) -> bool:
    """Return True for a non-public address literal (brackets and `%zone` allowed): any
    kind but `AddressKind.PUBLIC`. Raises ValueError when *ip* is not an IP address."""
    return address_kind(ip) is not AddressKind.PUBLIC


def _strip_ip(ip: str) -> str:
    return ip.strip().removeprefix("[").removesuffix("]").partition("%")[0]


def _as_ip(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(_strip_ip(host))
    except ValueError:
        return None


def _described(address: IPAddress) -> str:
    """`kind`, plus the IPv4 address it leads to when that is not plain to see."""
    kind = _kind(address)
    embedded = _embedded_ipv4(address) if isinstance(address, ipaddress.IPv6Address) else None
    if embedded is None or embedded[0] == "IPv4-mapped":
        return kind.value
    return f"{kind.value} ({embedded[0]} of {embedded[1]})"


def resolve_host(host: str) -> list[str]:
    """Return the addresses *host* resolves to; [] when it does not resolve."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return [str(info[4][0]) for info in infos]


# What a host resolved to: (text shown in a rule, its address), per address.
_Finding = tuple[str, IPAddress]


class AddressGuard:
    """Refuse hosts whose addresses are of a kind the seed host does not permit."""

    def __init__(
        self, seed_host: str, *, resolve: Callable[[str], list[str]] = resolve_host,
        allow_link_local: bool = False,
    ) -> None:
        self._seed_host = _clean_host(seed_host)
        self._resolve = resolve
        self._allow_link_local = allow_link_local
        self._findings: dict[str, list[_Finding]] = {}  # resolutions, kept for the crawl
        self._verdicts: dict[str, str | None] = {}  # under the current policy
        self._refused_at_connect: dict[str, str] = {}

    @property
    def allow_link_local(self) -> bool:
        """Whether a private seed may reach link-local and cloud metadata addresses
        (`DOCSCRAWL_ALLOW_LINK_LOCAL`, set by the spider when the crawl opens)."""
        return self._allow_link_local

    @allow_link_local.setter
    def allow_link_local(self, value: bool) -> None:
        self._allow_link_local = value
        self._verdicts.clear()
        self.__dict__.pop("permitted", None)

    @cached_property
    def seed_kinds(self) -> frozenset[AddressKind]:
        """The kinds of the seed host's addresses (an unresolvable seed counts as public)."""
        kinds = {_kind(address) for _, address in self._addresses(self._seed_host)}
        return frozenset(kinds or {AddressKind.PUBLIC})

    @property
    def active(self) -> bool:
        """True when the seed host is public: only public addresses may be reached."""
        return self.seed_kinds == {AddressKind.PUBLIC}

    @cached_property
    def permitted(self) -> frozenset[AddressKind]:
        """The kinds of address this crawl may reach (see the module docstring)."""
        if self.active:
            return frozenset({AddressKind.PUBLIC})
        kinds = {AddressKind.PUBLIC, AddressKind.PRIVATE, AddressKind.LOOPBACK,
                 *self.seed_kinds}
        if self.allow_link_local:
            kinds |= {AddressKind.LINK_LOCAL, AddressKind.METADATA}
        return frozenset(kinds)

    def check(self, host: str) -> str | None:
        """Return None when *host* may be fetched, else the rule text that refuses it.

        Hostnames are resolved once per guard; one refused address blocks the host;
        an unresolvable host is allowed (its fetch fails later, as `dns`).
        """
        host = _clean_host(host)
        if host in self._refused_at_connect:  # its DNS answer turned private since
            return self._refused_at_connect[host]
        if host not in self._verdicts:
            if host not in self._findings:
                self._findings[host] = self._addresses(host)
            self._verdicts[host] = next(
                (rule for shown, address in self._findings[host]
                 if (rule := self._refusal(shown, address)) is not None), None)
        return self._verdicts[host]

    def connect_check(self, host: str, address: str) -> str | None:
        """None when `host` may be connected to at `address` (what its lookup answered
        now), else the rule that refuses it (also kept: `refused_at_connect`)."""
        ip = _as_ip(address)
        if ip is None:
            return None
        host = _clean_host(host)
        rule = self._refusal(f"{host} ({_strip_ip(address)} when connecting)", ip)
        if rule is not None:
            self._refused_at_connect[host] = rule
        return rule

    def refused_at_connect(self, host: str) -> str | None:
        """The rule that refused a connection to `host`, if one did."""
        return self._refused_at_connect.get(_clean_host(host))

    def _refusal(self, shown: str, address: IPAddress) -> str | None:
        kind = _kind(address)
        if kind in self.permitted:
            return None
        rule = f"{shown} is {_described(address)}"
        if kind in (AddressKind.LINK_LOCAL, AddressKind.METADATA) and not self.active:
            rule += f"; {ALLOW_LINK_LOCAL_SETTING}=1 admits it"
        return rule

    def _addresses(self, host: str) -> list[_Finding]:
        """What `host` stands for: its literal address, loopback for `localhost` names
        (RFC 6761), else the addresses it resolves to."""
        literal = _as_ip(host)
        if literal is not None:
            return [(_strip_ip(host), literal)]
        if host == _LOCALHOST or host.endswith("." + _LOCALHOST):
            return [(host, ipaddress.IPv6Address("::1"))]
        found = []
        for answer in self._resolve(host):
            address = _as_ip(answer)
            if address is not None:
                found.append((f"{host} ({_strip_ip(answer)})", address))
        return found


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
