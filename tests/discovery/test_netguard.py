"""docscrawl.discovery.netguard: private addresses and the per-crawl address guard."""

from __future__ import annotations

import socket

import pytest

from docscrawl.discovery import netguard
from docscrawl.discovery.netguard import AddressGuard, is_private_ip, resolve_host


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


DNS = {
    "docs.example": ["93.184.216.34"],
    "public6.example": ["2606:4700::1"],
    "intranet.example": ["10.0.0.5"],
    "mixed.example": ["93.184.216.34", "192.168.0.10"],
    "metadata.example": ["169.254.169.254"],
    "mapped.example": ["::ffff:127.0.0.1"],
    "scoped.example": ["fe80::1%eth0"],
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


@pytest.mark.parametrize(
    ("host", "rule"),
    [
        ("docs.example", None),
        ("public6.example", None),
        ("8.8.8.8", None),
        ("unresolvable.example", None),
        ("odd.example", None),
        ("localhost", "localhost is loopback/private/link-local"),
        ("LocalHost.", "localhost is loopback/private/link-local"),
        ("api.localhost", "api.localhost is loopback/private/link-local"),
        ("127.0.0.1", "127.0.0.1 is loopback/private/link-local"),
        ("[::1]", "::1 is loopback/private/link-local"),
        ("169.254.169.254", "169.254.169.254 is loopback/private/link-local"),
        ("intranet.example", "intranet.example (10.0.0.5) is loopback/private/link-local"),
        ("mixed.example", "mixed.example (192.168.0.10) is loopback/private/link-local"),
        ("metadata.example",
         "metadata.example (169.254.169.254) is loopback/private/link-local"),
        ("mapped.example", "mapped.example (::ffff:127.0.0.1) is loopback/private/link-local"),
        ("scoped.example", "scoped.example (fe80::1) is loopback/private/link-local"),
    ],
)  # fmt: skip
def test_check_when_active(host: str, rule: str | None) -> None:
    guard = AddressGuard("docs.example", resolve=FakeResolver())
    assert guard.active
    assert guard.check(host) == rule


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "intranet.example", "docs.example"])
def test_check_when_inactive_allows_everything(host: str) -> None:
    guard = AddressGuard("127.0.0.1", resolve=FakeResolver())
    assert not guard.active
    assert guard.check(host) is None


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
    assert guard.check("evil.example") == "evil.example (::1) is loopback/private/link-local"
    assert guard.check("nowhere.example") is None


def test_resolve_host_handles_bad_names() -> None:
    assert resolve_host("a" * 300 + ".example") == []
    assert resolve_host("bad..name") == []
