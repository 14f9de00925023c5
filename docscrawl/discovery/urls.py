"""URL normalization for deduplication and scope checks.

`normalize_url` applies only semantics-preserving changes (RFC 3986 section 6.2.2
plus the scheme defaults of 6.2.3) and two deliberate ones: the fragment and
tracking parameters are dropped, and query parameters are sorted by name
(stable, so repeated names keep their order). Trailing slashes are kept.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from functools import lru_cache
from urllib.parse import SplitResult, urlsplit

import idna

__all__ = [
    "REDACTED",
    "SESSION_PARAMS",
    "TRACKING_PARAMS",
    "TRACKING_PREFIXES",
    "is_crawlable_url",
    "is_tracking_param",
    "normalize_url",
    "redact_userinfo",
    "strip_fragment",
    "without_userinfo",
]

#: Query parameter names that only track the visitor (compared case-insensitively).
TRACKING_PARAMS: frozenset[str] = frozenset(
    {
        "gclid",  # Google Ads
        "fbclid",  # Facebook
        "msclkid",  # Microsoft Ads
        "dclid",  # Google Display
        "gbraid",  # Google Ads (iOS)
        "wbraid",  # Google Ads (web-to-app)
        "yclid",  # Yandex
        "mc_cid",  # Mailchimp campaign
        "mc_eid",  # Mailchimp recipient
        "_ga",  # Google Analytics linker
        "_gl",  # Google linker
        "igshid",  # Instagram
        "_hsenc",  # HubSpot
        "_hsmi",  # HubSpot
        "mkt_tok",  # Marketo
        "ref_src",  # Twitter/X
    }
)
#: Name prefixes that mark a tracking parameter (`utm_source`, `utm_medium`, ...).
TRACKING_PREFIXES: tuple[str, ...] = ("utm_",)
#: Session-id parameters, dropped like tracking parameters: the same page under a new
#: session id is the same page. Also dropped as `;jsessionid=...` path parameters.
SESSION_PARAMS: frozenset[str] = frozenset(
    {"jsessionid", "phpsessid", "sessionid", "session_id", "aspsessionid", "cfid", "cftoken"}
)
_PATH_SESSION = re.compile(r";(?:jsessionid|phpsessid|sessionid)=[^/?#;]*", re.I)

_SCHEMES = frozenset({"http", "https"})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Characters left verbatim: unreserved, sub-delims, ":" "@" "/" (and "?" in a query).
_PATH_CHARS = r"A-Za-z0-9\-._~!$&'()*+,;=:@/"
_PATH_CLEAN = re.compile(f"[{_PATH_CHARS}]*").fullmatch
_QUERY_CLEAN = re.compile(f"[{_PATH_CHARS}?]*").fullmatch
# One token to fix: an escape, a stray "%", or a character that must be escaped.
_PATH_FIX = re.compile(f"%[0-9A-Fa-f]{{2}}|[^{_PATH_CHARS}]")
_QUERY_FIX = re.compile(f"%[0-9A-Fa-f]{{2}}|[^{_PATH_CHARS}?]")
_HOST_CHARS = re.compile(r"[a-z0-9\-._]+").fullmatch


def is_tracking_param(name: str) -> bool:
    """Return True when the query parameter *name* only tracks the visitor."""
    lowered = name.lower()
    return (lowered in TRACKING_PARAMS or lowered in SESSION_PARAMS
            or lowered.startswith(TRACKING_PREFIXES))


def strip_fragment(url: str) -> str:
    """Return *url* without its `#fragment` (and without a bare trailing `#`)."""
    return url.partition("#")[0]


#: What stands for the `user:password` of a URL in anything logged or written.
REDACTED = "***"
# `scheme://userinfo@` at the start of a URL's authority (userinfo has no `/?#@` ... but a
# password may hold `@`: the authority's last `@` ends it).
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/?#\s\"'<>]*@")


def without_userinfo(url: str) -> str:
    """*url* without the `user:password@` of its authority (unchanged when it has none).

    Discovery applies it to every URL found (links, redirects, sitemaps, robots.txt):
    credentials written into a page's link are never sent, and the page is crawled under
    its URL without them (the crawl's own credentials, `http_user`, go to the seed's
    origin only)."""
    if "@" not in url:
        return url
    return _USERINFO.sub(r"\1", url, count=1)


def redact_userinfo(text: str) -> str:
    """*text* with the `user:password` of every URL in it replaced by `***`: for what is
    logged or written (crawl-log lines, Scrapy's log messages)."""
    if "@" not in text:
        return text
    return _USERINFO.sub(rf"\1{REDACTED}@", text)


@lru_cache(maxsize=8192)
def is_crawlable_url(url: str) -> bool:
    """Return True for an http(s) URL with a valid host (and port, if any). Remembered:
    the spider asks it of every link on every page (a sidebar's on each of its pages)."""
    try:
        parts = urlsplit(url)
        if parts.scheme not in _SCHEMES:
            return False
        _netloc(parts)
    except ValueError:
        return False
    return True


def normalize_url(url: str) -> str:
    """Return the normalized form of an http(s) URL; idempotent.

    Other schemes only lose their fragment. Raises ValueError for an http(s)
    URL whose host or port cannot be parsed (see `is_crawlable_url`).
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in _SCHEMES:
        return strip_fragment(url.strip())
    path = _PATH_SESSION.sub("", parts.path)
    path = _remove_dot_segments(_fix_escapes(path, _PATH_CLEAN, _PATH_FIX)) or "/"
    query = _normalize_query(parts.query)
    return f"{parts.scheme}://{_netloc(parts)}{path}{'?' + query if query else ''}"


def _netloc(parts: SplitResult) -> str:
    """Return the normalized `[userinfo@]host[:port]` of *parts*."""
    host = _normalize_host(parts.hostname or "")
    port = parts.port  # raises ValueError on a bad port
    netloc = host if port is None or port == _DEFAULT_PORTS[parts.scheme] else f"{host}:{port}"
    userinfo, at, _ = parts.netloc.rpartition("@")
    return f"{userinfo}@{netloc}" if at else netloc


@lru_cache(maxsize=4096)
def _normalize_host(host: str) -> str:
    """Return *host* (already lowercased by urlsplit) as ASCII; ValueError if invalid."""
    if not host:
        raise ValueError("URL has no host")
    if ":" in host:  # IPv6 literal, brackets removed by urlsplit
        return f"[{ipaddress.IPv6Address(host.partition('%')[0])}]"
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except (idna.IDNAError, UnicodeError) as exc:
            raise ValueError(f"invalid host {host!r}: {exc}") from exc
    if not _HOST_CHARS(host):
        raise ValueError(f"invalid host {host!r}")
    return host


def _fix_escapes(
    text: str, clean: Callable[[str], re.Match[str] | None], fix: re.Pattern[str]
) -> str:
    """Uppercase escapes, decode unreserved ones, escape what must be escaped."""
    if "%" not in text and clean(text):
        return text
    return fix.sub(_fix_token, text)


def _fix_token(match: re.Match[str]) -> str:
    token = match.group()
    if len(token) == 3:
        char = chr(int(token[1:], 16))
        return char if char in _UNRESERVED else token.upper()
    return "".join(f"%{byte:02X}" for byte in token.encode("utf-8", "replace"))


def _normalize_query(query: str) -> str:
    """Drop empty and tracking parameters, then sort by name (stable).

    Names are compared after escape normalization, so `utm%5Fsource` is caught.
    """
    if not query:
        return ""
    params = []
    for param in _fix_escapes(query, _QUERY_CLEAN, _QUERY_FIX).split("&"):
        name = param.partition("=")[0]
        if param and not is_tracking_param(name):
            params.append((name, param))
    params.sort(key=lambda item: item[0])
    return "&".join(param for _, param in params)


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4, for an absolute path."""
    if "." not in path:
        return path
    segments = path.split("/")
    if not any(segment in (".", "..") for segment in segments):
        return path
    output: list[str] = []
    for segment in segments[1:]:
        if segment == "..":
            if output:
                output.pop()
        elif segment != ".":
            output.append(segment)
    if segments[-1] in (".", ".."):
        output.append("")
    return "/" + "/".join(output)
