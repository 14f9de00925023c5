"""Site-level versions and version-aware deduplication, crawled over a real HTTP server.

Fixture sites (fixtures/sites/versions/): a DocBook manual built by docbook-xsl under a bare
numeric directory whose every page's head links home as "Acme 16.2 Documentation"
(fixtures/sources/docbook/); PostgreSQL 15's manual (Debian's postgresql-doc-15), whose
every page links home as `<a accesskey="h" title="PostgreSQL 15.x Documentation">Home</a>`;
hand-written: a Javadoc tree
under `/acme/17/docs/api/` whose every title ends "(Acme SE 17 & Kit 17)"; a Docusaurus
site with three versions (latest at /docs/, /docs/next/, /docs/2.x/) whose introduction
page has the same text in every version.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from docscrawl.demo.server import FixtureServer, StaticSite
from tests.conftest import SITES, CrawlOutput, read_jsonl, run_crawl


@pytest.fixture(scope="module")
def versions_site() -> Iterator[FixtureServer]:
    with StaticSite(SITES / "versions") as server:
        yield server


def crawl(server: FixtureServer, path: str, out: Path) -> CrawlOutput:
    result = run_crawl(server.url + path, out, "render=never")
    assert result.returncode == 0, result.stderr[-2000:]
    return CrawlOutput(out, result)


@pytest.mark.parametrize(("path", "value", "pages"), [
    ("/docbook/docs/16/", "16.2", 5),
    ("/javadoc/acme/17/docs/api/", "17", 6),
])
def test_a_signal_every_page_shares_versions_every_page(
        versions_site: FixtureServer, tmp_path: Path, path: str, value: str, pages: int) -> None:
    """No page names its version where the page-level rules look; together they do.
    Pages written before the signal was known are updated at the end, chunks too."""
    out = crawl(versions_site, path, tmp_path / "out")
    assert len(out.pages) == pages
    for page in out.pages:
        version = page["version"]
        assert (version["value"], version["status"]) == (value, "consistent"), page["final_url"]
        assert {e["source"] for e in version["evidence"] if e["site"]} >= {"url"}
    chunks = read_jsonl(tmp_path / "out" / "chunks.jsonl")
    assert chunks and all(c["metadata"]["version"] == value for c in chunks)


POSTGRES = Path("/usr/share/doc/postgresql-doc-15/html")


def test_a_version_in_the_template_home_link_versions_every_page(tmp_path: Path) -> None:
    """Real docbook-xsl output: no page names its version where a page-level rule reads;
    the home link's `title` on every page does, and the evidence says so."""
    if not POSTGRES.is_dir():
        pytest.skip(f"{POSTGRES} is not installed (apt-get install postgresql-doc-15)")
    (tmp_path / "site" / "docs").mkdir(parents=True)
    (tmp_path / "site" / "docs" / "15").symlink_to(POSTGRES)
    with StaticSite(tmp_path / "site") as server:
        result = run_crawl(server.url + "/docs/15/", tmp_path / "out", "render=never",
                           "max_pages=40")
    assert result.returncode == 0, result.stderr[-2000:]
    out = CrawlOutput(tmp_path / "out", result)
    assert len(out.pages) == 40
    for page in out.pages:
        version = page["version"]
        assert version["status"] == "consistent", page["final_url"]
        assert version["value"].startswith("15."), page["final_url"]
        wheres = {e["where"] for e in version["evidence"] if e["site"]}
        assert "start directory" in wheres, page["final_url"]
        assert wheres & {"home link title", "page title"}, page["final_url"]


FLASK = Path("/usr/share/doc/python-flask-doc/html")


def test_a_sphinx_theme_states_its_version_in_the_home_link(tmp_path: Path) -> None:
    """Sphinx (Pallets theme, Debian's python-flask-doc): the relbar's home link reads
    "Flask Documentation (2.2.x)" on every page; the evidence names that place."""
    if not FLASK.is_dir():
        pytest.skip(f"{FLASK} is not installed (apt-get install python-flask-doc)")
    (tmp_path / "site" / "en").mkdir(parents=True)
    (tmp_path / "site" / "en" / "2.2.x").symlink_to(FLASK)
    with StaticSite(tmp_path / "site") as server:
        result = run_crawl(server.url + "/en/2.2.x/", tmp_path / "out", "render=never",
                           "max_pages=20")
    assert result.returncode == 0, result.stderr[-2000:]
    out = CrawlOutput(tmp_path / "out", result)
    # the budget's 20 pages: extracted, or one copy of another (the seed's index.html)
    ends = [e for e in out.log if e["event"] in ("extracted", "duplicate")]
    assert len(ends) == 20 and len(out.pages) >= 19
    for page in out.pages:
        version = page["version"]
        assert (version["value"], version["status"]) == ("2.2.x", "consistent")
        site = {(e["source"], e["where"]) for e in version["evidence"] if e["site"]}
        assert ("sidebar", "home link text") in site, page["final_url"]


def test_the_model_is_kept_for_the_next_crawl(versions_site: FixtureServer,
                                              tmp_path: Path) -> None:
    """A re-crawl starts from what the last one learned (site_model.json in the state
    directory); pages carried over unchanged keep the version written the first time."""
    model = tmp_path / "out" / "site_model.json"
    crawl(versions_site, "/docbook/docs/16/", tmp_path / "out")
    state = json.loads(model.read_text())["versions"]
    again = crawl(versions_site, "/docbook/docs/16/", tmp_path / "out")
    assert {p["version"]["value"] for p in again.pages} == {"16.2"}
    assert state["pages"] >= 3  # restored, not started again from nothing
    assert json.loads(model.read_text())["versions"]["pages"] >= state["pages"]


def test_identical_text_in_three_versions_is_three_records(versions_site: FixtureServer,
                                                           tmp_path: Path) -> None:
    out = crawl(versions_site, "/docusaurus/docs/", tmp_path / "out")
    intros = {p["canonical_url"].removeprefix(versions_site.url + "/docusaurus/docs/"):
              p for p in out.pages if p["canonical_url"].endswith("intro.html")}
    assert set(intros) == {"intro.html", "next/intro.html", "2.x/intro.html"}
    assert len({p["content_hash"] for p in intros.values()}) == 1
    assert {k: p["version"]["value"] for k, p in intros.items()} == {
        "intro.html": "3.x", "next/intro.html": "next", "2.x/intro.html": "2.x"}
    merged = [(e["url"], e["duplicate_of"]) for e in out.log
              if e["event"] == "duplicate" and e["reason"] == "same_content"]
    assert merged  # `/docs/` and `/docs/index.html` of one version still merge
    assert all(_version_dir(a) == _version_dir(b) for a, b in merged), merged


def _version_dir(url: str) -> str:
    rest = url.split("/docusaurus/docs/", 1)[1]
    return rest.split("/", 1)[0] if rest.startswith(("next/", "2.x/")) else ""


CARGO_DOC = Path("/usr/share/doc/cargo/doc")  # rustdoc: syn's crate root labels 1.0.107
GTK_DOC = Path("/usr/share/gtk-doc/html")  # gtk-doc: GLib's title page "for GLib 2.74.6"


@pytest.mark.parametrize(("root", "path", "prefix"), [
    (CARGO_DOC, "/doc/syn/", "1.0."), (GTK_DOC, "/gtk-doc/glib/", "2.74."),
])
def test_the_home_page_version_label_versions_every_page(
        tmp_path: Path, root: Path, path: str, prefix: str) -> None:
    """Real rustdoc and gtk-doc output: only the start page (crate root, book title page)
    labels the release; every page crawled from it gets that version, with its place."""
    if not root.is_dir():
        pytest.skip(f"{root} is not installed")
    mount = tmp_path / "site" / path.strip("/").rsplit("/", 1)[0]
    mount.mkdir(parents=True)
    (mount / path.strip("/").rsplit("/", 1)[1]).symlink_to(root / path.strip("/").rsplit("/", 1)[1])
    with StaticSite(tmp_path / "site") as server:
        result = run_crawl(server.url + path, tmp_path / "out", "render=never", "max_pages=12")
    assert result.returncode == 0, result.stderr[-2000:]
    out = CrawlOutput(tmp_path / "out", result)
    assert len(out.pages) >= 10  # a copy of a page may be skipped as a duplicate
    for page in out.pages:
        version = page["version"]
        assert (version["value"] or "").startswith(prefix), page["final_url"]
        wheres = {e["where"] for e in version["evidence"] if e["site"]}
        assert wheres == {"home page version label"}, page["final_url"]


R_MANUALS = Path("/usr/share/doc/r-doc-html/manual")


@pytest.mark.parametrize(("path", "value", "pages"), [
    ("/texinfo/manual/", "3.1", 3),  # texi2any's Top node: "This manual is for Acme, version 3.1."
    ("/sphinx_prose/docs/", "2.4", 3),  # "This documentation covers version 2.4 of Acme."
])
def test_the_start_page_front_matter_versions_every_page(
        versions_site: FixtureServer, tmp_path: Path, path: str, value: str,
        pages: int) -> None:
    """Texinfo and Sphinx output whose only statement of the release is a sentence of the
    start page's front matter; the other pages' numbers ("Since version 2.0", "Python
    3.8") are not read."""
    out = crawl(versions_site, path, tmp_path / "out")
    content = [p for p in out.pages if not p["final_url"].endswith(("genindex.html",
                                                                    "search.html"))]
    assert len(content) == pages
    for page in out.pages:
        version = page["version"]
        assert version["value"] == value, page["final_url"]
        assert [(e["source"], e["where"]) for e in version["evidence"] if e["site"]] == [
            ("banner", "home page front matter sentence")], page["final_url"]


def test_r_manuals_are_versioned_from_the_start_manual(tmp_path: Path) -> None:
    """Debian's r-doc-html, crawled from R-intro.html as the corpus does: only its front
    matter says "This manual is for R, version 4.2.2 Patched (2022-11-10)."."""
    if not R_MANUALS.is_dir():
        pytest.skip(f"{R_MANUALS} is not installed")
    mount = tmp_path / "site" / "manual"
    mount.parent.mkdir(parents=True)
    mount.symlink_to(R_MANUALS)
    with StaticSite(tmp_path / "site") as server:
        result = run_crawl(server.url + "/manual/R-intro.html", tmp_path / "out",
                           "render=never", "max_pages=3")
    assert result.returncode == 0, result.stderr[-2000:]
    out = CrawlOutput(tmp_path / "out", result)
    assert len(out.pages) >= 2
    assert {p["version"]["value"] for p in out.pages} == {"4.2.2"}
