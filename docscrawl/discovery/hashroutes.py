"""Hash-router links (`#/path`) turned into crawlable URLs, and back for the browser.

Client-side hash routers (Docsify's default mode, older Angular and Vue apps) keep the
route in the fragment: `https://d.example/docs/#/guide/install`. A fragment never reaches
the server and docscrawl drops fragments from URLs, so all routes would collapse into
`/docs/`. The rule:

* a link is a *hash route* when its fragment starts with `/` or `!/` (`#/guide`,
  `#!/guide`); any other fragment is an in-page anchor;
* its crawlable URL is the URL without the fragment plus the query parameter
  `_hashroute=<route>`, where the route is the fragment without its own query
  (`#/guide/install?id=setup`, a Docsify heading anchor, is the route `/guide/install`):
  `https://d.example/docs/#/guide/install` -> `https://d.example/docs/?_hashroute=/guide/install`;
* a `_hashroute` parameter already on the base URL is replaced, so relative hash links
  found on a routed page resolve to their own route;
* the browser is sent to `browser_url(url)`, the hash form again, so the router sees the
  route; the server only ever sees the plain shell URL plus the ignored parameter.

Only links found in a browser-rendered DOM are treated this way (the spider calls
`hash_route_links` for rendered pages only), and a `_hashroute` URL is always rendered.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urljoin, urlsplit, urlunsplit

from lxml import etree

__all__ = ["HASH_ROUTE_PARAM", "browser_url", "crawlable_url", "hash_route_links", "route_of"]

HASH_ROUTE_PARAM = "_hashroute"
_ROUTE_SAFE = "/!:@-._~$&'()*+,;="


def _route(fragment: str) -> str | None:
    """The route in a fragment (`/guide` or `!/guide`), or None for an in-page anchor."""
    fragment = unquote(fragment)
    if not (fragment.startswith("/") or fragment.startswith("!/")):
        return None
    return fragment.split("?", 1)[0]


def crawlable_url(url: str) -> str | None:
    """The crawlable form of an absolute URL whose fragment is a hash route, else None."""
    parts = urlsplit(url)
    route = _route(parts.fragment)
    if route is None or parts.scheme not in ("http", "https"):
        return None
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k != HASH_ROUTE_PARAM]
    query.append((HASH_ROUTE_PARAM, route))
    encoded = urlencode(query, quote_via=lambda s, *_: quote(s, safe=_ROUTE_SAFE))
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", encoded, ""))


def route_of(url: str) -> str | None:
    """The hash route a crawlable URL stands for (`/guide/install`), or None."""
    for key, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
        if key == HASH_ROUTE_PARAM:
            return value
    return None


def browser_url(url: str) -> str:
    """The URL to open in the browser: `_hashroute` moved back into the fragment."""
    route = route_of(url)
    if route is None:
        return url
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k != HASH_ROUTE_PARAM]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), route))


def hash_route_links(
    root: etree._Element, base_url: str, *, region_map: Any = None
) -> list[tuple[str, str]]:
    """(crawlable URL, region) for each distinct hash-route link of a rendered page.

    `region_map` is the page's `RegionMap` (anything with `region_of(element)`); without
    it every link is `unknown`. The page's own route is left out.
    """
    found: dict[str, str] = {}
    own = crawlable_url(base_url) or base_url
    for a in root.iter("a"):
        href = (a.get("href") or "").strip()
        if "#" not in href:
            continue
        try:
            url = crawlable_url(urljoin(base_url, href))
        except ValueError:
            continue
        if url is None or url == own or url in found:
            continue
        region = region_map.region_of(a) if region_map is not None else None
        found[url] = region or "unknown"
    return list(found.items())
