"""Scrapy's DNS resolver, checking every answer against the crawl's SSRF guard.

Installed through `TWISTED_DNS_RESOLVER` (Scrapy 2.19's name for `DNS_RESOLVER`): every
connection Scrapy makes (pages, redirects, robots.txt, sitemaps) looks its host up here,
so the address checked is the address connected to. An answer the guard refuses (a
private one for a public crawl; a link-local or cloud metadata one for any crawl, unless
allowed) fails the lookup (`DNSLookupError`) and the guard remembers why
(`AddressGuard.refused_at_connect`). Cached answers are checked again on every lookup.
The hosts of the proxies the environment configures (`http_proxy`...) are the user's
own choice and are not checked; through a proxy, the proxy connects to the site.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit
from urllib.request import getproxies

from scrapy.resolver import CachingThreadedResolver
from twisted.internet.defer import Deferred
from twisted.internet.error import DNSLookupError

from docscrawl.discovery.netguard import connect_guard


class GuardedResolver(CachingThreadedResolver):
    """CachingThreadedResolver whose answers pass `AddressGuard.connect_check`."""

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:
        answer = super().getHostByName(name, timeout)
        if name.lower() not in proxy_hosts():
            answer.addCallback(self._checked, name)
        return answer

    @staticmethod
    def _checked(address: Any, name: str) -> Any:
        guard = connect_guard()
        rule = guard.connect_check(name, str(address)) if guard is not None else None
        if rule is not None:
            raise DNSLookupError(f"refused: {rule}")
        return address


def proxy_hosts() -> frozenset[str]:
    """Hosts of the proxies configured in the environment."""
    return frozenset((urlsplit(url if "://" in url else f"http://{url}").hostname or "").lower()
                     for name, url in getproxies().items() if name != "no")
