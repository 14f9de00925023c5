"""Sitemap (XML, gzip, plain text) and llms.txt parsing.

XML is parsed without entity expansion, DTD loading or network access, so
entity-expansion ("billion laughs") and external-entity bodies yield no content
rather than consuming memory or reading files.
"""

from __future__ import annotations

import io
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from lxml import etree

__all__ = [
    "MAX_SITEMAP_BYTES",
    "ParsedSitemap",
    "SitemapEntry",
    "SitemapError",
    "SitemapStream",
    "iter_sitemap",
    "parse_llms_txt",
    "parse_sitemap",
]

#: The sitemaps.org limit for an uncompressed sitemap.
MAX_SITEMAP_BYTES = 50 * 1024 * 1024

_GZIP_MAGIC = b"\x1f\x8b"
_ENTRY_TAGS = {"urlset": "url", "sitemapindex": "sitemap"}
_PLAIN_URL = re.compile(r"https?://\S+", re.IGNORECASE).fullmatch
_LLMS_LINK = re.compile(
    r"(?P<image>!?)\[(?:[^\[\]]|\[[^\[\]]*\])*\]"  # [label], one level of nested brackets
    r"\(\s*(?:<(?P<angled>[^<>\n]+)>|(?P<link>(?:[^()\s<>]|\([^()\s]*\))+))"  # (<url> or (url
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?\s*\)"  # optional "title", then )
    r"|(?P<bare>https?://[^\s<>()\[\]\"'`]+)",
    re.IGNORECASE,
)
_TRAILING_PUNCTUATION = ".,;:!?*_~"


class SitemapError(ValueError):
    """The body is not a sitemap we can read; the message is one line."""


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    """One `<url>` or `<sitemap>`: absolute `loc` and `lastmod` as given."""

    loc: str
    lastmod: str | None


@dataclass
class ParsedSitemap:
    """A parsed sitemap: `kind` is `urlset` or `sitemapindex`."""

    kind: str
    entries: list[SitemapEntry] = field(default_factory=list)


def parse_sitemap(
    body: bytes, *, base_url: str, max_size: int = MAX_SITEMAP_BYTES
) -> ParsedSitemap:
    """Parse a sitemap or sitemap index (XML, gzipped or not) or a plain-text sitemap.

    Raises SitemapError for bodies over *max_size* (after decompression), bad
    gzip data, and anything that is not a sitemap.
    """
    stream = iter_sitemap(body, base_url=base_url, max_size=max_size)
    return ParsedSitemap(kind=stream.kind, entries=list(stream))


def iter_sitemap(
    body: bytes, *, base_url: str, max_size: int = MAX_SITEMAP_BYTES
) -> SitemapStream:
    """`parse_sitemap`, streamed: the kind is read at once (bad bodies raise SitemapError
    here), the entries one by one while the XML is parsed, each element freed once read,
    so a 50,000-entry sitemap never becomes a 50,000-element tree. Iterating may still
    raise SitemapError (unsafe XML found past the first entries)."""
    if body.startswith(_GZIP_MAGIC):
        body = _gunzip(body, max_size)
    elif len(body) > max_size:
        raise SitemapError(f"sitemap is larger than {max_size} bytes")
    text_start = body.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text_start:
        raise SitemapError("sitemap is empty")
    if text_start.startswith(b"<"):
        return _XmlSitemap(body, base_url)
    return SitemapStream("urlset", _iter_plain(text_start, base_url))


class SitemapStream:
    """The entries of one sitemap, read as they are iterated (once)."""

    def __init__(self, kind: str, entries: Iterator[SitemapEntry]) -> None:
        self.kind = kind  # urlset | sitemapindex
        self._entries = entries

    def __iter__(self) -> Iterator[SitemapEntry]:
        return self._entries


def _gunzip(body: bytes, max_size: int) -> bytes:
    """Decompress at most *max_size* bytes of a gzip body."""
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = decompressor.decompress(body, max_size + 1)
    except zlib.error as exc:
        raise SitemapError(f"bad gzip data: {exc}") from exc
    if len(data) > max_size or decompressor.unconsumed_tail:
        raise SitemapError(f"sitemap is larger than {max_size} bytes once decompressed")
    return data


# A parser that never expands entities, loads DTDs or uses the network. `recover` keeps
# the entries of real-world sitemaps with stray `&` or truncated tails, as Scrapy's
# sitemap parser does.
_PARSER_OPTIONS: dict[str, Any] = {
    "resolve_entities": False, "no_network": True, "huge_tree": False, "load_dtd": False,
    "remove_comments": True, "remove_pis": True, "recover": True,
}


class _XmlSitemap(SitemapStream):
    """An XML sitemap parsed incrementally (`etree.iterparse`)."""

    def __init__(self, body: bytes, base_url: str) -> None:
        self._events = etree.iterparse(io.BytesIO(body), events=("start", "end"),
                                       **_PARSER_OPTIONS)
        try:
            _, root = next(self._events)
        except StopIteration:
            raise SitemapError("unreadable XML: no root element") from None
        except etree.LxmlError as exc:
            raise SitemapError(f"unreadable XML: {_one_line(str(exc))}") from exc
        kind = etree.QName(root).localname
        if kind not in _ENTRY_TAGS:
            raise SitemapError(f"not a sitemap: root element is <{_one_line(kind)}>")
        super().__init__(kind, self._read(root, base_url))

    def _read(self, root: etree._Element, base_url: str) -> Iterator[SitemapEntry]:
        entry_tag = _ENTRY_TAGS[self.kind]
        lastmods: dict[str, str] = {}  # one string per distinct date: tracks keep them
        depth = 0  # below the root
        try:
            for event, element in self._events:
                if event == "start":
                    depth += 1
                    continue
                depth -= 1
                if depth != 0:  # inside an entry, or the root's own end
                    continue
                if _localname(element) == entry_tag:
                    entry = _entry(element, base_url, lastmods)
                    if entry is not None:
                        yield entry
                element.clear()
                while element.getprevious() is not None:
                    del root[0]
        except etree.LxmlError as exc:
            raise SitemapError(f"unreadable XML: {_one_line(str(exc))}") from exc
        for error in self._events.error_log:
            if error.type_name == "ERR_RESOURCE_LIMIT":  # e.g. entity amplification
                raise SitemapError(f"unsafe XML: {_one_line(error.message)}")


def _localname(element: etree._Element) -> str | None:
    """Tag name without namespace; None for comments, entities and the like."""
    return etree.QName(element).localname if isinstance(element.tag, str) else None


def _entry(element: etree._Element, base_url: str,
           lastmods: dict[str, str]) -> SitemapEntry | None:
    """Read `loc` and `lastmod` from one `<url>`/`<sitemap>`; None without `loc`."""
    values: dict[str, str] = {}
    for child in element:
        name = _localname(child)
        if name in ("loc", "lastmod") and name not in values:
            values[name] = _own_text(child)
    loc = values.get("loc")
    if not loc:
        return None
    lastmod = values.get("lastmod") or None
    if lastmod is not None:
        lastmod = lastmods.setdefault(lastmod, lastmod)
    return SitemapEntry(loc=urljoin(base_url, loc), lastmod=lastmod)


def _own_text(element: etree._Element) -> str:
    """Text directly inside *element*, stripped; unexpanded entity references are dropped."""
    parts = [element.text or ""]
    parts.extend(child.tail or "" for child in element)
    return "".join(parts).strip()


def _iter_plain(body: bytes, base_url: str) -> Iterator[SitemapEntry]:
    """One absolute http(s) URL per line; any other non-empty line is an error (raised
    before any entry: every line is checked first)."""
    text = body.decode("utf-8", errors="replace")
    urls = []
    for number, line in enumerate(text.splitlines(), start=1):
        url = line.strip()
        if not url:
            continue
        if not _PLAIN_URL(url):
            raise SitemapError(f"not a sitemap: line {number} is not an http(s) URL")
        urls.append(url)
    return (SitemapEntry(loc=urljoin(base_url, url), lastmod=None) for url in urls)


def _one_line(text: str) -> str:
    return " ".join(text.split())[:200]


def parse_llms_txt(text: str, *, base_url: str) -> list[str]:
    """Return the http(s) URLs of an llms.txt: Markdown link targets and bare URLs.

    Targets are made absolute against *base_url*; image links are ignored;
    order of first appearance is kept and duplicates are removed.
    """
    urls: dict[str, None] = {}
    for match in _LLMS_LINK.finditer(text):
        if match["image"]:
            continue
        raw = match["angled"] or match["link"] or match["bare"].rstrip(_TRAILING_PUNCTUATION)
        url = urljoin(base_url, raw)
        if url.lower().startswith(("http://", "https://")):
            urls.setdefault(url, None)
    return list(urls)
