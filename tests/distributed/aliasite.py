"""A small documentation site full of aliases, for comparing distributed and single crawls.

Every page is reachable under several spellings, and which spelling a worker meets first
depends on who fetches what: `?utm_source=` variants of the same page, 301 redirects from
an old path (`old/pN` -> `pN.html`), and section roots linked both as `secK/` and
`secK/index.html` (the same content, two URLs: the canonical URL is chosen by preference).
Every page links the home page as `index.html` while the seed is `/docs/`.
"""

from __future__ import annotations

import json
from pathlib import Path

PAGES = 24
SECTIONS = 4
TEXT = "Words that make the page long enough to be a real page of documentation. " * 6


def _page(title: str, links: list[tuple[str, str]]) -> str:
    anchors = " ".join(f"<a href='{href}'>{label}</a>" for href, label in links)
    return (f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1>"
            f"<p>{title}: {TEXT}</p><p>{anchors}</p></main></body></html>")


def page_links(n: int) -> list[tuple[str, str]]:
    """Links of page n: neighbours, a tracking variant, an old path, a section root."""
    nxt, far, old = (n + 1) % PAGES, (5 * n + 3) % PAGES, (7 * n + 2) % PAGES
    sec = n % SECTIONS
    return [(f"p{nxt}.html", "next"), (f"p{far}.html?utm_source=footer", "see also"),
            (f"old/p{old}", "moved"), (f"sec{sec}/index.html", "section"),
            (f"sec{(sec + 1) % SECTIONS}/", "next section"), ("index.html", "home")]


def make_alias_site(root: Path) -> Path:
    """Write the site under `root/docs/` and its routes; returns `root`."""
    docs = root / "docs"
    docs.mkdir(parents=True)
    index_links = [(f"p{n}.html", f"page {n}") for n in range(0, PAGES, 3)]
    index_links += [(f"p{n}.html?utm_source=home", f"page {n} again") for n in (1, 2)]
    index_links += [(f"sec{k}/", f"section {k}") for k in range(SECTIONS)]
    (docs / "index.html").write_text(_page("Home", index_links), encoding="utf-8")
    for n in range(PAGES):
        (docs / f"p{n}.html").write_text(_page(f"Page {n}", page_links(n)), encoding="utf-8")
    for k in range(SECTIONS):
        (docs / f"sec{k}").mkdir()
        links = [(f"../p{(k * 5 + j) % PAGES}.html", f"page {j}") for j in range(3)]
        links += [("index.html", "this section"), ("../", "home")]
        (docs / f"sec{k}" / "index.html").write_text(_page(f"Section {k}", links),
                                                       encoding="utf-8")
    routes = {f"/docs/old/p{n}": {"status": 301, "location": f"/docs/p{n}.html"}
              for n in range(PAGES)}
    (root / "_routes.json").write_text(json.dumps(routes), encoding="utf-8")
    return root
