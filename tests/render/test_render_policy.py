"""`sparse_reason`: which plainly fetched pages need a browser, and why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lxml import html

from docscrawl.render.policy import complete_scripts, main_text_chars, sparse_reason
from tests.conftest import SITES

FILLER = "Words that a server put into the page itself. " * 30  # about 1400 characters


def reason(markup: str, **kwargs: object) -> str | None:
    root = html.fromstring(markup)
    return sparse_reason(root, body_bytes=len(markup.encode()), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("markup", "expected"), [
    ("<html><body><div id=app></div></body></html>", None),  # no script: never
    ("<html><body><div id=app>Loading…</div><script src=a.js></script></body></html>",
     "empty_app_root"),
    ("<html><body><div id=__next data-server-rendered=true>Hi</div>"
     "<noscript>Please enable JavaScript to view this site.</noscript>"
     "<script src=a.js></script></body></html>", "noscript_requires_javascript"),
    ("<html><body><div id=main></div><script>window.$docsify = {}</script>"
     "<script src=//cdn/docsify.min.js></script></body></html>", "client_generator"),
    ("<html><body><redoc spec-url=api.yaml></redoc><script src=redoc.standalone.js>"
     "</script></body></html>", "client_generator"),
    ("<html><body><p>Short page.</p><script src=a.js></script></body></html>", "little_text"),
    (f"<html><body><main><p>{FILLER}</p></main><div id=app></div>"
     "<noscript>enable JavaScript</noscript><script src=a.js></script></body></html>", None),
    ("<html><head><meta name=generator content='Sphinx 7.2'></head><body><h1>Search</h1>"
     "<noscript>Please activate JavaScript to enable the search functionality.</noscript>"
     "<script src=searchtools.js></script></body></html>", None),
])
def test_sparse_reason(markup: str, expected: str | None) -> None:
    assert reason(markup) == expected


def test_profile_selector_missing_is_a_reason() -> None:
    page = f"<html><body><main><p>{FILLER}</p></main><script src=a.js></script></body></html>"
    assert reason(page, main_selector=".doc-body") == "main_selector_missing"
    assert reason(page, main_selector="main") is None


def test_text_for_the_page_size() -> None:
    text = "<p>" + "word " * 80 + "</p>"  # 400 characters: enough for a small page...
    small = f"<html><body><main>{text}</main><script src=a.js></script></body></html>"
    assert reason(small) is None
    big = small.replace("<script src=a.js>", "<script>" + "x" * 150_000)  # ...not a 150 KB one
    assert reason(big) == "little_text"


def test_main_text_ignores_navigation_and_scripts() -> None:
    root = html.fromstring("<html><body><nav>" + "menu " * 100 + "</nav><script>var x=1"
                           "</script><div>Body text</div></body></html>")
    assert main_text_chars(root) == len("Body text")


STATIC_PAGES = [*sorted((SITES / "demo").rglob("*.html")), SITES / "spa" / "index.html",
                SITES / "spa" / "about.html", SITES / "spa" / "broken" / "index.html"]


@pytest.mark.parametrize("path", STATIC_PAGES, ids=lambda p: str(p.relative_to(SITES)))
def test_static_fixture_pages_are_never_sparse(path: Path) -> None:
    assert reason(path.read_text(encoding="utf-8")) is None


SPA_SHELLS = [p for p in sorted((SITES / "spa").glob("*/**/index.html"))
              if p.parent.name != "broken"]


@pytest.mark.parametrize("path", SPA_SHELLS, ids=lambda p: str(p.relative_to(SITES)))
def test_spa_shells_are_sparse(path: Path) -> None:
    assert reason(path.read_text(encoding="utf-8")) == "client_generator"


# Landing pages a framework rendered at build time (VitePress `layout: home`, Docusaurus's
# classic home page): little text, all of it in the HTML. The Vite app next to them is an
# empty application root that its module script fills in the browser.
SSR_HOME = SITES / "ssr_home"


@pytest.mark.parametrize("name", ["vitepress", "docusaurus"])
def test_server_rendered_landing_pages_are_complete(name: str) -> None:
    page = (SSR_HOME / name / "index.html").read_text(encoding="utf-8")
    assert reason(page) is None


def test_an_empty_vite_app_root_is_still_sparse() -> None:
    page = (SSR_HOME / "vite-app" / "index.html").read_text(encoding="utf-8")
    assert reason(page) == "empty_app_root"


@pytest.mark.parametrize("markup", [
    # a pre-rendered navigation bar around an empty content area
    "<html><body><div id=root><nav><h2>Docs</h2><a href=/a>Getting started with the tool"
    "</a><a href=/b>Configuration reference</a><a href=/c>Command line</a></nav>"
    "<div class=content>Loading…</div></div><script src=a.js></script></body></html>",
    # text, but no heading: a loading screen with a long message
    "<html><body><div id=__next><p>" + "Please wait while the documentation loads. " * 3
    + "</p></div><script src=a.js></script></body></html>",
    # a heading and nothing else
    "<html><body><div id=app><h1>Loading</h1></div><script src=a.js></script></body></html>",
])
def test_app_shells_with_chrome_or_placeholders_stay_sparse(markup: str) -> None:
    assert reason(markup) is not None


def test_main_text_counts_every_outermost_article() -> None:
    cards = "".join(f"<article><h2>Card {n}</h2><p>{'word ' * 20}</p></article>"
                    for n in range(4))
    root = html.fromstring(f"<html><body><div>{cards}</div></body></html>")
    one = main_text_chars(html.fromstring(f"<html><body>{cards[:cards.index('</article>')]}"
                                          "</article></body></html>"))
    assert main_text_chars(root) >= 4 * one


STATIC_SMALL = SITES / "static_small"  # RDoc and mike output (fixtures/sources/rdoc)


def page_reason(path: Path) -> str | None:
    data = path.read_bytes()
    root = html.fromstring(data)
    return sparse_reason(root, body_bytes=len(data))


def installed(path: str) -> Path:
    """A page of an installed Debian documentation package (real generator output)."""
    if not Path(path).is_file():
        pytest.skip(f"{path} is not installed")
    return Path(path)


@pytest.mark.parametrize("source", [
    "mike",  # mike's version root: a noscript meta refresh and a location.replace script
    "/usr/share/doc/cargo/doc/syn/attr/enum.AttrStyle.html",  # rustdoc's moved-item stub
    "/usr/share/doc/mkdocs/html/user-guide/custom-themes.html",  # MkDocs' redirect page
])
def test_a_redirect_written_in_html_is_followed_not_rendered(source: str) -> None:
    """Three generators write a redirect as a meta refresh beside a script doing the same,
    on a page with no text: the spider follows the refresh, a browser has nothing to add."""
    path = STATIC_SMALL / "index.html" if source == "mike" else installed(source)
    assert page_reason(path) is None


@pytest.mark.parametrize("source", [
    "rdoc",  # RDoc's page of an exception class: its h1 and one line of prose
    "/usr/share/doc/libgtk-4-doc/gsk4/method.BlendNode.get_blend_mode.html",  # gi-docgen
    "/usr/share/doc/erlang-doc/doc/design_principles/users_guide.html",  # erl_docgen cover
])
def test_a_small_static_page_that_serves_its_own_heading_is_not_rendered(source: str) -> None:
    """Pages with little text whose `h1` names them (its words are in the `<title>`) came
    from a generator that wrote the page, not from a shell a script fills."""
    rdoc = STATIC_SMALL / "latest" / "Acme" / "Timeout.html"
    path = rdoc if source == "rdoc" else installed(source)
    assert main_text_chars(html.fromstring(path.read_bytes())) < 200  # little text indeed
    assert page_reason(path) is None


@pytest.mark.parametrize("markup", [
    # The shell's banner names the site: no page heading is served.
    "<html><head><title>Clock | Acme</title></head><body><header><h1>Acme</h1></header>"
    "<main></main><script src=app.js></script></body></html>",
    # An h1 that is not the title's.
    "<html><head><title>Clock | Acme</title></head><body><main><h1>Loading</h1></main>"
    "<script src=app.js></script></body></html>",
    # A refresh that is page behaviour (a minute), not a redirect.
    "<html><head><meta http-equiv=refresh content=60><title>Clock</title></head><body>"
    "<p>Short page.</p><script src=app.js></script></body></html>",
])
def test_shells_still_render(markup: str) -> None:
    assert reason(markup) == "little_text"


ERLANG = Path("/usr/share/doc/erlang-doc/doc")
GSK = Path("/usr/share/doc/libgtk-4-doc/gsk4")
HADDOCK = Path("/usr/share/doc/ghc-doc/html/libraries/base-4.15.1.0")


@pytest.mark.parametrize(("complete", "short"), [
    # erl_docgen: a chapter, and a User's Guide title page (h1, version, date).
    (ERLANG / "design_principles/des_princ.html", ERLANG / "oam/users_guide.html"),
    # gi-docgen: the namespace index, and a struct with one line of description.
    (GSK / "index.html", GSK / "struct.ColorStop.html"),
    # Haddock: a module with documentation, and a module of two constants.
    (HADDOCK / "Data-List.html", HADDOCK / "GHC-Constants.html"),
])
def test_a_short_page_loading_only_the_sites_inert_scripts_is_not_rendered(
        complete: Path, short: Path) -> None:
    """Real static generators' pages (Debian's erlang-doc, libgtk-4-doc, ghc-doc) load menu
    and search scripts; the site's complete pages load the same ones."""
    if not complete.exists() or not short.exists():
        pytest.skip(f"{complete.parent} is not installed")
    # A title its h1 does not match, so that rule 9 (the page's own heading served) is out
    # of the way and this rule is judged alone.
    page = re.sub(r"<title>.*?</title>", "<title>Docs</title>",
                  short.read_text(encoding="utf-8"), flags=re.S)
    assert reason(page) == "little_text"  # alone, a short page with scripts is suspect
    inert = complete_scripts(html.fromstring(complete.read_text(encoding="utf-8")))
    assert inert  # learned from the site's complete page
    assert reason(page, inert_scripts=inert) is None
    shell = page.replace("</body>", "<script src='app.bundle.js'></script></body>")
    assert reason(shell, inert_scripts=inert) == "little_text"  # a script no complete page loads


def test_only_a_complete_page_teaches_its_scripts() -> None:
    short = "<html><body><p>Short page.</p><script src=js/menu.js></script></body></html>"
    assert complete_scripts(html.fromstring(short)) == frozenset()
    full = f"<html><body><main><p>{FILLER}</p></main><script src=../js/menu.js?v=2></script>"
    assert complete_scripts(html.fromstring(full + "</body></html>")) == {"menu.js"}
    inline = "<html><body><p>Short page.</p><script>build()</script></body></html>"
    assert reason(inline, inert_scripts={"menu.js"}) == "little_text"


VERSIONS = SITES / "versions"
PAGES = SITES.parent / "pages"


@pytest.mark.parametrize("path", [
    # Doxygen 1.9.4: a globals index with a few entries, a file page with no members
    # (their menus are built by menu.js from menudata.js, the tree by navtree.js).
    PAGES / "titles" / "doxygen_globals_index.html",
    PAGES / "titles_none" / "doxygen_empty_file.html",
    # texi2any 6.8 with INFO_JS_DIR: a short chapter node loading info.js and modernizr.js.
    VERSIONS / "texinfo" / "manual" / "Searching.html",
    VERSIONS / "texinfo" / "manual" / "index.html",
], ids=lambda p: p.name)
def test_a_page_its_generator_wrote_whole_is_not_rendered(path: Path) -> None:
    """Short pages of tools that name themselves in `<meta name="generator">` and write
    every page at build time are complete, before any complete page taught their scripts."""
    assert reason(path.read_text(encoding="utf-8")) is None


def test_a_start_page_whose_links_only_scripts_write_is_still_rendered() -> None:
    """Doxygen's start page of an empty main page: its HTML links nowhere on the site
    (menus and tree come from menudata.js and navtreedata.js); rendering finds its links."""
    page = (PAGES / "render_policy" / "doxygen_mainpage.html").read_text(encoding="utf-8")
    assert reason(page) == "little_text"
    linked = page.replace('<div class="contents">\n',
                          '<div class="contents">\n<a href="files.html">Files</a>\n')
    assert linked != page and reason(linked) is None
