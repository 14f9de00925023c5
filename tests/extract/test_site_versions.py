"""Site-level version evidence (pure): shared signals, scope numbers, never a guess."""

from __future__ import annotations

from pathlib import Path

import pytest

from docscrawl.extract.model import VersionEvidence, VersionInfo
from docscrawl.extract.site_versions import SiteVersions, home_link_texts, page_signals
from docscrawl.extract.tree import html_root
from docscrawl.extract.version import detect_version

SITES = Path(__file__).resolve().parents[2] / "fixtures" / "sites" / "versions"


def _page(path: Path, url: str = "http://d.test/x.html"
          ) -> tuple[set[tuple[str, str, str]], VersionInfo]:
    root = html_root(path.read_text(encoding="utf-8"), url)
    homes = ["".join(a.itertext()) for a in root.iter("a") if a.get("href") == "index.html"]
    attributes = home_link_texts(root, url, frozenset({"http://d.test/index.html"}))
    return (page_signals(root, homes, ("16", "17"), home_attributes=attributes),
            detect_version(root, url, None)[0])


def test_docbook_home_link_and_javadoc_title_suffix_are_shared_signals() -> None:
    """docbook-xsl's own output names the book's version only in the head's
    `<link rel="home" title=...>`; the page alone has no version."""
    docbook, alone = _page(SITES / "docbook/docs/16/install.html")
    javadoc, _ = _page(SITES / "javadoc/acme/17/docs/api/acme/widgets/Widget.html")
    assert docbook == {("sidebar", "16.2", "head link title")}
    assert alone.status == "unversioned"
    assert ("title", "17", "page title") in javadoc


POSTGRES = Path("/usr/share/doc/postgresql-doc-15/html")


def test_postgres_home_link_title_is_a_shared_signal() -> None:
    """PostgreSQL's docbook-xsl navheader links home as `<a accesskey="h"
    title="PostgreSQL 15.x Documentation">Home</a>` (Debian's postgresql-doc-15)."""
    page = POSTGRES / "tutorial-start.html"
    if not page.exists():
        pytest.skip(f"{page} is not installed (apt-get install postgresql-doc-15)")
    signals, alone = _page(page)
    assert alone.status == "unversioned"
    [(source, number, where)] = signals
    assert (source, where) == ("sidebar", "home link title") and number.startswith("15.")


def test_a_logo_alt_in_a_home_link_counts_and_other_links_do_not() -> None:
    html = ('<html><head><title>Intro</title></head><body>'
            '<a href="../index.html"><img src="logo.png" alt="Acme 3.4 logo"></a>'
            '<a href="other.html" title="Acme 9.9 notes">Notes</a></body></html>')
    root = html_root(html, "http://d.test/guide/intro.html")
    found = home_link_texts(root, "http://d.test/guide/intro.html",
                            frozenset({"http://d.test/index.html"}))
    assert found == [("home logo alt", "Acme 3.4 logo")]
    assert page_signals(root, [], home_attributes=found) == {("sidebar", "3.4", "home logo alt")}


def test_a_signal_counts_once_most_pages_show_it() -> None:
    site = SiteVersions("http://d.test/docs/16/")
    for _ in range(2):
        site.observe({("sidebar", "16.2", "home link text")})
    assert site.evidence() == []  # too few pages yet
    site.observe({("sidebar", "16.2", "home link text")})
    assert [(e.source, e.value, e.site, e.where) for e in site.evidence()] == [
        ("url", "16", True, "start directory"), ("sidebar", "16.2", True, "home link text")]
    for _ in range(3):
        site.observe(set())
    assert site.evidence()  # once shared, kept while half of the pages show it
    site.observe(set())
    assert site.evidence() == []  # shown by 3 pages of 7: not a site signal any more
    fresh = SiteVersions("http://d.test/docs/16/")
    shown = {("sidebar", "16.2", "home link text")}
    for signals in (shown, set(), set(), shown):
        fresh.observe(signals)
    assert fresh.evidence() == []  # never shared by 80% of the pages


def test_disagreeing_signals_cancel_out_and_pages_keep_their_own_version() -> None:
    site = SiteVersions("http://d.test/docs/")
    for _ in range(4):
        site.observe({("title", "2.0", "page title"), ("sidebar", "3.1", "version label")})
    assert site.evidence() == []
    site = SiteVersions("http://d.test/docs/")
    for _ in range(4):
        site.observe({("title", "3.1", "page title")})
    next_page = VersionInfo("next", "inferred", [VersionEvidence("url", "next")])
    assert site.apply(next_page, [])[0] is next_page
    older = VersionInfo("2.0", "inferred", [VersionEvidence("url", "2.0")])
    assert site.apply(older, [])[0] is older
    latest = VersionInfo("latest", "inferred", [VersionEvidence("url", "latest")])
    assert site.apply(latest, [])[0] is latest  # often the development version
    agreeing = VersionInfo("3.1.2", "inferred", [VersionEvidence("meta", "3.1.2")])
    combined = site.apply(agreeing, [])[0]
    assert (combined.value, combined.status) == ("3.1.2", "consistent")


def test_slug_of_a_release_series_agrees_and_the_state_round_trips() -> None:
    site = SiteVersions("http://d.test/en/14/")
    for _ in range(3):
        site.observe({("title", "1.4", "page title")})
    info, _ = site.apply(VersionInfo(), [])
    assert (info.value, info.status) == ("1.4", "consistent")
    again = SiteVersions("http://d.test/en/14/")
    again.restore(site.state())
    assert again.evidence() == site.evidence()
    again.restore({"pages": "x"})  # a damaged state is ignored
    assert again.evidence() == site.evidence()
    older = SiteVersions("http://d.test/en/14/")  # saved before signals kept their place
    older.restore({"pages": 3, "counts": [["title", "1.4", 3]]})
    assert [(e.source, e.value, e.where) for e in older.evidence()] == [
        ("url", "14", "start directory"), ("title", "1.4", None)]


GSK = Path("/usr/share/doc/libgtk-4-doc/gsk4/class.BroadwayRenderer.html")
SCRAPY = Path("/usr/share/doc/python-scrapy-doc/html/topics/commands.html")


def test_labelled_versions_are_read_and_feature_notes_are_not() -> None:
    """gi-docgen's namespace box labels the release ("Library Version: 4.8.3") and the
    interface it implements ("API Version: 4.0", not the documentation's version); Sphinx's
    "New in version 2.1:" notes are not labels."""
    if not GSK.exists() or not SCRAPY.exists():
        pytest.skip("libgtk-4-doc or python-scrapy-doc is not installed")
    gsk = page_signals(html_root(GSK.read_text(encoding="utf-8")), [])
    assert gsk == {("sidebar", "4.8.3", "version label")}
    notes = page_signals(html_root(SCRAPY.read_text(encoding="utf-8")), [])
    assert "New in version" in SCRAPY.read_text(encoding="utf-8")
    assert {where for _, _, where in notes} <= {"page title"}
    site = SiteVersions("http://d.test/gsk4/")
    for _ in range(4):
        site.observe(gsk)
    assert [(e.value, e.where) for e in site.evidence()] == [("4.8.3", "version label")]
    two = SiteVersions("http://d.test/gsk4/")
    for _ in range(4):
        two.observe({("sidebar", "4.8.3", "version label"), ("sidebar", "5.0", "version label")})
    assert two.evidence() == [] and len(two.shown()) == 2  # disagreeing: never a guess


def _signals(path: Path) -> set[tuple[str, str, str]]:
    root = html_root(path.read_text(encoding="utf-8"))
    classes = {c for el in root.iter() if isinstance(el.tag, str)
               for c in (el.get("class") or "").split()}
    ids = {el.get("id") for el in root.iter() if isinstance(el.tag, str) and el.get("id")}
    return page_signals(root, [], classes=classes, ids=ids)


SYN = Path("/usr/share/doc/cargo/doc/syn")
GLIB = Path("/usr/share/gtk-doc/html/glib")


@pytest.mark.parametrize(("home", "other", "start", "value"), [
    # rustdoc labels the crate's version on the crate root only (Debian's cargo-doc).
    (SYN / "index.html", SYN / "struct.Ident.html", "http://d.test/doc/syn/", "1.0.107"),
    # gtk-doc's book title page: `<p class="releaseinfo">for GLib 2.74.6 ...` (libglib2.0-doc).
    (GLIB / "index.html", GLIB / "glib-Arrays.html", "http://d.test/gtk-doc/glib/", "2.74."),
])
def test_the_home_page_version_label_speaks_for_the_site(
        home: Path, other: Path, start: str, value: str) -> None:
    if not home.exists() or not other.exists():
        pytest.skip(f"{home} is not installed")
    assert _signals(other) == set()  # the other pages state no version
    site = SiteVersions(start)
    site.observe(_signals(home), home=True)
    site.observe(_signals(other))
    info, _ = site.apply(VersionInfo(), [])
    assert info.value is not None and info.value.startswith(value)
    assert [(e.site, e.where) for e in info.evidence] == [(True, "home page version label")]
    again = SiteVersions(start)
    again.restore(site.state())
    assert again.evidence() == site.evidence()
    elsewhere = SiteVersions(start)  # the same label on another page is one page's signal
    elsewhere.observe(_signals(home))
    elsewhere.observe(_signals(other))
    assert elsewhere.evidence() == []


def _markup_signals(markup: str) -> set[tuple[str, str, str]]:
    root = html_root(markup)
    classes = {c for el in root.iter() if isinstance(el.tag, str)
               for c in (el.get("class") or "").split()}
    ids = {el.get("id") for el in root.iter() if isinstance(el.tag, str) and el.get("id")}
    return page_signals(root, [], classes=classes, ids=ids)


def test_a_heading_slug_that_mentions_versions_is_not_a_version_label() -> None:
    """texi2any's table of contents and headings (R's manuals): the ids are slugs of the
    headings, "2.3 What is the current version of R?", "5.7.2 ... inversion"; their section
    numbers are not versions. A short id or class naming a version still is."""
    texinfo = (
        '<html><body><div class="contents"><ul class="no-bullet">\n'
        '    <li><a id="toc-What-is-the-current-version-of-R_003f-1" '
        'href="#What-is-the-current-version-of-R_003f">2.3 What is the current version of R?'
        '</a></li>\n'
        '    <li><a id="toc-Linear-equations-and-inversion-1" '
        'href="#Linear-equations-and-inversion">5.7.2 Linear equations and inversion</a></li>\n'
        '</ul></div>\n<span id="Linear-equations-and-inversion-1"></span>'
        '<h4 class="subsection">5.7.2 Linear equations and inversion</h4>\n</body></html>')
    assert _markup_signals(texinfo) == set()
    for name in ('id="projectnumber"', 'class="rtd-version"', 'class="mdVersion"'):
        chrome = f"<html><body><div {name}>2.8.1</div></body></html>"
        assert _markup_signals(chrome) == {("sidebar", "2.8.1", "version label")}, name


def test_the_start_page_front_matter_speaks_only_where_nothing_is_shared() -> None:
    """Texinfo's Top node states the release in prose (texi2any's own output); read on the
    start page (any file name: R's manuals start at R-intro.html), it versions every page;
    read elsewhere, or where the pages share a version, it does not."""
    top = html_root((SITES / "texinfo/manual/index.html").read_text(encoding="utf-8"))
    chapter = html_root((SITES / "texinfo/manual/Installing.html").read_text(encoding="utf-8"))
    start = "http://d.test/manual/acme.html"
    site = SiteVersions(start)
    assert start in site.home
    site.observe(page_signals(top, [], front_matter=True), home=True)
    site.observe(page_signals(chapter, [], front_matter=False))
    info, _ = site.apply(VersionInfo(), [])
    assert info.value == "3.1"
    assert [(e.source, e.site, e.where) for e in info.evidence] == [
        ("banner", True, "home page front matter sentence")]
    shared = SiteVersions(start)
    shared.observe(page_signals(top, [], front_matter=True), home=True)
    for _ in range(4):
        shared.observe({("title", "3.0", "page title")})
    assert [e.value for e in shared.evidence()] == ["3.0"]
    elsewhere = SiteVersions(start)  # the same sentence on another page: one page's signal
    elsewhere.observe(page_signals(top, [], front_matter=True))
    elsewhere.observe(page_signals(chapter, []))
    assert elsewhere.evidence() == []


def test_pages_are_read_for_signals_early_then_sampled_and_the_home_page_always() -> None:
    from docscrawl.extract.site_versions import FULL_PAGES, SAMPLE_EVERY

    site = SiteVersions("http://d.test/docs/")
    other = "http://d.test/docs/page.html"
    wanted = []
    for _ in range(FULL_PAGES):  # every page until FULL_PAGES were read
        wanted.append(site.wants(other))
        site.observe(set())
    assert wanted == [True] * FULL_PAGES
    later = [site.wants(other) for _ in range(3 * SAMPLE_EVERY)]
    assert later.count(True) == 3 and later.count(False) == 3 * SAMPLE_EVERY - 3
    assert all(site.wants("http://d.test/docs/") for _ in range(SAMPLE_EVERY))  # home
