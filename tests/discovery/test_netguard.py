"""docscrawl.discovery.netguard: private addresses and the per-crawl address guard."""

from __future__ import annotations

import socket

import pytest

from docscrawl.discovery import netguard
from docscrawl.discovery.netguard import (
    AddressGuard,
    AddressKind,
    address_kind,
    is_private_ip,
    resolve_host,
)

PUBLIC, PRIVATE, LOOPBACK = AddressKind.PUBLIC, AddressKind.PRIVATE, AddressKind.LOOPBACK
LINK_LOCAL, METADATA, SPECIAL = (AddressKind.LINK_LOCAL, AddressKind.METADATA,
                                 AddressKind.SPECIAL)


@pytest.mark.parametrize(
    ("ip", "private"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("10.0.0.1", True),
        ("172.16.0.1", True),
        ("172.31.255.254", True),
        ("192.168.1.1", True),
        ("fc00::1", True),
        ("fd12:3456::1", True),
        ("169.254.169.254", True),
        ("fe80::1", True),
        ("fe80::1%eth0", True),
        ("0.0.0.0", True),
        ("::", True),
        ("100.64.0.1", True),
        ("100.127.255.254", True),
        ("224.0.0.251", True),
        ("ff02::1", True),
        ("240.0.0.1", True),
        ("255.255.255.255", True),
        ("::ffff:127.0.0.1", True),
        ("::ffff:10.1.2.3", True),
        ("::ffff:169.254.169.254", True),
        ("::ffff:100.64.0.1", True),
        ("2002:7f00:1::", True),  # 6to4 of 127.0.0.1
        ("2002:a9fe:a9fe::1", True),  # 6to4 of 169.254.169.254
        ("2002:0a00:0001::", True),  # 6to4 of 10.0.0.1
        ("64:ff9b::7f00:1", True),  # NAT64 of 127.0.0.1
        ("64:ff9b::a9fe:a9fe", True),
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", True),  # Teredo, client 127.0.0.1
        ("fec0::1", True),  # deprecated site-local
        ("fd00:ec2::254", True),
        ("2002:808:808::", False),  # 6to4 of 8.8.8.8
        ("64:ff9b::808:808", False),
        ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", False),  # Teredo, client 8.8.8.8
        ("8.8.8.8", False),
        ("93.184.216.34", False),
        ("172.32.0.1", False),
        ("100.128.0.1", False),
        ("100.63.255.255", False),
        ("2606:4700:4700::1111", False),
        ("::ffff:8.8.8.8", False),
    ],
)
def test_is_private_ip(ip: str, private: bool) -> None:
    assert is_private_ip(ip) is private


@pytest.mark.parametrize("value", ["localhost", "example.com", "", "1.2.3", "::g"])
def test_is_private_ip_rejects_non_addresses(value: str) -> None:
    with pytest.raises(ValueError):
        is_private_ip(value)


@pytest.mark.parametrize(
    ("ip", "kind"),
    [
        ("93.184.216.34", PUBLIC),
        ("2606:4700::1", PUBLIC),
        ("10.0.0.1", PRIVATE),
        ("100.64.0.1", PRIVATE),
        ("fd12:3456::1", PRIVATE),
        ("fec0::1", PRIVATE),
        ("127.0.0.1", LOOPBACK),
        ("0.0.0.0", LOOPBACK),  # connecting to it reaches this host
        ("::", LOOPBACK),
        ("[::1]", LOOPBACK),
        ("169.254.1.1", LINK_LOCAL),
        ("fe80::1%eth0", LINK_LOCAL),
        ("169.254.169.254", METADATA),
        ("169.254.170.2", METADATA),
        ("100.100.100.200", METADATA),
        ("fd00:ec2::254", METADATA),
        ("::ffff:169.254.169.254", METADATA),
        ("2002:a9fe:a9fe::", METADATA),
        ("64:ff9b::a9fe:a9fe", METADATA),
        ("2002:7f00:1::", LOOPBACK),
        ("2002:c0a8:101::", PRIVATE),  # 6to4 of 192.168.1.1
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", LOOPBACK),  # Teredo, client 127.0.0.1
        ("2002:808:808::", PUBLIC),
        ("224.0.0.251", SPECIAL),
        ("255.255.255.255", SPECIAL),
        ("192.0.2.10", SPECIAL),
        ("ff02::1", SPECIAL),
        ("2001:db8::1", SPECIAL),
        ("::7f00:1", SPECIAL),  # IPv4-compatible (deprecated): not decoded, not public
        ("64:ff9b:1::7f00:1", SPECIAL),  # local-use NAT64: its layout is the network's own
    ],
)  # fmt: skip
def test_address_kind(ip: str, kind: AddressKind) -> None:
    assert address_kind(ip) is kind


DNS = {
    "docs.example": ["93.184.216.34"],
    "public6.example": ["2606:4700::1"],
    "intranet.example": ["10.0.0.5"],
    "mixed.example": ["93.184.216.34", "192.168.0.10"],
    "metadata.example": ["169.254.169.254"],
    "metadata6.example": ["2606:4700::1", "fd00:ec2::254"],
    "mapped.example": ["::ffff:127.0.0.1"],
    "sixtofour.example": ["2002:7f00:1::"],
    "scoped.example": ["fe80::1%eth0"],
    "device.example": ["169.254.7.7"],
    "odd.example": ["not-an-address", "8.8.8.8"],
}


class FakeResolver:
    """Resolves from DNS and counts lookups per host."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __call__(self, host: str) -> list[str]:
        self.calls[host] = self.calls.get(host, 0) + 1
        return DNS.get(host, [])


@pytest.mark.parametrize(
    ("seed", "active"),
    [
        ("docs.example", True),
        ("public6.example", True),
        ("DOCS.Example.", True),
        ("8.8.8.8", True),
        ("[2606:4700::1]", True),
        ("unresolvable.example", True),
        ("localhost", False),
        ("LOCALHOST", False),
        ("app.localhost", False),
        ("127.0.0.1", False),
        ("[::1]", False),
        ("10.1.2.3", False),
        ("intranet.example", False),
        ("mixed.example", False),
    ],
)
def test_guard_is_active_only_for_a_public_seed(seed: str, active: bool) -> None:
    assert AddressGuard(seed, resolve=FakeResolver()).active is active


HINT = "; DOCSCRAWL_ALLOW_LINK_LOCAL=1 admits it"


@pytest.mark.parametrize(
    ("host", "rule"),
    [
        ("docs.example", None),
        ("public6.example", None),
        ("8.8.8.8", None),
        ("unresolvable.example", None),
        ("odd.example", None),
        ("[2002:808:808::]", None),
        ("localhost", "localhost is loopback"),
        ("LocalHost.", "localhost is loopback"),
        ("api.localhost", "api.localhost is loopback"),
        ("127.0.0.1", "127.0.0.1 is loopback"),
        ("[::1]", "::1 is loopback"),
        ("0.0.0.0", "0.0.0.0 is loopback"),
        ("10.0.0.1", "10.0.0.1 is private"),
        ("[fec0::1]", "fec0::1 is private"),
        ("169.254.169.254", "169.254.169.254 is cloud metadata"),
        ("[fe80::1]", "fe80::1 is link-local"),
        ("224.0.0.251", "224.0.0.251 is special-purpose"),
        ("[2002:7f00:1::]", "2002:7f00:1:: is loopback (6to4 of 127.0.0.1)"),
        ("[2002:a9fe:a9fe::]", "2002:a9fe:a9fe:: is cloud metadata (6to4 of 169.254.169.254)"),
        ("[64:ff9b::a00:1]", "64:ff9b::a00:1 is private (NAT64 of 10.0.0.1)"),
        ("intranet.example", "intranet.example (10.0.0.5) is private"),
        ("mixed.example", "mixed.example (192.168.0.10) is private"),
        ("metadata.example", "metadata.example (169.254.169.254) is cloud metadata"),
        ("metadata6.example", "metadata6.example (fd00:ec2::254) is cloud metadata"),
        ("mapped.example", "mapped.example (::ffff:127.0.0.1) is loopback"),
        ("sixtofour.example",
         "sixtofour.example (2002:7f00:1::) is loopback (6to4 of 127.0.0.1)"),
        ("scoped.example", "scoped.example (fe80::1) is link-local"),
    ],
)  # fmt: skip
def test_a_public_seed_reaches_public_addresses_only(host: str, rule: str | None) -> None:
    guard = AddressGuard("docs.example", resolve=FakeResolver())
    assert guard.active
    assert guard.check(host) == rule


@pytest.mark.parametrize(
    ("seed", "host", "rule"),
    [
        # a private or loopback seed: public, private and loopback addresses...
        ("127.0.0.1", "docs.example", None),
        ("127.0.0.1", "localhost", None),
        ("127.0.0.1", "[::1]", None),
        ("127.0.0.1", "intranet.example", None),
        ("127.0.0.1", "[fec0::1]", None),
        ("127.0.0.1", "[2002:7f00:1::]", None),
        ("intranet.example", "127.0.0.1", None),
        ("10.1.2.3", "mixed.example", None),
        ("localhost", "10.9.8.7", None),
        # ... never link-local or cloud metadata ones
        ("127.0.0.1", "169.254.169.254", "169.254.169.254 is cloud metadata" + HINT),
        ("localhost", "169.254.169.254", "169.254.169.254 is cloud metadata" + HINT),
        ("10.1.2.3", "metadata.example",
         "metadata.example (169.254.169.254) is cloud metadata" + HINT),
        ("127.0.0.1", "[fd00:ec2::254]", "fd00:ec2::254 is cloud metadata" + HINT),
        ("127.0.0.1", "metadata6.example",
         "metadata6.example (fd00:ec2::254) is cloud metadata" + HINT),
        ("127.0.0.1", "[::ffff:169.254.169.254]",
         "::ffff:169.254.169.254 is cloud metadata" + HINT),
        ("127.0.0.1", "[2002:a9fe:a9fe::]",
         "2002:a9fe:a9fe:: is cloud metadata (6to4 of 169.254.169.254)" + HINT),
        ("127.0.0.1", "[64:ff9b::a9fe:a9fe]",
         "64:ff9b::a9fe:a9fe is cloud metadata (NAT64 of 169.254.169.254)" + HINT),
        ("127.0.0.1", "169.254.7.7", "169.254.7.7 is link-local" + HINT),
        ("127.0.0.1", "[fe80::1]", "fe80::1 is link-local" + HINT),
        ("intranet.example", "scoped.example", "scoped.example (fe80::1) is link-local" + HINT),
        ("127.0.0.1", "224.0.0.251", "224.0.0.251 is special-purpose"),
        # a link-local seed adds its own kind, not the metadata addresses
        ("169.254.10.1", "169.254.7.7", None),
        ("device.example", "[fe80::1]", None),
        ("169.254.10.1", "10.0.0.1", None),
        ("169.254.10.1", "169.254.169.254", "169.254.169.254 is cloud metadata" + HINT),
        # the metadata service as the seed (crawling it on purpose)
        ("169.254.169.254", "169.254.169.254", None),
    ],
)  # fmt: skip
def test_a_private_seed_never_reaches_link_local_or_metadata(
    seed: str, host: str, rule: str | None,
) -> None:
    guard = AddressGuard(seed, resolve=FakeResolver())
    assert not guard.active
    assert guard.check(host) == rule


@pytest.mark.parametrize(
    ("seed", "host", "allowed"),
    [
        ("127.0.0.1", "169.254.169.254", True),
        ("127.0.0.1", "[fd00:ec2::254]", True),
        ("intranet.example", "scoped.example", True),
        ("127.0.0.1", "224.0.0.251", False),
        ("docs.example", "169.254.169.254", False),  # a public seed: public addresses only
        ("docs.example", "127.0.0.1", False),
    ],
)
def test_allow_link_local_opens_link_local_to_a_private_seed_only(
    seed: str, host: str, allowed: bool,
) -> None:
    guard = AddressGuard(seed, resolve=FakeResolver(), allow_link_local=True)
    assert (guard.check(host) is None) is allowed


def test_allow_link_local_set_later_applies_to_hosts_checked_before() -> None:
    """The spider sets it from DOCSCRAWL_ALLOW_LINK_LOCAL once the session built the guard."""
    resolver = FakeResolver()
    guard = AddressGuard("127.0.0.1", resolve=resolver)
    assert guard.check("metadata.example") is not None
    guard.allow_link_local = True
    assert guard.check("metadata.example") is None
    assert resolver.calls == {"metadata.example": 1}  # resolved once all the same


@pytest.mark.parametrize(
    ("seed", "host", "address", "rule"),
    [
        ("docs.example", "docs.example", "93.184.216.34", None),
        ("docs.example", "rebind.example", "127.0.0.1",
         "rebind.example (127.0.0.1 when connecting) is loopback"),
        ("docs.example", "rebind.example", "2002:7f00:1::",
         "rebind.example (2002:7f00:1:: when connecting) is loopback (6to4 of 127.0.0.1)"),
        ("127.0.0.1", "localhost", "127.0.0.1", None),
        ("127.0.0.1", "intranet.example", "10.0.0.5", None),
        ("127.0.0.1", "rebind.example", "169.254.169.254",
         "rebind.example (169.254.169.254 when connecting) is cloud metadata" + HINT),
        ("127.0.0.1", "rebind.example", "fe80::1%eth0",
         "rebind.example (fe80::1 when connecting) is link-local" + HINT),
        ("127.0.0.1", "rebind.example", "not-an-address", None),
    ],
)  # fmt: skip
def test_connect_check_applies_the_same_policy(
    seed: str, host: str, address: str, rule: str | None,
) -> None:
    guard = AddressGuard(seed, resolve=FakeResolver())
    assert guard.connect_check(host, address) == rule
    assert guard.refused_at_connect(host) == rule
    if rule is not None:  # remembered: the host is refused from now on
        assert guard.check(host) == rule


def test_resolution_is_cached_per_host() -> None:
    resolver = FakeResolver()
    guard = AddressGuard("docs.example", resolve=resolver)
    for _ in range(3):
        guard.check("intranet.example")
        guard.check("INTRANET.example")
        guard.check("docs.example")
    assert resolver.calls == {"docs.example": 2, "intranet.example": 1}


def test_default_resolver_uses_getaddrinfo(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = {
        "docs.example": [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 0))],
        "evil.example": [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("::1", 0, 0, 0)),
        ],
    }

    def fake_getaddrinfo(host: str, *args: object, **kwargs: object) -> list[tuple]:
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answers[host]

    monkeypatch.setattr(netguard.socket, "getaddrinfo", fake_getaddrinfo)
    assert resolve_host("docs.example") == ["93.184.216.34"]
    assert resolve_host("nowhere.example") == []
    guard = AddressGuard("docs.example")
    assert guard.active
    assert guard.check("evil.example") == "evil.example (::1) is loopback"
    assert guard.check("nowhere.example") is None


def test_resolve_host_handles_bad_names() -> None:
    assert resolve_host("a" * 300 + ".example") == []
    assert resolve_host("bad..name") == []
