"""How many headings get an anchor, and whether each anchor exists on its page, per site.

Reads the installed Debian packages' HTML (the corpus sites' roots, see
/work/shared/corpus/real-sites.sh), extracts a sample of pages with `extract_page` (no
Scrapy, no server) and prints one JSON line per site:

    PYTHONPATH=$PWD python -m benchmarks.heading_anchors [--pages 40] [site ...]

`anchored`: headings with an anchor; `resolved`: anchors that are an `id` or `<a name>` on
the page; `template`: anchors on an element that is not inside the main content (the
main element itself, an element around it or beside it) and that several pages share
(a template's `id="header"`, never a section's); `section_share`:
anchored minus template over headings; `bare_with_ids`: headings without an anchor on a
page whose main content has ids (the gold-free signal).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from lxml import etree
from parsel import Selector

from docscrawl.extract.page import extract_page

SITES: dict[str, str] = {
    "scrapy-docs": "/usr/share/doc/python-scrapy-doc/html",
    "sphinx-docs": "/usr/share/doc/sphinx-doc/html",
    "flask-docs": "/usr/share/doc/python-flask-doc/html",
    "cmake-docs": "/usr/share/doc/cmake-data/html",
    "mkdocs-docs": "/usr/share/doc/mkdocs/html",
    "rustdoc-syn": "/usr/share/doc/cargo/doc/syn",
    "pytest-docs": "/usr/share/doc/python-pytest-doc/html",
    "git-docs": "/usr/share/doc/git-doc",
    "glib-docs": "/usr/share/gtk-doc/html/glib",
    "sqlalchemy-docs": "/usr/share/doc/python-sqlalchemy-doc/html",
    "celery-docs": "/usr/share/doc/python-celery-doc/html",
    "hypothesis-docs": "/usr/share/doc/python-hypothesis-doc/html",
    "requests-docs": "/usr/share/doc/python-requests-doc/html",
    "click-docs": "/usr/share/doc/python-click-doc/html",
    "ghc-guide": "/usr/share/doc/ghc-doc/html/users_guide",
    "haddock-base": "/usr/share/doc/ghc-doc/html/libraries/base-4.15.1.0",
    "erlang-docs": "/usr/share/doc/erlang-doc/doc",
    "boost-container": "/usr/share/doc/libboost1.81-doc/doc/html/container",
    "gsk4-docs": "/usr/share/doc/libgtk-4-doc/gsk4",
    "sdl2-docs": "/usr/share/doc/libsdl2-doc/html",
    "octave-manual": "/usr/share/doc/octave/octave.html",
    "r-manuals": "/usr/share/doc/r-doc-html/manual",
    "go-spec": "/usr/share/doc/golang-1.19-doc/html",
    "postgresql-15": "/usr/share/doc/postgresql-doc-15/html",
}
NAMES = etree.XPath("//@id | //a/@name", smart_strings=False)
MAIN_NAMES = etree.XPath(".//@id | .//a/@name", smart_strings=False)


def sample(root: Path, pages: int) -> list[Path]:
    """Up to `pages` HTML files spread evenly over the sorted tree (always the same)."""
    files = sorted(p for p in root.rglob("*.html") if p.is_file())
    step = max(1, len(files) // pages) if pages else 1
    return files[::step][:pages] if pages else files


def measure(site: str, root: Path, pages: int) -> dict[str, object]:
    """The counts of one site (see the module docstring)."""
    counts: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    anchors_by_page: list[list[str]] = []
    wraps: set[str] = set()
    for path in sample(root, pages):
        raw = path.read_bytes()
        if b"<h" not in raw.lower():
            continue
        html = raw.decode("utf-8", errors="replace")
        tree = Selector(text=html, type="html").root
        url = "http://127.0.0.1/" + path.relative_to(root).as_posix()
        try:
            extract = extract_page(tree, url, html=html)
        except Exception as exc:  # a benchmark reports, never stops
            print(f"{site}: {path}: {exc}", file=sys.stderr)
            continue
        names = set(NAMES(tree))
        anchors = [h.anchor for h in extract.headings if h.anchor]
        main_el = tree.xpath(extract.main_locator)[0] if extract.main_locator else None
        wraps.update(a for a in anchors if main_el is not None and _wraps(tree, a, main_el))
        counts["pages"] += 1
        counts["headings"] += len(extract.headings)
        counts["anchored"] += len(anchors)
        counts["resolved"] += sum(a in names for a in anchors)
        if extract.fragment_ids or anchors:
            counts["bare_with_ids"] += len(extract.headings) - len(anchors)
        anchors_by_page.append(anchors)
        seen.update(set(anchors))
    template = {a for a in wraps if seen[a] >= 3}
    counts["template"] = sum(a in template for page in anchors_by_page for a in page)
    share = ((counts["anchored"] - counts["template"]) / counts["headings"]
             if counts["headings"] else 0.0)
    ok = counts["resolved"] / counts["anchored"] if counts["anchored"] else 1.0
    return {"site": site, **counts, "section_share": round(share, 3),
            "resolved_share": round(ok, 3)}


def _wraps(tree: etree._Element, name: str, main_el: etree._Element) -> bool:
    """True when the element `name` targets is not inside the main content element."""
    for el in tree.iter():
        if isinstance(el.tag, str) and (el.get("id") == name or el.get("name") == name):
            return not any(a is main_el for a in el.iterancestors())
    return False


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", nargs="*", default=list(SITES))
    parser.add_argument("--pages", type=int, default=40, help="pages per site (0: all)")
    args = parser.parse_args(argv)
    for site in args.sites:
        root = Path(SITES[site])
        if not root.exists():
            print(f"{site}: {root} not installed", file=sys.stderr)
            continue
        print(json.dumps(measure(site, root, args.pages)), flush=True)


if __name__ == "__main__":
    main()
