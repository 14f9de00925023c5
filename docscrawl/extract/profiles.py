"""Per-generator selector tables: where the content and each navigation region live.

Pure data plus one helper that turns a CSS selector into a compiled XPath. Selectors
are ordered: earlier ones are preferred. Profile keys are the contract generator names
plus a few finer-grained profiles (`asciidoc`, `gtkdoc`) that `generator.py` maps
back onto the contract vocabulary.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from cssselect import HTMLTranslator
from lxml import etree


@dataclass(frozen=True, slots=True)
class Profile:
    """Selectors for one documentation generator; every field is an ordered tuple of CSS."""

    main: tuple[str, ...] = ()
    sidebar: tuple[str, ...] = ()
    toc: tuple[str, ...] = ()
    breadcrumb: tuple[str, ...] = ()
    pagination: tuple[str, ...] = ()
    primary_nav: tuple[str, ...] = ()
    footer: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    chrome: tuple[str, ...] = ()  # inside the main element, never content (permalinks...)


# Top-level division classes of DocBook XSL chunks (one of them wraps each page's text).
_DOCBOOK_DIVISION_NAMES = (
    "set", "book", "part", "chapter", "appendix", "preface", "article", "reference",
    "refentry", "section", "sect1", "sect2", "sect3", "sect4", "sect5", "simplesect",
    "glossary", "index", "bibliography", "colophon", "dedication", "qandaset", "partintro",
)
DOCBOOK_DIVISIONS: tuple[str, ...] = (
    *(f"body > div.{name}" for name in _DOCBOOK_DIVISION_NAMES),
    "div.book",
    "div.chapter",
    "div.refentry",
    "div.section",
    "div.sect1",
)

PROFILES: dict[str, Profile] = {
    "sphinx": Profile(
        main=(
            "div.body[role=main]",  # alabaster, classic, sphinx13, pallets, cmake
            "div[itemprop=articleBody]",  # Read the Docs theme
            "article#furo-main-content",  # furo
            "article.bd-article",  # pydata
            "div.document[role=main]",
            "div.body",
            "div.document",
        ),
        sidebar=(
            "nav.wy-nav-side",
            "div.sphinxsidebar",
            "aside.sidebar-drawer",
            "div.sidebar-drawer",
            "div.bd-sidebar-primary",
            "#bd-docs-nav",
        ),
        toc=(
            "div.toc-drawer",
            "aside.toc-drawer",
            "div.bd-sidebar-secondary",
            "nav.bd-toc-nav",
            "div.sphinxsidebar-navigation__contents",
            "nav.contents",
            "div.contents.local",
            "nav.contents.local",
        ),
        breadcrumb=(
            "div.rst-content > div[role=navigation]",
            "ul.wy-breadcrumbs",
            "div.related", "nav.bd-breadcrumbs", "ul.bd-breadcrumbs", "ol.bd-breadcrumbs",
        ),
        pagination=(
            "div.rst-footer-buttons",
            "div.related-pages",
            "div.relations",
            "div.prev-next-area",
            "footer.prev-next-footer",
        ),
        primary_nav=(
            "header.mobile-header",
            "nav.wy-nav-top",
            "div.pageheader",
            "header.bd-header",
            "nav.bd-header",
        ),
        footer=("div.footer[role=contentinfo]", "footer.bd-footer", "div.bottom-of-page"),
        related=("div.admonition.seealso",),
        chrome=("a.headerlink", "div.sphinxsidebar", "a.viewcode-link"),
    ),
    "mkdocs": Profile(
        main=(
            "article.md-content__inner",  # Material
            "div.md-content",
            "div.col-md-9[role=main]",  # plain mkdocs theme
            "div[role=main].rst-content",  # readthedocs theme for mkdocs
            "div[role=main]",
        ),
        sidebar=(
            "nav.md-nav--primary",
            "div.md-sidebar--primary",
            "nav.wy-nav-side",
        ),
        toc=(
            "nav.md-nav--secondary",
            "div.md-sidebar--secondary",
            "div.bs-sidebar",
        ),
        breadcrumb=("nav.md-path", "ul.wy-breadcrumbs", "ol.breadcrumb"),
        pagination=("nav.md-footer__inner", "nav.md-footer", "div.rst-footer-buttons"),
        primary_nav=("header.md-header", "nav.md-tabs", "div.navbar"),
        footer=("footer.md-footer", "footer.col-md-12"),
        chrome=("a.headerlink", "a.md-content__button", "nav.md-path"),
    ),
    "docusaurus": Profile(
        main=("article .theme-doc-markdown", "div.theme-doc-markdown", "article", "main"),
        sidebar=("aside.theme-doc-sidebar-container", "nav.menu", "div.theme-doc-sidebar-menu"),
        toc=(".table-of-contents", "div.theme-doc-toc-desktop", "div.theme-doc-toc-mobile"),
        breadcrumb=("nav.theme-doc-breadcrumbs", "ul.breadcrumbs"),
        pagination=(".pagination-nav", "nav.pagination-nav"),
        primary_nav=("nav.navbar",),
        footer=("footer.footer",),
        chrome=("a.hash-link", "div.theme-doc-footer", "div.theme-doc-version-badge"),
    ),
    "vitepress": Profile(
        main=(".vp-doc", "div.VPDoc main", "main.main"),
        sidebar=(".VPSidebar", "aside.VPSidebar"),
        toc=(".VPDocAsideOutline", "nav.VPDocAsideOutline", ".VPLocalNavOutlineDropdown"),
        pagination=(".prev-next", "nav.prev-next"),
        primary_nav=(".VPNav", "header.VPNav", ".VPNavBar"),
        footer=(".VPFooter", "footer.VPDocFooter"),
        chrome=("a.header-anchor", ".edit-info"),
    ),
    "mdbook": Profile(
        main=("#mdbook-content main", "#content main", "main", "#content"),
        sidebar=("#mdbook-sidebar", "nav#sidebar", "#sidebar", "ol.chapter"),
        pagination=("nav.nav-wrapper", "nav.nav-wide-wrapper"),
        primary_nav=("#mdbook-menu-bar", "#menu-bar", "div.menu-bar"),
    ),
    "rustdoc": Profile(
        main=("#main-content", "section.content", "main"),
        sidebar=("nav.sidebar", ".sidebar"),
        toc=("section#rustdoc-toc", "section#TOC"),
        breadcrumb=("div.rustdoc-breadcrumbs",),
        primary_nav=("rustdoc-topbar", "nav.sub", "rustdoc-search"),
        chrome=("a.doc-anchor", "a.anchor", "rustdoc-toolbar", "a.src", "button#copy-path"),
    ),
    "javadoc": Profile(
        main=("main", "div.contentContainer", "div.content-container"),
        toc=("nav.toc", "div.toc", "aside#sidebar"),
        breadcrumb=("ol.sub-nav-list", "div.sub-title"),
        primary_nav=("nav", "div.topNav", "div.top-nav", "header.flex-header"),
        footer=("footer", "div.bottomNav", "div.bottom-nav", "p.legal-copy"),
        chrome=("div.skip-nav", "div.skipNav"),
    ),
    "docbook": Profile(
        main=DOCBOOK_DIVISIONS,
        toc=("div.toc",),
        pagination=("div.navheader", "div.navfooter", "table.navigation"),
        footer=("div.footer",),
    ),
    "gtkdoc": Profile(
        main=DOCBOOK_DIVISIONS,
        toc=("div.toc", "td.shortcuts"),
        pagination=("table.navigation", "div.navheader", "div.navfooter"),
        footer=("div.footer",),
    ),
    "asciidoc": Profile(
        main=("#content",),
        toc=("#toc", "div.toc", "#toctitle"),
        footer=("#footer",),
        chrome=("#footer",),
    ),
    "hugo": Profile(
        main=(
            "main article",
            "div.td-content",  # docsy
            "div.book-page article",  # hugo-book
            "article.markdown",
            "div#body-inner",  # learn / relearn
            "main",
        ),
        sidebar=(
            ".td-sidebar",
            "nav.td-sidebar-nav",
            "aside.book-menu",
            "nav#sidebar",
            "aside#sidebar",
            "aside.sidebar",
            "nav.sidebar",
        ),
        toc=(
            ".td-sidebar-toc",
            "nav#TableOfContents",
            "div.td-toc",
            "aside.book-toc",
        ),
        breadcrumb=("nav[aria-label=breadcrumb]", "ol.breadcrumb", "#breadcrumbs", ".breadcrumbs"),
        pagination=("nav.pagination", "ul.pagination", "div.td-page-meta__nav", "nav.page-nav"),
        primary_nav=("nav.td-navbar", "header nav", "nav.navbar"),
        footer=("footer",),
        chrome=("a.anchor", "a.td-heading-self-link"),
    ),
    "antora": Profile(
        main=("article.doc", "main.article"),
        sidebar=("nav.nav-menu", "div.nav-container", "div.nav-panel-menu"),
        toc=("aside.toc", "aside.toc.sidebar", "div.toc-menu"),
        breadcrumb=("nav.breadcrumbs",),
        pagination=("nav.pagination",),
        primary_nav=("header.header", "nav.navbar"),
        footer=("footer.footer",),
        chrome=("a.anchor", "div.toolbar .edit-this-page"),
    ),
    "starlight": Profile(
        # The page title sits above .sl-markdown-content, so the whole <main> is preferred.
        main=("main[data-pagefind-body]", "main", ".sl-markdown-content"),
        sidebar=("nav.sidebar", "#starlight__sidebar", "div.sidebar-pane"),
        toc=(
            "starlight-toc",
            "nav[aria-labelledby=starlight__on-this-page]",
            "mobile-starlight-toc",
        ),
        pagination=("div.pagination-links", "footer .pagination-links"),
        primary_nav=("header.header", "div.header"),
        footer=("footer.sl-flex",),
        chrome=("a.sl-anchor-link", "span.sl-anchor-icon"),
    ),
    "gitbook": Profile(
        main=(
            "section.normal.markdown-section",
            "div.page-inner section",
            "div.page-inner",
            "main",
        ),
        sidebar=("div.book-summary", "nav[aria-label='Table of contents']", "aside"),
        toc=("div.page-toc", "aside[aria-label='Page outline']"),
        breadcrumb=("nav[aria-label=Breadcrumb]", "ol.breadcrumb"),
        pagination=("a.navigation", "div.navigation-links", "div.page-footer-nav"),
        primary_nav=("div.book-header", "header"),
        footer=("footer", "div.page-footer"),
    ),
    "docsify": Profile(
        main=(".markdown-section", "article.markdown-section", "#main", "section.content"),
        sidebar=("aside.sidebar", ".sidebar-nav", ".sidebar"),
        toc=("ul.app-sub-sidebar",),
        pagination=("div.docsify-pagination-container", ".docsify-pagination-container"),
        primary_nav=("nav.app-nav", ".app-nav"),
        chrome=("a.anchor .docsify-copy-code-button", "button.docsify-copy-code-button"),
    ),
    "redoc": Profile(
        main=(".api-content", "div.redoc-wrap .api-content", "redoc"),
        sidebar=(".menu-content", "ul[role=menu]"),
        chrome=("div.api-info a[download]",),
    ),
}


BARE_TAG = re.compile(r"[a-z][a-z0-9]*")


def find_tag(tag: str) -> Callable[[etree._Element], list[etree._Element]]:
    """A bare tag selector (`main`): `iter(tag)` runs in C, where the XPath that cssselect
    makes (`descendant-or-self::main`) walks every node, several times slower. The same
    elements in the same order, `root` included."""
    return lambda root: list(root.iter(tag))


@lru_cache(maxsize=512)
def compiled(css: str) -> Callable[[etree._Element], Any]:
    """Compile a CSS selector into a reusable query (cached: selectors are static)."""
    if BARE_TAG.fullmatch(css):
        return find_tag(css)
    return etree.XPath(HTMLTranslator().css_to_xpath(css))


def select(root: etree._Element, css: str) -> list[etree._Element]:
    """Elements under `root` matching `css`, in document order."""
    result = compiled(css)(root)
    if not isinstance(result, list):
        return []
    return [el for el in result if isinstance(el, etree._Element)]


def profile_for(name: str | None) -> Profile | None:
    """The profile for a generator or profile name, or None."""
    return PROFILES.get(name) if name else None


# Generator-independent vocabulary. Tokens come from class/id/aria-label values split on
# punctuation and camelCase, plus adjacent pairs and triples glued together
# ("table-of-contents" -> "tableofcontents"). First matching row wins.
REGION_VOCABULARY: tuple[tuple[str, frozenset[str]], ...] = (
    ("breadcrumb", frozenset({"breadcrumb", "breadcrumbs", "crumbs", "crumb", "trail"})),
    (
        "table_of_contents",
        frozenset({
            "toc", "tableofcontents", "onthispage", "pagetoc", "localtoc", "contents",
            "outline", "tocify", "inpage", "pageoutline", "doctoc", "rightsidebar",
        }),
    ),
    (
        "pagination",
        frozenset({
            "pagination", "pager", "paginator", "prevnext", "previousnext", "navfooter",
            "navheader", "pagenav", "footerbuttons", "paginationnav", "navlinks",
            "prevnextlinks", "docspages",
        }),
    ),
    ("related_content", frozenset({"related", "seealso", "relatedlinks", "furtherreading"})),
    ("footer_navigation", frozenset({"footer", "contentinfo", "sitefooter", "colophon"})),
    (
        "sidebar_navigation",
        frozenset({
            "sidebar", "sidenav", "navside", "menuvertical", "leftsidebar", "navtree",
            "doctree", "docsnav", "sidemenu", "leftmenu", "leftnav", "bookmenu", "navpanel",
            "booksummary", "sectionnav", "navmenu", "docssidebar", "complementary",
        }),
    ),
    (
        "primary_navigation",
        frozenset({
            "navbar", "topbar", "topnav", "masthead", "menubar", "sitenav", "globalnav",
            "mainnav", "header", "banner", "siteheader", "navtop",
        }),
    ),
)
# Tokens that make an element navigation whose kind is decided by context and shape.
NAV_TOKENS = frozenset({"nav", "navigation", "menu", "navlist", "links"})
# ARIA roles -> region hint ("nav" means navigation of a kind decided by context).
ROLE_HINTS: dict[str, str] = {
    "navigation": "nav",
    "menu": "nav",
    "menubar": "primary_navigation",
    "tree": "nav",
    "doc-toc": "table_of_contents",
    "doc-pagelist": "pagination",
    "banner": "primary_navigation",
    "contentinfo": "footer_navigation",
    "complementary": "aside",
}
# Link text that marks previous/next links (lowercase, stripped of arrows).
PAGINATION_TEXTS = frozenset({
    "next", "previous", "prev", "next page", "previous page", "older", "newer",
    "next chapter", "previous chapter", "next topic", "previous topic",
})
# rel / accesskey values of pagination links.
PAGINATION_RELS = frozenset({"next", "prev", "previous"})
PAGINATION_ACCESSKEYS = frozenset({"n", "p"})
# Elements that never hold main content (scored fallback and link labelling).
CHROME_TAGS = frozenset({
    "nav", "aside", "header", "footer", "form", "script", "style", "noscript", "template",
    "button", "select", "svg", "iframe", "dialog", "menu",
})
# Class/id tokens of chrome for the scored main-content fallback.
CHROME_TOKENS = frozenset({
    "sidebar", "sidenav", "navbar", "nav", "navigation", "menu", "toc", "breadcrumb",
    "breadcrumbs", "footer", "header", "masthead", "banner", "pagination", "pager", "search",
    "cookie", "modal", "popup", "related", "share", "social", "comments", "advert", "ads",
    "skip", "topbar", "toolbar",
})
# Path extensions of downloadable assets (links target "asset").
ASSET_EXTENSIONS = frozenset({
    "pdf", "zip", "gz", "tgz", "bz2", "xz", "7z", "tar", "rar", "png", "jpg", "jpeg", "gif",
    "svg", "webp", "ico", "bmp", "mp4", "webm", "mp3", "wav", "ogg", "epub", "mobi", "exe",
    "dmg", "msi", "deb", "rpm", "whl", "jar", "csv", "json", "xml", "txt", "yaml", "yml",
    "woff", "woff2", "ttf", "css", "js", "map", "apk", "iso", "doc", "docx", "xls", "xlsx",
    "ppt", "pptx", "odt", "rst",
})

_SPLIT = re.compile(r"[^0-9A-Za-z]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


VOCABULARY_CACHE = 2048  # entries; class strings repeat, ids (also passed) do not


def vocabulary_tokens(*values: str | None) -> frozenset[str]:
    """Lowercase word tokens of attribute values, plus glued adjacent pairs and triples."""
    return _vocabulary_tokens(values)


@lru_cache(maxsize=VOCABULARY_CACHE)
def _vocabulary_tokens(values: tuple[str | None, ...]) -> frozenset[str]:
    """Pure, so memoized: a site repeats the same class and id strings on every page."""
    tokens: set[str] = set()
    for value in values:
        if not value:
            continue
        for chunk in value.split():
            words = [w.lower() for w in _SPLIT.split(_CAMEL.sub(" ", chunk).replace(" ", "-")) if w]
            tokens.update(words)
            tokens.add("".join(words))
            for size in (2, 3):
                for i in range(len(words) - size + 1):
                    tokens.add("".join(words[i : i + size]))
    tokens.discard("")
    return frozenset(tokens)


# Every word `vocabulary_region` and NAV_TOKENS look for, and those it looks inside tokens.
_NAMING_WORDS = re.compile("|".join(sorted(
    {word for _, words in REGION_VOCABULARY for word in words} | NAV_TOKENS
    | {"breadcrumb", "sidebar"}, key=len, reverse=True)))


@lru_cache(maxsize=VOCABULARY_CACHE)
def may_name_region(value: str) -> bool:
    """False when no vocabulary token of `value` is a region or navigation word
    (`vocabulary_region`, NAV_TOKENS): each token is a run of the value's ASCII letters and
    digits glued and lowered, so one search there answers for all of them without making
    them (an id is new on every page; its tokens would be)."""
    return _NAMING_WORDS.search(_SPLIT.sub("", value).lower()) is not None


@lru_cache(maxsize=VOCABULARY_CACHE)
def vocabulary_region(tokens: frozenset[str]) -> str | None:
    """The first region whose vocabulary shares a token (or `sidebar`/`breadcrumb` inside one)."""
    for region, words in REGION_VOCABULARY:
        if tokens & words:
            return region
    for token in tokens:
        if "breadcrumb" in token:
            return "breadcrumb"
        if "sidebar" in token:
            return "sidebar_navigation"
    return None

# Main-content selectors distinctive enough to try when the generator is unknown.
DISTINCTIVE_MAIN: tuple[str, ...] = (
    "div.body[role=main]",
    "div[itemprop=articleBody]",
    "article.md-content__inner",
    ".theme-doc-markdown",
    ".vp-doc",
    "#main-content",
    "article.doc",
    ".sl-markdown-content",
    ".markdown-section",
    "article#furo-main-content",
    "article.bd-article",
)
# Generic landmarks, in order, after the profile's own selectors.
GENERIC_MAIN: tuple[str, ...] = ("main", "article", "[role=main]")
