"""Site-level version evidence (pure): shared signals, scope numbers, never a guess."""

from __future__ import annotations

from pathlib import Path

from docscrawl.extract.model import VersionEvidence, VersionInfo
from docscrawl.extract.site_versions import SiteVersions, page_signals
from docscrawl.extract.tree import html_root
from docscrawl.extract.version import detect_version

SITES = Path(__file__).resolve().parents[2] / "fixtures" / "sites" / "versions"


def _page(path: Path) -> tuple[set[tuple[str, str]], VersionInfo]:
    root = html_root(path.read_text(encoding="utf-8"), "http://d.test/")
    homes = ["".join(a.itertext()) for a in root.iter("a") if a.get("href") == "index.html"]
    return page_signals(root, homes, ("16", "17")), detect_version(root, "http://d.test/", None)[0]


def test_docbook_home_link_and_javadoc_title_suffix_are_shared_signals() -> None:
    docbook, _ = _page(SITES / "docbook/docs/16/install.html")
    javadoc, _ = _page(SITES / "javadoc/acme/17/docs/api/acme/widgets/Widget.html")
    assert ("sidebar", "16.2") in docbook
    assert ("title", "17") in javadoc


def test_a_signal_counts_once_most_pages_show_it() -> None:
    site = SiteVersions("http://d.test/docs/16/")
    for _ in range(2):
        site.observe({("sidebar", "16.2")})
    assert site.evidence() == []  # too few pages yet
    site.observe({("sidebar", "16.2")})
    assert [(e.source, e.value, e.site) for e in site.evidence()] == [
        ("url", "16", True), ("sidebar", "16.2", True)]
    for _ in range(3):
        site.observe(set())
    assert site.evidence()  # once shared, kept while half of the pages show it
    site.observe(set())
    assert site.evidence() == []  # shown by 3 pages of 7: not a site signal any more
    fresh = SiteVersions("http://d.test/docs/16/")
    for signals in ({("sidebar", "16.2")}, set(), set(), {("sidebar", "16.2")}):
        fresh.observe(signals)
    assert fresh.evidence() == []  # never shared by 80% of the pages


def test_disagreeing_signals_cancel_out_and_pages_keep_their_own_version() -> None:
    site = SiteVersions("http://d.test/docs/")
    for _ in range(4):
        site.observe({("title", "2.0"), ("sidebar", "3.1")})
    assert site.evidence() == []
    site = SiteVersions("http://d.test/docs/")
    for _ in range(4):
        site.observe({("title", "3.1")})
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
        site.observe({("title", "1.4")})
    info, _ = site.apply(VersionInfo(), [])
    assert (info.value, info.status) == ("1.4", "consistent")
    again = SiteVersions("http://d.test/en/14/")
    again.restore(site.state())
    assert again.evidence() == site.evidence()
    again.restore({"pages": "x"})  # a damaged state is ignored
    assert again.evidence() == site.evidence()
