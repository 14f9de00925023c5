"""Extraction fidelity and speed on the real documentation sites of ../shared/corpus.

    .venv/bin/python benchmarks/extraction_eval.py [--sites scrapy-docs,cmake-docs]
        [--pages 150 | --all] [--fetch] [--out /tmp/docscrawl-extraction-eval.json]

Reads the HTML files that `../shared/corpus/real-sites.sh` serves (under /usr/share/doc),
or, with `--fetch`, downloads the same URLs from the running servers; every page is
parsed once with `docscrawl.extract.tree.html_root` (as the crawler parses) and only `extract_page`
is
timed (`time.process_time`, CPU). `--pages N` takes N pages per site, evenly spread over
the sorted file list (default 150); `--all` takes every page. Each page is timed
`--repeat` times (default 3) and the least CPU time is kept, which filters out noise
from other processes and garbage collection.

Per site it prints the six checks of seed 000 (heading coverage, breadcrumb coverage,
link ambiguity, template regions, identity agreement, fragment resolution), code blocks
with a language, navigation leaked into the Markdown, version agreement, and CPU
milliseconds per page (median, mean, p95, max), plus ground-truth checks computed from
the raw HTML with selectors written here, independently of the extractor:

* heading recall: every h1-h6 inside the site's reference main element (Sphinx:
  `div[role=main]`, `div.body`, `article`) is among `headings` (text compared after
  whitespace collapse and permalink-marker removal);
* code exact: the text of every `div.highlight pre` (or the site's code selector) equals
  the `code` of some code block (one leading newline and trailing newlines aside, as
  browsers render them);
* prose kept: the words of every `p` inside the reference main appear, in order and
  contiguous, in the Markdown's words (link targets removed);
* navigation leak: a page leaks when a link text of 12+ characters from a navigation
  element outside the reference main (nav, header, footer, aside, sidebars, relbars),
  that does not occur in the reference main's own text, occurs in the Markdown; or when
  the Markdown holds a chrome marker (`¶`, "Edit on GitHub", "View page source") that
  the reference main does not show as its own text (permalink markers left out).
* template: heading texts and paragraph words that occur in the reference mains of half
  the sampled pages or more are the site's template (issue 15: what repeats on most
  pages is never main content); they are neither required nor counted above;
* breadcrumbs right: the labels of the theme's visible trail (read here with its own
  selector) equal the extracted `breadcrumbs` labels, on pages that show a trail.

Figures go to stdout and to the JSON file named by `--out`.
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import statistics
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lxml import etree
from lxml.cssselect import CSSSelector

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from docscrawl.extract.model import PageExtract  # noqa: E402
from docscrawl.extract.page import extract_page  # noqa: E402
from docscrawl.extract.template.table import TemplateTable  # noqa: E402
from docscrawl.extract.template.tracker import TemplateTracker  # noqa: E402
from docscrawl.extract.tree import html_root  # noqa: E402
from tests.support.sitecoverage import html_files  # noqa: E402

SPHINX_MAIN = ("div[role=main]", "div.body", "article")
SPHINX_CODE = "div.highlight pre"
SPHINX_RELBAR = ("div.related[role=navigation]", "ul > li:not(.right)")
RTD_TRAIL = ("div[role=navigation] ul.wy-breadcrumbs", "li:not(.wy-breadcrumbs-aside)")


@dataclass(frozen=True)
class Site:
    """A real site: where it is served and read from, and the reference selectors."""

    start: str
    mount: str
    disk: str
    version: str | None  # the version its URLs name; None when unversioned
    main: tuple[str, ...] = SPHINX_MAIN  # reference main element, first match
    exclude: tuple[str, ...] = ()  # reference subtrees that are not content
    code: str | None = SPHINX_CODE  # reference code elements
    trail: tuple[str, str] | None = None  # reference trail: container, then its items
    trail_drop: tuple[str, ...] = ()  # labels of trail items that are not crumbs
    sphinx: bool = True


SITES: dict[str, Site] = {
    "scrapy-docs": Site("http://127.0.0.1:17101/en/2.8/", "/en/2.8/",
                        "/usr/share/doc/python-scrapy-doc/html", "2.8",
                        trail=RTD_TRAIL),
    "sphinx-docs": Site("http://127.0.0.1:17102/sphinx/", "/sphinx/",
                        "/usr/share/doc/sphinx-doc/html", None,
                        trail=SPHINX_RELBAR),
    "flask-docs": Site("http://127.0.0.1:17103/en/2.2.x/", "/en/2.2.x/",
                       "/usr/share/doc/python-flask-doc/html", "2.2.x",
                       trail=SPHINX_RELBAR),
    "cmake-docs": Site("http://127.0.0.1:17104/cmake/help/v3.25/", "/cmake/help/v3.25/",
                       "/usr/share/doc/cmake-data/html", "3.25",
                       trail=SPHINX_RELBAR),
    "mkdocs-docs": Site("http://127.0.0.1:17105/", "/", "/usr/share/doc/mkdocs/html", None,
                        main=("div[role=main]",), code="pre", sphinx=False),
    "rustdoc-syn": Site("http://127.0.0.1:17106/doc/syn/", "/doc/",
                        "/usr/share/doc/cargo/doc", None, main=("#main-content",),
                        exclude=("span.out-of-band", "span.notable-traits", "a.src",
                                 "rustdoc-toolbar", "#copy-path"),
                        code="div.example-wrap pre.rust", trail=("div.rustdoc-breadcrumbs", "a"),
                        sphinx=False),
    "pytest-docs": Site("http://127.0.0.1:17107/en/7.2.x/", "/en/7.2.x/",
                        "/usr/share/doc/python-pytest-doc/html", "7.2.x",
                        trail=SPHINX_RELBAR),
    # Not served by real-sites.sh: Debian's python3.11-doc, read from disk (the issue's
    # speed target names Python's documentation; the URL is where it would be served).
    "python-docs": Site("http://127.0.0.1:17110/3.11/", "/3.11/",
                        "/usr/share/doc/python3.11/html", "3.11", trail=SPHINX_RELBAR),
    "git-docs": Site("http://127.0.0.1:17108/docs/", "/docs/", "/usr/share/doc/git-doc", None,
                     main=("body",), exclude=("#footer", "#toc", "#footnotes"),
                     code="div.listingblock pre", sphinx=False),
    "glib-docs": Site("http://127.0.0.1:17109/gtk-doc/glib/", "/gtk-doc/",
                      "/usr/share/gtk-doc/html", None, main=("body",),
                      exclude=("table.navigation", "div.footer", "div.toc", "td.shortcuts"),
                      code="pre.programlisting", sphinx=False),
    # Issue 15: sites nobody here developed against (Sphinx in five more themes, and
    # generators with titles below h1, chrome inside the article, API references).
    "sqlalchemy-docs": Site("http://127.0.0.1:17110/en/14/", "/en/14/",
                            "/usr/share/doc/python-sqlalchemy-doc/html", None,
                            main=("div#docs-body", "div[role=main]")),
    "celery-docs": Site("http://127.0.0.1:17111/en/5.2/", "/en/5.2/",
                        "/usr/share/doc/python-celery-doc/html", None,
                        exclude=("div.deck",)),
    "hypothesis-docs": Site("http://127.0.0.1:17112/en/6.67/", "/en/6.67/",
                            "/usr/share/doc/python-hypothesis-doc/html", None),
    "requests-docs": Site("http://127.0.0.1:17113/en/2.28/", "/en/2.28/",
                          "/usr/share/doc/python-requests-doc/html", None),
    "click-docs": Site("http://127.0.0.1:17114/en/8.1.x/", "/en/8.1.x/",
                       "/usr/share/doc/python-click-doc/html", None),
    "ghc-guide": Site("http://127.0.0.1:17115/ghc/docs/users_guide/", "/ghc/docs/users_guide/",
                      "/usr/share/doc/ghc-doc/html/users_guide", None),
    "haddock-base": Site("http://127.0.0.1:17116/package/base/docs/", "/package/base/docs/",
                         "/usr/share/doc/ghc-doc/html/libraries/base-4.15.1.0", None,
                         main=("div#content",), exclude=("#synopsis", "#table-of-contents"),
                         code="pre", sphinx=False),
    "erlang-docs": Site("http://127.0.0.1:17117/doc/", "/doc/", "/usr/share/doc/erlang-doc/doc",
                        None, main=("div#content div.innertube", "div#content"),
                        exclude=("div.footer",), code="pre", sphinx=False),
    "boost-container": Site("http://127.0.0.1:17118/doc/libs/1_81_0/doc/html/container/",
                            "/doc/libs/1_81_0/doc/html/container/",
                            "/usr/share/doc/libboost1.81-doc/doc/html/container", None,
                            main=("div.section", "div.chapter", "div.book"),
                            exclude=("div.toc",), code="pre.programlisting", sphinx=False),
    "gsk4-docs": Site("http://127.0.0.1:17119/gsk4/", "/gsk4/", "/usr/share/doc/libgtk-4-doc/gsk4",
                      None, main=("section#main",), code="pre", sphinx=False),
    "sdl2-docs": Site("http://127.0.0.1:17120/sdl2/", "/sdl2/", "/usr/share/doc/libsdl2-doc/html",
                      None, main=("div#doc-content", "div.contents"),
                      exclude=("div.summary", "div.dynheader", "div.dyncontent"), code=None,
                      sphinx=False),
    "octave-manual": Site("http://127.0.0.1:17121/doc/v7.3.0/", "/doc/v7.3.0/",
                          "/usr/share/doc/octave/octave.html", None, main=("body",),
                          exclude=("div.nav-panel", "div.header", "div.element-contents"),
                          code="pre.example", sphinx=False),
    "r-manuals": Site("http://127.0.0.1:17122/doc/manuals/r-release/R-intro.html",
                      "/doc/manuals/r-release/", "/usr/share/doc/r-doc-html/manual", None,
                      main=("body",), exclude=("div.nav-panel", "div.header"),
                      code="pre.example", sphinx=False),
    "go-spec": Site("http://127.0.0.1:17123/ref/go_spec.html", "/ref/",
                    "/usr/share/doc/golang-1.19-doc/html", None, main=("body",), code="pre",
                    sphinx=False),
}
NAV_SELECTORS = (
    "nav, header, footer, aside, [role=navigation], div.sphinxsidebar, div.related,"
    " div.wy-nav-side, div.rst-versions, table.navigation, div.navheader, div.navfooter,"
    " #toc, div.toc, .sidebar, div.footer"
)
CHROME_MARKERS = ("¶", "Edit on GitHub", "View page source", "Show Source", "Quick search")
GENERIC_LINK_TEXTS = frozenset({
    "here", "click here", "read more", "more", "learn more", "see more", "link", "this",
    "details", "view details", "more info", "more information", "download", "source",
    "[source]", "docs", "documentation", "see here", "this page", "continue", "go",
})
MIN_NAV_TEXT = 12
LARGE_PAGE_CHARS = 40_000  # the proxy for Python-docs-sized pages (77,000 chars on average)
HEADING_MARKERS = "¶§#🔗 \u200b"
WORD = re.compile(r"\w+")
LINK_TARGET = re.compile(r"\]\((<[^>]*>|[^)\s]*)\)")
WS = re.compile(r"\s+")
REFRESH = re.compile(r"http-equiv=[\"']?refresh", re.IGNORECASE)


def css(selector: str) -> CSSSelector:
    return CSSSelector(selector, translator="html")


def norm(text: str) -> str:
    return WS.sub(" ", text).strip()


def words(text: str) -> str:
    return " ".join(w.lower() for w in WORD.findall(text))


# ---- loading -----------------------------------------------------------------------


def pages_of(site: Site, limit: int | None, fetch: bool) -> list[tuple[str, str]]:
    """(url, html) of the site's pages: `limit` spread evenly over the sorted paths."""
    files = html_files(site.start, site.mount, Path(site.disk))
    paths = sorted(files)
    if limit and len(paths) > limit:
        step = len(paths) / limit
        paths = [paths[int(i * step)] for i in range(limit)]
    origin = site.start.split("/", 3)
    prefix = "/".join(origin[:3])
    out = []
    for path in paths:
        url = prefix + path
        if fetch:
            with urllib.request.urlopen(url, timeout=30) as response:
                html = response.read().decode("utf-8", errors="replace")
        else:
            html = files[path].read_text(encoding="utf-8", errors="replace")
        if REFRESH.search(html[:3000]):
            continue  # a redirect stub: the crawler follows it instead of extracting
        out.append((url, html))
    return out


# ---- reference reading (independent of the extractor) ------------------------------


@dataclass
class Reference:
    main: etree._Element | None
    excluded: set[etree._Element] = field(default_factory=set)
    # Heading texts and paragraph words the site repeats on most pages (`site_template`):
    # template by issue 15's definition, so neither required nor counted.
    template: frozenset[str] = frozenset()

    def inside(self, el: etree._Element) -> bool:
        if self.main is None:
            return False
        node: etree._Element | None = el
        found = False
        while node is not None:
            if node in self.excluded:
                return False
            if node is self.main:
                found = True
            node = node.getparent()
        return found


def reference(root: etree._Element, site: Site) -> Reference:
    for selector in site.main:
        found = css(selector)(root)
        if found:
            main = found[0]
            excluded = {el for sel in site.exclude for el in css(sel)(main)}
            excluded |= set(css(NAV_SELECTORS)(main)) if not site.sphinx else set()
            return Reference(main, excluded)
    return Reference(None)


TEMPLATE_SHARE = 0.5  # a reference text on this share of the pages is the site's template
TEMPLATE_MIN_PAGES = 6


def site_template(pages: list[tuple[str, str]], site: Site) -> frozenset[str]:
    """Heading texts and paragraph words of the reference mains that occur on half the
    pages or more: what repeats on most pages of a site is template, not content (the
    definition of issue 15), read from the raw HTML independently of the extractor."""
    if len(pages) < TEMPLATE_MIN_PAGES:
        return frozenset()
    counts: Counter[str] = Counter()
    for _, html in pages:
        ref = reference(html_root(html), site)
        if ref.main is None:
            continue
        seen = {norm(ref_text(h, ref)).rstrip(HEADING_MARKERS).strip()
                for h in ref.main.iter("h1", "h2", "h3", "h4", "h5", "h6") if ref.inside(h)}
        seen |= {words("".join(p.itertext())) for p in ref.main.iter("p") if ref.inside(p)}
        counts.update(seen)
    return frozenset(t for t, n in counts.items() if t and n >= TEMPLATE_SHARE * len(pages))


def is_permalink(el: etree._Element) -> bool:
    """A heading's permalink marker: a same-page link showing at most two characters."""
    href = (el.get("href") or "").strip()
    return el.tag == "a" and href.startswith("#") and len(norm("".join(el.itertext()))) <= 2


def ref_text(el: etree._Element, ref: Reference) -> str:
    """Text of `el` without excluded subtrees and permalink markers."""
    parts: list[str] = [el.text or ""]
    for child in el:
        if isinstance(child.tag, str) and child not in ref.excluded and not is_permalink(child):
            parts.append(ref_text(child, ref))
        parts.append(child.tail or "")
    return "".join(parts)


# ---- per-page checks ---------------------------------------------------------------


@dataclass
class Tally:
    num: int = 0
    den: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, ok: bool, miss: str = "") -> None:
        self.den += 1
        if ok:
            self.num += 1
        elif len(self.misses) < 5:
            self.misses.append(miss[:160])

    def rate(self) -> float | None:
        return round(self.num / self.den, 4) if self.den else None


def heading_recall(root: etree._Element, ref: Reference, ext: PageExtract, t: Tally,
                   url: str) -> None:
    if ref.main is None:
        return
    got = Counter(norm(h.text) for h in ext.headings)
    for h in ref.main.iter("h1", "h2", "h3", "h4", "h5", "h6"):
        if not ref.inside(h):
            continue
        text = norm(ref_text(h, ref)).rstrip(HEADING_MARKERS).strip()
        if not text or text in ref.template:
            continue
        ok = got[text] > 0
        if ok:
            got[text] -= 1
        t.add(ok, f"{url}: {text}")


def code_exact(root: etree._Element, ref: Reference, site: Site, ext: PageExtract, t: Tally,
               url: str) -> None:
    if ref.main is None or site.code is None:
        return
    codes = Counter(c.code for c in ext.code_blocks)
    for pre in css(site.code)(ref.main):
        if not ref.inside(pre):
            continue
        text = "".join(_code_text(pre))
        if text.startswith("\n"):
            text = text[1:]
        text = text.rstrip("\n")
        if not text.strip():
            continue
        t.add(codes[text] > 0, f"{url}: {text[:80]!r}")


# Left out of the reference code text: line-number spans, and Sphinx viewcode's "[docs]"
# link (`a.viewcode-back`, floated to the right by basic.css: a link beside the source,
# not a line of it).
NOT_CODE_CLASSES = frozenset({"linenos", "viewcode-back"})


def _code_text(el: etree._Element) -> Iterable[str]:
    """Code text as shown, NOT_CODE_CLASSES left out."""
    yield el.text or ""
    for child in el:
        if isinstance(child.tag, str) and not NOT_CODE_CLASSES & set(
                (child.get("class") or "").split()):
            yield from _code_text(child)
        yield child.tail or ""


def prose_kept(ref: Reference, md_words: str, t: Tally, url: str) -> None:
    if ref.main is None:
        return
    for p in ref.main.iter("p"):
        if not ref.inside(p):
            continue
        text = words("".join(p.itertext()))
        if len(text) < 3 or text in ref.template:
            continue
        t.add(f" {text} " in md_words, f"{url}: {text[:100]}")


def nav_leak(root: etree._Element, ref: Reference, ext: PageExtract) -> list[str]:
    if ref.main is None:
        return [m for m in CHROME_MARKERS if m in ext.markdown]
    # a marker the article itself shows (Sphinx's docs explain the "¶" permalink) is content
    own = norm(ref_text(ref.main, ref))
    leaked = [m for m in CHROME_MARKERS if m in ext.markdown and m not in own]
    main_text = norm("".join(ref.main.itertext())).lower()
    md = norm(LINK_TARGET.sub("] ", ext.markdown)).lower()
    seen: set[str] = set()
    for nav in css(NAV_SELECTORS)(root):
        if ref.inside(nav):
            continue
        for a in nav.iter("a"):
            text = norm("".join(a.itertext()))
            key = text.lower()
            if len(text) < MIN_NAV_TEXT or key in seen or key in main_text:
                continue
            seen.add(key)
            if key in md:
                leaked.append(text)
    return leaked


def reference_trail(root: etree._Element, site: Site) -> list[str] | None:
    if site.trail is None:
        return None
    containers = css(site.trail[0])(root)
    if not containers:
        return None
    labels = []
    for item in css(site.trail[1])(containers[0]):
        label = norm("".join(item.itertext())).strip("»›/ ")
        link = item if item.tag == "a" else next(item.iter("a"), None)
        if not label and link is not None:  # an icon crumb: its accessible name
            label = norm(link.get("aria-label") or link.get("title") or "")
        labels.append(label)
    labels = [label for label in labels if label and label not in site.trail_drop]
    return labels or None


def version_right(site: Site, ext: PageExtract) -> bool | None:
    if site.version is None:
        return None
    value = (ext.version.value or "").lstrip("vV").removesuffix(".x")
    want = site.version.removesuffix(".x")
    return bool(value) and (value == want or value.startswith(want + "."))


def fragment_resolution(root: etree._Element, ext: PageExtract) -> tuple[int, int]:
    ids = {el.get("id") for el in root.iter() if isinstance(el.tag, str) and el.get("id")}
    ids |= {a.get("name") for a in root.iter("a") if a.get("name")}
    toc = [lk for lk in ext.links if lk.region == "table_of_contents" and lk.target == "fragment"]
    resolved = 0
    for link in toc:
        fragment = link.url.partition("#")[2]
        if not fragment or unquote(fragment) in ids or fragment in ids:
            resolved += 1
    return resolved, len(toc)


# ---- per site ----------------------------------------------------------------------


def evaluate(name: str, site: Site, limit: int | None, fetch: bool,
             repeat: int = 3) -> dict[str, Any]:
    pages = pages_of(site, limit, fetch)
    ms: list[float] = []
    main_chars: list[int] = []
    heading = Tally()
    code = Tally()
    prose = Tally()
    crumbs_right = Tally()
    version_ok = Tally()
    blocks_with_path = blocks = 0
    code_total = code_with_lang = 0
    leak_pages = 0
    leak_examples: list[str] = []
    crumb_sources: Counter[str] = Counter()
    generic_links = ambiguous = links_total = 0
    identity_pages = identity_ok = canonical_pages = 0
    frag_resolved = frag_total = 0
    warnings: Counter[str] = Counter()
    generators: Counter[str] = Counter()
    versions: Counter[str] = Counter()
    tracker = TemplateTracker(min_pages=3)
    pages_with_template = reclassified = 0
    # What a crawl learns first (the TemplateTable of docscrawl.extract.pipeline): one pass
    # over the pages feeds it, the timed pass reads it, as the crawl's pages are judged.
    template = site_template(pages, site)
    model = TemplateTable()
    for url, html in pages:
        model.observe(extract_page(html_root(html), url, html=html).signatures)
    for url, html in pages:
        root = html_root(html)
        best = float("inf")
        for _ in range(repeat):
            gc.collect()
            began = time.process_time()
            ext = extract_page(root, url, html=html, template_table=model)
            best = min(best, time.process_time() - began)
        ms.append(best * 1000)
        ref = reference(root, site)
        ref.template = template
        main_chars.append(sum(b.text_chars for b in ext.blocks))
        generators[ext.generator or "none"] += 1
        versions[f"{ext.version.status}:{ext.version.value}"] += 1
        warnings.update(w.code for w in ext.warnings)
        # 1. heading coverage (blocks with a heading path) and recall
        blocks += len(ext.blocks)
        blocks_with_path += sum(1 for b in ext.blocks if b.heading_path)
        heading_recall(root, ref, ext, heading, url)
        # code
        code_total += len(ext.code_blocks)
        code_with_lang += sum(1 for c in ext.code_blocks if c.language)
        code_exact(root, ref, site, ext, code, url)
        # prose
        md_words = " " + words(LINK_TARGET.sub("] ", ext.markdown)) + " "
        prose_kept(ref, md_words, prose, url)
        # navigation leak
        leaked = nav_leak(root, ref, ext)
        if leaked:
            leak_pages += 1
            if len(leak_examples) < 5:
                leak_examples.append(f"{url}: {leaked[:3]}")
        # 2. breadcrumbs
        crumb_sources[ext.breadcrumb_source] += 1
        trail = reference_trail(root, site)
        if trail is not None:
            got = [c.label for c in ext.breadcrumbs]
            crumbs_right.add([x.casefold() for x in got] == [x.casefold() for x in trail],
                             f"{url}: {got} != {trail}")
        # 3. link ambiguity
        for link in ext.links:
            links_total += 1
            if link.text.strip().lower() in GENERIC_LINK_TEXTS:
                generic_links += 1
                if not link.container_label and not link.heading_path:
                    ambiguous += 1
        # 4. templates
        changes = tracker.observe(url, ext.regions)
        if changes:
            pages_with_template += 1
            reclassified += sum(1 for c in changes if not c.confirmed)
        # 5. identity
        if ext.title and ext.main_heading:
            identity_pages += 1
            identity_ok += not any(w.code == "identity_mismatch" for w in ext.warnings)
        canonical_pages += ext.canonical_href is not None
        # 6. fragments
        ok, total = fragment_resolution(root, ext)
        frag_resolved += ok
        frag_total += total
        # version
        right = version_right(site, ext)
        if right is not None:
            version_ok.add(right, f"{url}: {ext.version.value} ({ext.version.status})")
    n = len(pages)

    def share(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None

    return {
        "reference_template_texts": len(template),
        "site": name,
        "pages": n,
        "generator": dict(generators),
        "cpu_ms": {
            "median": round(statistics.median(ms), 2) if ms else None,
            "mean": round(statistics.fmean(ms), 2) if ms else None,
            "p95": round(sorted(ms)[int(0.95 * (n - 1))], 2) if ms else None,
            "max": round(max(ms), 2) if ms else None,
        },
        "main_chars_mean": round(statistics.fmean(main_chars)) if main_chars else None,
        "heading_coverage": share(blocks_with_path, blocks),
        "heading_recall": heading.rate(),
        "heading_recall_n": heading.den,
        "code_blocks": code_total,
        "code_with_language": share(code_with_lang, code_total),
        "code_exact": code.rate(),
        "code_exact_n": code.den,
        "prose_kept": prose.rate(),
        "prose_kept_n": prose.den,
        "nav_leak_pages": share(leak_pages, n),
        "breadcrumb_sources": dict(crumb_sources),
        "breadcrumb_coverage": share(n - crumb_sources.get("none", 0), n),
        "breadcrumbs_right": crumbs_right.rate(),
        "breadcrumbs_right_n": crumbs_right.den,
        "links": links_total,
        "generic_links": generic_links,
        "link_ambiguity": share(ambiguous, links_total),
        "template_signatures": len(tracker.templates()),
        "pages_with_template_region": share(pages_with_template, n),
        "template_reclassified_regions": reclassified,
        "identity_agreement": share(identity_ok, identity_pages),
        "canonical_present": share(canonical_pages, n),
        "toc_fragment_links": frag_total,
        "fragment_resolution": share(frag_resolved, frag_total),
        "version_right": version_ok.rate(),
        "versions": dict(versions.most_common(4)),
        "warnings": dict(warnings.most_common()),
        "per_page": [
            {"url": url, "cpu_ms": round(t, 2), "main_chars": c}
            for (url, _), t, c in zip(pages, ms, main_chars, strict=True)
        ],
        "misses": {
            "heading": heading.misses, "code": code.misses, "prose": prose.misses,
            "nav_leak": leak_examples, "breadcrumbs": crumbs_right.misses,
            "version": version_ok.misses,
        },
    }


COLUMNS = (
    ("pages", "pages"), ("cpu_ms.median", "ms med"), ("cpu_ms.mean", "ms mean"),
    ("main_chars_mean", "main chr"), ("heading_coverage", "hd cov"),
    ("heading_recall", "hd rec"), ("code_with_language", "code lang"),
    ("code_exact", "code ex"), ("prose_kept", "prose"), ("nav_leak_pages", "nav leak"),
    ("breadcrumb_coverage", "crumb cov"), ("breadcrumbs_right", "crumb ok"),
    ("link_ambiguity", "ambig"), ("pages_with_template_region", "tmpl pg"),
    ("identity_agreement", "ident"), ("fragment_resolution", "frag"),
    ("version_right", "version"),
)


def _get(row: dict[str, Any], key: str) -> Any:
    value: Any = row
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def table(rows: Iterable[dict[str, Any]]) -> str:
    head = ["site", *(label for _, label in COLUMNS)]
    lines = [head]
    for row in rows:
        cells = [row["site"]]
        for key, _ in COLUMNS:
            value = _get(row, key)
            cells.append("-" if value is None else str(value))
        lines.append(cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True))
                     for line in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", default=",".join(SITES))
    parser.add_argument("--pages", type=int, default=150, help="pages per site (spread)")
    parser.add_argument("--all", action="store_true", help="every page of every site")
    parser.add_argument("--fetch", action="store_true", help="download from the servers")
    parser.add_argument("--repeat", type=int, default=3,
                        help="time each page this many times and keep the least CPU")
    parser.add_argument("--out", type=Path, default=Path("/tmp/docscrawl-extraction-eval.json"))
    args = parser.parse_args()
    rows = []
    for name in args.sites.split(","):
        site = SITES[name]
        if not args.fetch and not Path(site.disk).is_dir():
            print(f"{name}: not installed, skipped", file=sys.stderr)
            continue
        rows.append(evaluate(name, site, None if args.all else args.pages, args.fetch,
                             args.repeat))
        print(f"{name}: done ({rows[-1]['pages']} pages)", file=sys.stderr, flush=True)
    print(table(rows))
    large = [p for r in rows for p in r["per_page"] if p["main_chars"] >= LARGE_PAGE_CHARS]
    if large:
        times = [p["cpu_ms"] for p in large]
        print(f"pages with main content >= {LARGE_PAGE_CHARS:,} chars: {len(large)}, "
              f"mean {statistics.fmean(p['main_chars'] for p in large):,.0f} chars, "
              f"CPU ms median {statistics.median(times):.2f} mean {statistics.fmean(times):.2f}")
    if rows:
        print("CPU ms per page: extract_page only (parse excluded), time.process_time,"
              " least of --repeat runs.")
    args.out.write_text(json.dumps(rows, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"figures written to {args.out}")


if __name__ == "__main__":
    main()
