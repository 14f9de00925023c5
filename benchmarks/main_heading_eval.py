"""Does `main_heading` name the page's own top heading? Measured on the real sites of
../shared/corpus (the HTML files real-sites.sh serves, read from /usr/share/doc).

    .venv/bin/python benchmarks/main_heading_eval.py [--sites mkdocs-docs,haddock-base]
        [--pages 200 | --all] [--out /tmp/docscrawl-main-heading.json]

The reference is read from the raw HTML with the selectors of `extraction_eval.SITES`
(the site's reference main element minus its excluded subtrees), independently of the
extractor: the page's own top heading is the first `h1`-`h6` of the highest rank inside
the reference main, or, on the sites whose title is no heading element, the site's title
element (`TITLE_ELEMENTS`: Haddock's caption, Doxygen's title div). Pages whose
reference main holds no heading at all are not judged. Texts are compared after
whitespace collapse and permalink-marker removal. Headings the site repeats on half the
sampled pages or more are its template, not a page's own (`extraction_eval.site_template`);
the extractor is given the template table a crawl would learn from the same pages. Per
site it prints the pages judged, the share whose `main_heading` is the reference and up to
5 misses (all of them in the JSON file), and the share of pages the gold-free `main heading`
check of `docscrawl check` flags (`site_checks.SiteScan`: the main heading is another of
the page's headings than its first top-level one, or none).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from lxml import etree

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.extraction_eval import (  # noqa: E402
    HEADING_MARKERS,
    SITES,
    Reference,
    Site,
    css,
    norm,
    pages_of,
    reference,
    site_template,
)
from docscrawl.extract.headings import heading_level  # noqa: E402
from docscrawl.extract.page import extract_page  # noqa: E402
from docscrawl.extract.template.table import TemplateTable  # noqa: E402
from docscrawl.extract.tree import html_root  # noqa: E402
from docscrawl.inspect.site_checks import SiteScan  # noqa: E402

# Sites whose page title is shown by an element that is no heading (first match wins).
TITLE_ELEMENTS: dict[str, tuple[str, ...]] = {
    "haddock-base": ("#module-header p.caption",),
    "sdl2-docs": ("div.headertitle div.title",),
    "gsk4-docs": ("section#main > header h1",),  # the header before the article
    "gtk4-docs": ("section#main > header h1",),
}


# Generators the corpus does not serve, read from their Debian packages' files (`apt-get
# download PKG` and `dpkg-deb -x PKG.deb DIR`, then `--root DIR`): nodejs-doc cannot be
# installed beside Node here, openjdk-17-doc is 275 MB. Judged only when present.
PACKAGED: dict[str, Site] = {
    "nodejs18-api": Site("http://127.0.0.1:17130/api/", "/api/", "/usr/share/doc/nodejs/api",
                         None, main=("#apicontent",), exclude=("a.srclink",), code="pre",
                         sphinx=False),
    "openjdk17-java": Site("http://127.0.0.1:17131/api/java.base/java/",
                           "/api/java.base/java/",
                           "/usr/share/doc/openjdk-17-jre-headless/api/java.base/java", None,
                           main=("main[role=main]",), code="pre", sphinx=False),
    # Served ad hoc for issue 27 (`python3 -m http.server`), read from disk: SciPy 1.10's
    # pydata-sphinx-theme, PostgreSQL 15's docbook-xsl manual, GTK 4's gi-docgen.
    "scipy-docs": Site("http://127.0.0.1:17272/doc/scipy/", "/doc/scipy/",
                       "/usr/share/doc/python-scipy-doc/html", None,
                       main=("main[role=main]",), exclude=("div.bd-toc",)),
    "postgres15": Site("http://127.0.0.1:17273/docs/15/", "/docs/15/",
                       "/usr/share/doc/postgresql-doc-15/html", "15", main=("body",),
                       exclude=("div.navheader", "div.navfooter", "div.toc"),
                       code="pre.programlisting", sphinx=False),
    "gtk4-docs": Site("http://127.0.0.1:17274/gtk4/", "/gtk4/", "/usr/share/doc/libgtk-4-doc/gtk4",
                      None, main=("section#main",), code="pre", sphinx=False),
}


# Sites benchmarks/corpus/more-sites.sh builds (under MORE_SITES_DIR) or serves from
# installed packages: generator families the corpus lacks. Judged only when present.
BUILT_DIR = os.environ.get("MORE_SITES_DIR", "/tmp/docscrawl-more-sites") + "/build"
MORE: dict[str, Site] = {
    "furo-flask": Site("http://127.0.0.1:17140/en/2.2.x/", "/en/2.2.x/",
                       f"{BUILT_DIR}/furo-flask", "2.2.2", main=("article[role=main]",)),
    "book-requests": Site("http://127.0.0.1:17141/en/2.28/", "/en/2.28/",
                          f"{BUILT_DIR}/book-requests", "2.28.1", main=("article.bd-article",)),
    "material-node": Site("http://127.0.0.1:17142/", "/", f"{BUILT_DIR}/material-node/20.20",
                          "20.20", main=("article.md-content__inner",), code="pre",
                          exclude=("a.headerlink",), sphinx=False),
    "docbook-gitman": Site("http://127.0.0.1:17143/docs/user-manual/", "/docs/user-manual/",
                           f"{BUILT_DIR}/docbook-gitman", None, main=("body",),
                           exclude=("div.navheader", "div.navfooter"), code="pre",
                           sphinx=False),
    "javadoc-lang3": Site("http://127.0.0.1:17144/commons-lang3/apidocs/",
                          "/commons-lang3/apidocs/", "/usr/share/doc/libcommons-lang3-java/api",
                          "3.12.0", main=("main[role=main]",), code="pre", sphinx=False),
    "rdoc-ruby": Site("http://127.0.0.1:17145/ruby/3.1/", "/ruby/3.1/",
                      f"{BUILT_DIR}/rdoc-ruby", "3.1.2", main=("main[role=main]",), code="pre",
                      sphinx=False),
}


def clean(text: str) -> str:
    return norm(text).rstrip(HEADING_MARKERS).strip()


def heading_text(el: etree._Element, ref: Reference) -> str:
    """Text of a heading without excluded subtrees and permalink markers (a link showing
    no word character; rustdoc's `As` struct name is a two-letter link and is text)."""
    parts: list[str] = [el.text or ""]
    for child in el:
        if child.tag == "br":
            parts.append(" ")  # javadoc's "Uses of Class<br>java.lang.Foo"
        elif isinstance(child.tag, str) and child not in ref.excluded and not (
                child.tag == "a" and (child.get("href") or "").startswith("#")
                and not any(c.isalnum() for c in "".join(child.itertext()))):
            parts.append(heading_text(child, ref))
        parts.append(child.tail or "")
    return "".join(parts)


def own_top_heading(root: etree._Element, ref: Reference, name: str) -> str | None:
    """The page's own top heading read from the raw HTML, or None when it shows none."""
    for selector in TITLE_ELEMENTS.get(name, ()):
        for el in css(selector)(root):
            if text := clean("".join(el.itertext())):
                return text
    if ref.main is None:
        return None
    best: tuple[int, str] | None = None
    for el in ref.main.iter():
        level = heading_level(el) if isinstance(el.tag, str) else None
        if level is None or not ref.inside(el):
            continue
        text = clean(heading_text(el, ref))
        if text and text not in ref.template and (best is None or level < best[0]):
            best = (level, text)
    return best[1] if best else None


def evaluate(name: str, site: Site, limit: int | None) -> dict[str, Any]:
    judged = right = 0
    misses: list[dict[str, str | None]] = []
    pages = pages_of(site, limit, fetch=False)
    # As a crawl judges its pages: by the template table learned from the site's pages
    # (what repeats on most of them is left out), and with the reference's template.
    model = TemplateTable()
    for url, html in pages:
        model.observe(extract_page(html_root(html), url, html=html).signatures)
    template = site_template(pages, site)
    check = SiteScan()  # the gold-free `main heading` check of `docscrawl check`
    for url, html in pages:
        root = html_root(html)
        ref = reference(root, site)
        ref.template = template
        expected = own_top_heading(root, ref, name)
        if expected is None:
            continue
        ext = extract_page(root, url, html=html, template_table=model)
        got = ext.main_heading
        check.add({"canonical_url": url, "title": ext.title, "main_heading": got,
                   "headings": [{"level": h.level, "text": h.text} for h in ext.headings]})
        judged += 1
        if got is not None and clean(got) == expected:
            right += 1
        else:
            misses.append({"url": url, "expected": expected, "got": got})
    share = round(right / judged, 4) if judged else None
    flagged = round(check.off_top / check.headed, 4) if check.headed else None
    return {"site": name, "judged": judged, "right": right, "share": share,
            "check_off_top": flagged, "check_examples": check.off_top_examples,
            "misses": misses}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", default=",".join(
        [*(n for n in SITES if n != "python-docs"), *PACKAGED, *MORE]))
    parser.add_argument("--root", type=Path, default=Path("/"),
                        help="where the packaged sites' files were extracted (dpkg-deb -x)")
    parser.add_argument("--pages", type=int, default=200, help="pages per site (spread)")
    parser.add_argument("--all", action="store_true", help="every page of every site")
    parser.add_argument("--out", type=Path, default=Path("/tmp/docscrawl-main-heading.json"))
    args = parser.parse_args()
    rows = []
    for name in args.sites.split(","):
        site = SITES.get(name) or MORE.get(name) or PACKAGED[name]
        if name in PACKAGED:
            site = replace(site, disk=str(args.root / site.disk.lstrip("/")))
        if not Path(site.disk).is_dir():
            print(f"{name}: not installed, skipped", file=sys.stderr)
            continue
        row = evaluate(name, site, None if args.all else args.pages)
        rows.append(row)
        print(f"{name:16} judged {row['judged']:5}  right {row['share']}"
              f"  check off-top {row['check_off_top']}", flush=True)
        for miss in row["misses"][:5]:
            print(f"    {miss['url']}\n      expected {miss['expected']!r}  got {miss['got']!r}")
    args.out.write_text(json.dumps(rows, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"figures written to {args.out}")


if __name__ == "__main__":
    main()
