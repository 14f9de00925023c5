"""When a plainly fetched HTML page needs a browser: `sparse_reason`.

A page is *sparse* when the HTML the server sent does not hold the article, because a
script builds it in the browser. `sparse_reason` looks at the parsed tree only (no Scrapy,
no I/O) and answers with a reason code, or None when the page is complete as fetched.
The rules, in order:

1. no `<script>` at all: nothing can change in a browser, never sparse;
   nor a redirect written in HTML (an immediate `<meta http-equiv=refresh>`, as rustdoc's
   and MkDocs' moved-page stubs and mike's version root write beside a script doing the
   same): the spider follows it, the target is the page;
2. `main_selector_missing`: the site profile names a main-content selector
   (`{"selectors": {"main": "..."}}`) and no element matching it has text;
3. a page with at least `STRONG_TEXT_CHARS` characters of main-content text is complete;
4. `client_generator`: a client-rendered generator's shell (Docsify, Redoc, Swagger UI);
5. a page made by a static-site generator (Sphinx, MkDocs, mdBook, rustdoc, Javadoc,
   DocBook, Hugo, Antora...) is complete: its text is in the HTML by construction (its
   search page is a JavaScript widget with nothing to render without a query). So is a
   page whose `<meta name="generator">` names a tool that writes whole pages at build time
   (`STATIC_WRITERS`: Doxygen, Texinfo's texi2any/makeinfo), unless its HTML links
   nowhere on the site: Doxygen's start page holds a title and menus its scripts build
   from `menudata.js`, so rendering it is how its links are found;
6. a server-rendered page is complete: an application root (rule 7's, or Docusaurus's
   `#__docusaurus`, SvelteKit's `#svelte`, any `[data-server-rendered]`) already holds a
   heading and `RENDERED_ROOT_CHARS` of text outside `nav`, `header`, `footer` and `aside`.
   The framework rendered the page at build time and the browser would only hydrate it:
   a landing page (VitePress `layout: home`, Docusaurus's home) has little text, all of it
   in the HTML;
7. `empty_app_root`: an application root (`#app`, `#root`, `#__next`, `#__nuxt`,
   `#___gatsby`, `#q-app`, `[data-reactroot]`) that is empty (under 40 characters) and not
   marked `data-server-rendered`;
8. `noscript_requires_javascript`: a `<noscript>` asking to enable JavaScript;
9. a page whose own title is served is complete: an `h1` outside `nav`, `footer`, `aside`
   and the banner `header` whose words are in the `<title>` (RDoc's "class TSort::Cyclic" page of an
   exception with one line of prose, gi-docgen's one-line method pages, Erlang's guide
   covers). A generator that wrote the page's heading wrote its body; a client-rendered
   shell shows a site name at most, never the page's heading;
10. `little_text`: main-content text under `max(min_text_chars, body bytes x
   MIN_TEXT_RATIO)`, capped at `STRONG_TEXT_CHARS`: little text for the page's size;
   unless every script the page loads is one the site's complete pages load too
   (`inert_scripts`, learned by the caller with `complete_scripts`): the same menu and
   search scripts on a page with `STRONG_TEXT_CHARS` of text as fetched build no content,
   so a page carrying only those is short, not a shell (erl_docgen's User's Guide title
   pages, gi-docgen's one-line methods, Haddock's small modules, Doxygen's index pages).

Main-content text is the text of the profile selector's element, else of `main`,
`[role=main]` or `article` (all of the outermost matches: a landing page's feature cards
are several `article`s), else of `body` without `nav`, `header`, `footer` and `aside`;
scripts, styles, templates and noscript never count.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from functools import lru_cache

from lxml import etree

from docscrawl.discovery.refresh import meta_refresh_target
from docscrawl.extract.generator import detect_profile
from docscrawl.extract.profiles import select

__all__ = [
    "APP_ROOT_SELECTORS",
    "CLIENT_GENERATORS",
    "MIN_TEXT_CHARS",
    "SPARSE_REASONS",
    "STATIC_GENERATORS",
    "STATIC_WRITERS",
    "complete_scripts",
    "main_text_chars",
    "script_names",
    "sparse_reason",
]

MIN_TEXT_CHARS = 200
MIN_TEXT_RATIO = 0.005  # characters of text per byte of HTML below which a page is sparse
STRONG_TEXT_CHARS = 1000  # this much main-content text: never sparse (rule 3)
EMPTY_ROOT_CHARS = 40  # "Loading..." and a spinner label fit under this
MIN_TITLE_KEY = 3  # word characters of an h1 that can name a page (rule 9)
RENDERED_ROOT_CHARS = 80  # a hero's name and tagline: more than any loading placeholder

APP_ROOT_SELECTORS = ("#app", "#root", "#__next", "#__nuxt", "#___gatsby", "#q-app",
                      "[data-reactroot]")
# Roots a framework hydrates: when one holds the page, the page was rendered on the server.
HYDRATION_ROOT_SELECTORS = (*APP_ROOT_SELECTORS, "#__docusaurus", "#svelte",
                            "[data-server-rendered]")
_HEADINGS = ("h1", "h2", "h3")
# (name, what to look for, needle): `script` = a script src containing needle, `tag`,
# `id`, `class`, `text` = inline script text containing needle.
CLIENT_GENERATORS: tuple[tuple[str, str, str], ...] = (
    ("docsify", "text", "window.$docsify"),
    ("docsify", "script", "docsify"),
    ("redoc", "tag", "redoc"),
    ("redoc", "script", "redoc.standalone"),
    ("swagger-ui", "script", "swagger-ui-bundle"),
    ("swagger-ui", "id", "swagger-ui"),
)
STATIC_GENERATORS = frozenset({"sphinx", "mkdocs", "mdbook", "rustdoc", "javadoc", "docbook",
                               "gtkdoc", "hugo", "antora", "asciidoc"})
# `<meta name="generator">` words of tools that write every page whole at build time and
# have no extraction profile (their pages' scripts only build menus, trees and search).
STATIC_WRITERS = re.compile(r"\b(doxygen|texi2any|makeinfo)\b", re.IGNORECASE)
SPARSE_REASONS = ("main_selector_missing", "client_generator", "empty_app_root",
                  "noscript_requires_javascript", "little_text")

_NOSCRIPT_JS = re.compile(
    r"(enable|activate|turn on|requires?|needs?|must (have|use)|without)\b.{0,40}javascript"
    r"|javascript.{0,40}\b(required|disabled|needed|must be)",
    re.IGNORECASE | re.DOTALL,
)
_WORD = re.compile(r"\w+")
_SECTIONING = frozenset({"main", "article", "section"})
_NOT_TEXT = frozenset({"script", "style", "template", "noscript"})
_CHROME = frozenset({"nav", "header", "footer", "aside"})


def sparse_reason(
    root: etree._Element,
    *,
    body_bytes: int,
    main_selector: str | None = None,
    min_text_chars: int = MIN_TEXT_CHARS,
    inert_scripts: AbstractSet[str] = frozenset(),
) -> str | None:
    """Why the page at `root` must be rendered in a browser, or None (see the module doc).

    `body_bytes` is the size of the HTML as received; `main_selector` the site profile's
    main-content CSS selector, if any; `inert_scripts` the `script_names` of the site's
    pages that were complete as fetched (rule 9).
    """
    if not any(True for _ in root.iter("script")) or meta_refresh_target(root, ""):
        return None
    if main_selector and not any(_text_chars(el) for el in _safe_select(root, main_selector)):
        return "main_selector_missing"
    chars = main_text_chars(root, main_selector)
    if chars >= STRONG_TEXT_CHARS:
        return None
    if _client_generator(root):
        return "client_generator"
    if detect_profile(root) in STATIC_GENERATORS:
        return None
    if _static_writer(root) and _links_in_html(root):
        return None
    if _server_rendered(root):
        return None
    if _empty_app_root(root):
        return "empty_app_root"
    if any(_NOSCRIPT_JS.search(_all_text(el)) for el in root.iter("noscript")):
        return "noscript_requires_javascript"
    threshold = min(max(min_text_chars, int(body_bytes * MIN_TEXT_RATIO)), STRONG_TEXT_CHARS)
    if chars < threshold and not _title_heading_served(root):
        names = script_names(root)
        if names and names <= inert_scripts:
            return None
        return "little_text"
    return None


def script_names(root: etree._Element) -> frozenset[str]:
    """The file names of the page's external scripts (`../js/topbar.js` -> `topbar.js`:
    pages at other depths load the same file). Inline scripts are left out; a page with
    only those has `frozenset()`, which no learned set covers."""
    names = set()
    for el in root.iter("script"):
        src = (el.get("src") or "").split("?", 1)[0].split("#", 1)[0].rstrip("/")
        if src:
            names.add(src.rsplit("/", 1)[-1])
    return frozenset(names)


def complete_scripts(root: etree._Element, main_selector: str | None = None) -> frozenset[str]:
    """`script_names` of a page complete as fetched (`STRONG_TEXT_CHARS` of main-content
    text), else `frozenset()`: what the caller adds to the site's `inert_scripts`."""
    if main_text_chars(root, main_selector) < STRONG_TEXT_CHARS:
        return frozenset()
    return script_names(root)


def main_text_chars(root: etree._Element, main_selector: str | None = None) -> int:
    """Characters of main-content text (whitespace runs count as one)."""
    for css in (main_selector, "main", "[role=main]", "article"):
        if not css:
            continue
        found = _outermost(_safe_select(root, css))
        if found:
            return sum(_text_chars(el) for el in found)
    body = root.find("body")
    return _text_chars(body if body is not None else root, skip=_CHROME)


def _client_generator(root: etree._Element) -> str | None:
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        for name, kind, needle in CLIENT_GENERATORS:
            if (
                (kind == "tag" and el.tag == needle)
                or (kind == "id" and el.get("id") == needle)
                or (kind == "script" and el.tag == "script" and needle in (el.get("src") or ""))
                or (kind == "text" and el.tag == "script" and needle in (el.text or ""))
            ):
                return name
    return None


def _static_writer(root: etree._Element) -> bool:
    """The page says a `STATIC_WRITERS` tool wrote it (`<meta name="generator">`)."""
    return any((m.get("name") or "").strip().lower() == "generator"
               and STATIC_WRITERS.search(m.get("content") or "") for m in root.iter("meta"))


def _links_in_html(root: etree._Element) -> bool:
    """The HTML as fetched links to another page of its site: an `<a href>` that is
    relative (not `#...`, not `javascript:`, no scheme or host)."""
    for a in root.iter("a"):
        href = (a.get("href") or "").strip()
        if href and not href.startswith(("#", "//")) and not _SCHEME.match(href):
            return True
    return False


_SCHEME = re.compile(r"^[a-zA-Z][\w+.-]*:")


def _server_rendered(root: etree._Element) -> bool:
    """True when a hydration root already holds the page (rule 6): a heading with text and
    `RENDERED_ROOT_CHARS` of text, both outside the navigation chrome. An app shell's root
    is empty or holds a loading placeholder; a pre-rendered navigation bar alone does not
    count."""
    for css in HYDRATION_ROOT_SELECTORS:
        for el in _safe_select(root, css):
            if (_content_heading(el)
                    and _text_chars(el, skip=_CHROME) >= RENDERED_ROOT_CHARS):
                return True
    return False


def _title_heading_served(root: etree._Element) -> bool:
    """True when an `h1` outside the navigation chrome names the page (rule 9): its word
    characters, case folded, are a run of the `<title>`'s (gi-docgen writes
    `Gsk<span class=sep></span>BlendNode` for the title's `Gsk.BlendNode`)."""
    title = root.find(".//title")
    title_key = _word_key(_all_text(title)) if title is not None else ""
    if not title_key:
        return False
    for heading in root.iter("h1"):
        key = _word_key(_all_text(heading))
        if len(key) >= MIN_TITLE_KEY and key in title_key and not _in_chrome(heading):
            return True
    return False


def _in_chrome(el: etree._Element) -> bool:
    """Inside `nav`, `aside`, `footer`, or a `header` that is the page's banner; a header
    inside `main`, `article` or `section` heads that content (gi-docgen's page title)."""
    tags = [anc.tag for anc in el.iterancestors()]
    if any(tag in ("nav", "aside", "footer") for tag in tags):
        return True
    if "header" in tags:
        return not any(tag in _SECTIONING for tag in tags[tags.index("header") + 1:])
    return False


def _word_key(text: str) -> str:
    return "".join(_WORD.findall(text)).casefold()


def _content_heading(el: etree._Element) -> bool:
    """True when `el` holds a heading with text outside `nav`, `header`, `footer`, `aside`."""
    for heading in el.iter(*_HEADINGS):
        if (not any(anc.tag in _CHROME for anc in _ancestors_below(heading, el))
                and _all_text(heading).strip()):
            return True
    return False


def _outermost(found: list[etree._Element]) -> list[etree._Element]:
    """The elements of `found` not inside another one of them."""
    chosen = set(found)
    return [el for el in found if not any(anc in chosen for anc in el.iterancestors())]


def _empty_app_root(root: etree._Element) -> bool:
    for css in APP_ROOT_SELECTORS:
        for el in _safe_select(root, css):
            if el.get("data-server-rendered") is None and _text_chars(el) < EMPTY_ROOT_CHARS:
                return True
    return False


def _safe_select(root: etree._Element, css: str) -> list[etree._Element]:
    try:
        return select(root, css)
    except Exception:  # a profile selector lxml cannot translate selects nothing
        return []


def _all_text(el: etree._Element) -> str:
    return " ".join(el.itertext())


def _text_chars(el: etree._Element, skip: frozenset[str] = frozenset()) -> int:
    """Visible text characters under `el`, whitespace collapsed; element boundaries count
    as whitespace. Exact below STRONG_TEXT_CHARS; at or above it, possibly a lower bound
    (every decision compares with STRONG_TEXT_CHARS or less, so it decides the same).

    The usual page has far more text than that: its first texts, minus the raw text of
    hidden elements (scripts, styles...), already show it, and the rest is not read.
    Otherwise the text nodes outside `_NOT_TEXT` and `skip` are collected (a costlier
    query)."""
    if el.tag in _NOT_TEXT or el.tag in skip:
        return 0
    hidden: int | None = None
    seen = 0  # collapsed characters so far, plus one separator after the last word
    for text in el.itertext():
        words = text.split()
        seen += len(words) + sum(map(len, words))
        if seen > STRONG_TEXT_CHARS:
            if hidden is None:
                hidden = _hidden_chars(el, _NOT_TEXT | skip)
            if seen - 1 - hidden >= STRONG_TEXT_CHARS:
                return seen - 1 - hidden
    texts = _visible_texts(skip)(el)
    return len(" ".join(" ".join(texts).split()))


def _hidden_chars(el: etree._Element, hidden: frozenset[str]) -> int:
    """Characters of the text nodes inside `hidden` elements under `el`, each counted once,
    plus 2 per node (its separators). `iter(*tags)` runs in C: an XPath union of
    `.//tag//text()` walked the subtree once per tag."""
    chars = 0
    for node in el.iter(*hidden):
        if node is el or any(anc.tag in hidden for anc in _ancestors_below(node, el)):
            continue  # counted with its hidden ancestor
        chars += sum(len(text) + 2 for text in node.itertext() if text)
    return chars


def _ancestors_below(node: etree._Element, top: etree._Element) -> list[etree._Element]:
    """`node`'s ancestors strictly below `top`."""
    found = []
    for anc in node.iterancestors():
        if anc is top:
            break
        found.append(anc)
    return found


@lru_cache(maxsize=8)
def _visible_texts(skip: frozenset[str]) -> etree.XPath:
    hidden = " or ".join(f"ancestor::{tag}" for tag in sorted(_NOT_TEXT | skip))
    return etree.XPath(f"descendant-or-self::text()[not({hidden})]", smart_strings=False)


