"""docscrawl.discovery.sitemaps: XML/gzip/plain-text sitemaps and llms.txt."""

from __future__ import annotations

import gzip
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from docscrawl.discovery.sitemaps import (
    ParsedSitemap,
    SitemapEntry,
    SitemapError,
    iter_sitemap,
    parse_llms_txt,
    parse_sitemap,
)

BASE = "https://d.example/docs/sitemap.xml"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'

URLSET = f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset {NS}>
  <url><loc> https://d.example/docs/a </loc><lastmod> 2024-05-01T10:00:00+00:00 </lastmod></url>
  <url><loc>/docs/b</loc><changefreq>daily</changefreq></url>
  <url><loc>c.html</loc><lastmod></lastmod></url>
  <url><lastmod>2024-01-01</lastmod></url>
  <!-- <url><loc>https://d.example/commented</loc></url> -->
</urlset>
""".encode()

URLSET_ENTRIES = [
    SitemapEntry(loc="https://d.example/docs/a", lastmod="2024-05-01T10:00:00+00:00"),
    SitemapEntry(loc="https://d.example/docs/b", lastmod=None),
    SitemapEntry(loc="https://d.example/docs/c.html", lastmod=None),
]

INDEX = b"""<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>https://d.example/s1.xml.gz</loc><lastmod>2024-02</lastmod></sitemap>
<sitemap><loc>s2.xml</loc></sitemap>
</sitemapindex>"""


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (URLSET, ParsedSitemap("urlset", URLSET_ENTRIES)),
        (URLSET.replace(NS.encode(), b""), ParsedSitemap("urlset", URLSET_ENTRIES)),
        (gzip.compress(URLSET), ParsedSitemap("urlset", URLSET_ENTRIES)),
        (
            INDEX,
            ParsedSitemap(
                "sitemapindex",
                [
                    SitemapEntry("https://d.example/s1.xml.gz", "2024-02"),
                    SitemapEntry("https://d.example/docs/s2.xml", None),
                ],
            ),
        ),
        (
            b'<?xml version="1.0"?><s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9">'
            b"<s:url><s:loc>https://d.example/p</s:loc></s:url></s:urlset>",
            ParsedSitemap("urlset", [SitemapEntry("https://d.example/p", None)]),
        ),
        (
            b"\xef\xbb\xbf<urlset><url><loc>https://d.example/bom</loc></url></urlset>",
            ParsedSitemap("urlset", [SitemapEntry("https://d.example/bom", None)]),
        ),
        (
            b"<urlset><url><loc>https://d.example/?a=1&amp;b=2</loc></url></urlset>",
            ParsedSitemap("urlset", [SitemapEntry("https://d.example/?a=1&b=2", None)]),
        ),
        (b"<urlset/>", ParsedSitemap("urlset", [])),
        (
            "<urlset><url><loc>https://d.example/é</loc></url></urlset>".encode(),
            ParsedSitemap("urlset", [SitemapEntry("https://d.example/é", None)]),
        ),
    ],
    ids=["urlset", "no-namespace", "gzip", "index", "prefixed-ns", "bom", "amp", "empty", "utf8"],
)
def test_parse_xml_sitemap(body: bytes, expected: ParsedSitemap) -> None:
    assert parse_sitemap(body, base_url=BASE) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"https://d.example/a\nhttps://d.example/b\n", ["https://d.example/a", "https://d.example/b"]),
        (b"\r\n  https://d.example/a  \r\n\r\nHTTP://d.example/B\r\n",
         ["https://d.example/a", "HTTP://d.example/B"]),
        (gzip.compress(b"https://d.example/z\n"), ["https://d.example/z"]),
    ],
    ids=["lf", "crlf-spaces", "gzip"],  # gzip's bytes hold the time: ids that do not (xdist)
)  # fmt: skip
def test_parse_plain_text_sitemap(body: bytes, expected: list[str]) -> None:
    parsed = parse_sitemap(body, base_url=BASE)
    assert parsed == ParsedSitemap("urlset", [SitemapEntry(loc, None) for loc in expected])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"", "empty"),
        (b"  \n\t", "empty"),
        (b"<<<>>>", "unreadable XML"),
        (b"<html><body>Not found</body></html>", "root element is <html>"),
        (b"<rss version='2.0'><channel/></rss>", "root element is <rss>"),
        (b'{"urls": []}', "line 1 is not an http(s) URL"),
        (b"https://d.example/a\nnot a url\n", "line 2 is not an http(s) URL"),
        (b"\x00\x01\x02binary", "line 1"),
        (b"\x1f\x8b\x08\x00garbage-after-gzip-magic", "bad gzip data"),
    ],
)
def test_garbage_raises_sitemap_error(body: bytes, message: str) -> None:
    with pytest.raises(SitemapError, match=re.escape(message)) as info:
        parse_sitemap(body, base_url=BASE)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_size_limit_on_plain_body() -> None:
    body = b"https://d.example/a\n" * 100
    with pytest.raises(SitemapError, match="larger than 1000 bytes"):
        parse_sitemap(body, base_url=BASE, max_size=1000)
    assert len(parse_sitemap(body, base_url=BASE, max_size=len(body)).entries) == 100


def test_size_limit_on_gzip_bomb() -> None:
    bomb = gzip.compress(b"<urlset>" + b" " * (20 * 1024 * 1024) + b"</urlset>")
    assert len(bomb) < 100_000
    with pytest.raises(SitemapError, match="once decompressed"):
        parse_sitemap(bomb, base_url=BASE, max_size=1024 * 1024)


def test_gzip_exactly_at_the_limit_is_accepted() -> None:
    body = b"<urlset><url><loc>https://d.example/a</loc></url></urlset>"
    parsed = parse_sitemap(gzip.compress(body), base_url=BASE, max_size=len(body))
    assert parsed.entries == [SitemapEntry("https://d.example/a", None)]


def _billion_laughs(levels: int) -> bytes:
    entities = "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, levels + 1))
    return (
        f'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol0 "lol">{entities}]>'
        f"<urlset><url><loc>https://d.example/&lol{levels};</loc></url>"
        f"<url><loc>https://d.example/b</loc></url></urlset>"
    ).encode()


@pytest.mark.parametrize("levels", [2, 9])
def test_billion_laughs_does_not_expand(levels: int) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        parsed = parse_sitemap(_billion_laughs(levels), base_url=BASE)
    except SitemapError as exc:
        assert "unsafe XML" in str(exc)
    else:
        assert all("lol" not in entry.loc for entry in parsed.entries)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 100 * 1024


def test_external_entities_are_not_loaded() -> None:
    body = (
        b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
        b"<urlset><url><loc>https://d.example/&xxe;x</loc></url></urlset>"
    )
    parsed = parse_sitemap(body, base_url=BASE)
    assert parsed.entries == [SitemapEntry("https://d.example/x", None)]


LLMS = """# Project

> Summary with a bare link https://other.example/about.

## Docs

- [Quick start](/docs/start.md): first steps
- [API [v2]](https://d.example/docs/api.md "API reference")
- [Wiki](https://w.example/wiki/Foo_(bar))
- [Relative](guide/intro.md)
- [Quick start again](/docs/start.md)
- ![diagram](/img/arch.png)
- [Mail](mailto:team@d.example)
- [Angle](<https://d.example/docs/angle page.md>)
- See <https://third.example/x>, and also (https://fourth.example/y).
"""


def test_parse_llms_txt() -> None:
    assert parse_llms_txt(LLMS, base_url="https://d.example/docs/llms.txt") == [
        "https://other.example/about",
        "https://d.example/docs/start.md",
        "https://d.example/docs/api.md",
        "https://w.example/wiki/Foo_(bar)",
        "https://d.example/docs/guide/intro.md",
        "https://d.example/docs/angle page.md",
        "https://third.example/x",
        "https://fourth.example/y",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("no links here", []),
        ("[a](https://x.example/1) https://x.example/1", ["https://x.example/1"]),
        ("https://x.example/b https://x.example/a", ["https://x.example/b", "https://x.example/a"]),
        ("[self](#section)", ["https://d.example/llms.txt#section"]),
        ("[up](../x.md)", ["https://d.example/x.md"]),
    ],
)
def test_parse_llms_txt_table(text: str, expected: list[str]) -> None:
    assert parse_llms_txt(text, base_url="https://d.example/llms.txt") == expected


def test_iter_sitemap_reads_the_kind_first_and_entries_as_iterated() -> None:
    body = (b'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            b"<sitemap><loc>/a.xml</loc><lastmod>2026-01-01</lastmod></sitemap>"
            b"<!-- c --><sitemap><loc>https://d.example/b.xml</loc></sitemap>"
            b"<sitemap><lastmod>2026-01-02</lastmod></sitemap></sitemapindex>")
    stream = iter_sitemap(body, base_url=BASE)
    assert stream.kind == "sitemapindex"
    entries = iter(stream)
    assert next(entries) == SitemapEntry("https://d.example/a.xml", "2026-01-01")
    assert list(entries) == [SitemapEntry("https://d.example/b.xml", None)]
    with pytest.raises(SitemapError, match="root element is <html>"):
        iter_sitemap(b"<html><body>x</body></html>", base_url=BASE)  # before any entry


def test_a_large_sitemap_is_streamed_not_held_as_a_tree() -> None:
    """100,000 entries: a whole-tree parse takes over 100 MB; the stream frees each entry."""
    code = (
        "import resource, sys\n"
        "from docscrawl.discovery.sitemaps import iter_sitemap\n"
        "body = b'<urlset>' + b''.join(b'<url><loc>https://d.example/docs/page-%d.html</loc>"
        "<lastmod>2026-01-%02d</lastmod></url>' % (i, i % 28 + 1) for i in range(100000))"
        " + b'</urlset>'\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "count = sum(1 for _ in iter_sitemap(body, base_url='https://d.example/'))\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(count, (after - before) // 1024)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).resolve().parents[2])
    count, grown_mib = map(int, done.stdout.split())
    assert count == 100_000
    assert grown_mib < 20, f"parsing grew the process by {grown_mib} MiB"
