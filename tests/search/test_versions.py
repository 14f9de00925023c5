"""Versions named the way users write them: `--version 18.20.4` finds a crawl's
`v18.20.4` (also `18`, `v18`), an unknown one is refused in one line naming the crawl's
versions, and in a one-version crawl a number in the query is text to match ("SciPy
1.10.1 Release Notes"), not a filter that drops it. Real generator output: CMake's and
SciPy's release notes (Debian's cmake-doc and python-scipy-doc) served on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from docscrawl.search import Searcher, SearchIndex, VersionError
from docscrawl.search.versions import resolve
from tests.conftest import ROOT, crawl

CMAKE = Path("/usr/share/doc/cmake-data/html")
SCIPY = Path("/usr/share/doc/python-scipy-doc/html")


def docscrawl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "docscrawl.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("asked", "known", "found"), [
    ("18.20.4", ["v18.20.4"], "v18.20.4"),
    ("v18.20.4", ["18.20.4"], "18.20.4"),
    ("18", ["v18.20.4", "v20.1.0"], "v18.20.4"),
    ("v18", ["v18.20.4"], "v18.20.4"),
    ("V18.20", ["v18.20.4"], "v18.20.4"),
    ("2.2", ["2.2.x", "2.3.x"], "2.2.x"),
    ("2.2.4", ["2.2.x", "2.3.x"], "2.2.x"),   # the series that holds it
    ("2.2.4", ["2", "2.2"], "2.2"),           # the most precise series
    ("1.81.0", ["1_81_0"], "1_81_0"),
    ("Latest", ["2.0", "latest"], "latest"),
    ("stable", ["2.0", "3.6"], "2.0"),        # a default alias names the default
    ("3", ["2.0", "3.6", "latest"], "3.6"),
])
def test_resolve(asked: str, known: list[str], found: str) -> None:
    assert resolve(asked, known, known[0]) == found


@pytest.mark.parametrize(("asked", "known", "message"), [
    ("9.9", ["v18.20.4", "latest"], "version '9.9' is not in the index "
                                    "(versions: v18.20.4, latest)"),
    ("1.10", ["v1.10.0", "v1.10.1"], "version '1.10' names several versions in the index: "
                                     "v1.10.0, v1.10.1 (versions: v1.10.0, v1.10.1)"),
    ("19", ["v18.20.4"], "version '19' is not in the index (versions: v18.20.4)"),
])
def test_resolve_refuses_in_one_line(asked: str, known: list[str], message: str) -> None:
    with pytest.raises(VersionError) as refused:
        resolve(asked, known, known[0])
    assert str(refused.value) == message


def _crawl_release_notes(root: Path, seed: str, allow: str, out: Path) -> str:
    with StaticSite(root) as server:
        crawl(f"{server.url}{seed}", out, f"allow={allow}", "render=never")
        return server.url


@pytest.fixture(scope="module")
def cmake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """CMake's release notes, one page per release, every page labelled 3.25.1."""
    if not CMAKE.is_dir():
        pytest.skip(f"{CMAKE} is not installed (cmake-doc)")
    out = tmp_path_factory.mktemp("cmake") / "out"
    yield out, _crawl_release_notes(CMAKE, "/release/index.html", "/release/", out)


@pytest.mark.e2e
def test_version_spellings_select_the_crawls_version(cmake: tuple[Path, str]) -> None:
    out, _ = cmake
    assert SearchIndex.open(out).versions() == ["3.25.1"]
    for spelling in ("3.25.1", "v3.25.1", "3.25", "v3"):
        done = docscrawl("search", str(out), "policy changes", "--version", spelling, "-k", "1")
        assert done.returncode == 0, (spelling, done.stderr)
        assert done.stdout.startswith("# version 3.25.1 (--version)"), done.stdout
    unknown = docscrawl("search", str(out), "policy changes", "--version", "4.1")
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert unknown.stderr.splitlines() == [
        "docscrawl: error: version '4.1' is not in the index (versions: 3.25.1)"]


@pytest.mark.e2e
def test_a_number_in_a_one_version_query_is_text(cmake: tuple[Path, str]) -> None:
    """The crawl holds the notes of every release, all labelled 3.25.1: "3.25.1" in the
    query says which notes (3.25's, where its "3.25.1" updates are), and must not be
    dropped as a version filter."""
    out, origin = cmake
    result = Searcher(SearchIndex.open(out)).search("CMake 3.25.1 release notes", k=3)
    assert result.version_source == "none" and result.version == "3.25.1"
    assert f"{origin}/release/3.25.html#updates" in [hit.url() for hit in result.hits]
    assert not result.no_good_match


@pytest.mark.e2e
def test_scipy_v_label(tmp_path: Path) -> None:
    """The issue's case: SciPy's pages are labelled v1.10.1 (its "SciPy v1.10.1 Manual")."""
    if not SCIPY.is_dir():
        pytest.skip(f"{SCIPY} is not installed (python-scipy-doc)")
    out = tmp_path / "out"
    origin = _crawl_release_notes(SCIPY, "/release.html",
                                  r"release\.1\.(9|10)\.|/release\.html$", out)
    for spelling in ("1.10.1", "v1.10", "1"):
        done = docscrawl("search", str(out), "sparse", "--version", spelling, "-k", "1")
        assert done.returncode == 0 and "# version v1.10.1 (--version)" in done.stdout
    hits = Searcher(SearchIndex.open(out)).search("SciPy 1.10.1 Release Notes", k=3).hits
    assert hits[0].url().startswith(f"{origin}/release.1.10.1.html#")


@pytest.mark.e2e
def test_several_versions_any_spelling(demo: tuple[Path, Path, str]) -> None:
    """The demo crawl holds 2.0 (the default, also served under /docs/latest/) and 3.6."""
    _, out, _ = demo
    searcher = Searcher(SearchIndex.open(out))
    assert searcher.index.versions() == ["2.0", "3.6"]
    for spelling, version in (("v3.6", "3.6"), ("3", "3.6"), ("V2", "2.0"), ("LATEST", "2.0")):
        result = searcher.search("install acme", version=spelling, k=3)
        assert (result.version, result.version_source) == (version, "filter")
        assert {hit.meta["version"] for hit in result.hits} == {version}
    named = searcher.search("install acme 3.6 linux", k=3)  # several versions: a filter
    assert (named.version, named.version_source) == ("3.6", "query")
