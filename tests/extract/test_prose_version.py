"""The release a manual's front matter states in prose (`docscrawl.extract.prose_version`).

Fixture pages are the generators' own output (fixtures/sources/texinfo/ built by texi2any
6.8, fixtures/sources/sphinx_prose/ by Sphinx 9.0.4); R's manuals are Debian's r-doc-html.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from docscrawl.extract.prose_version import front_matter_versions, stated_version
from docscrawl.extract.tree import html_root

VERSIONS = Path(__file__).resolve().parents[2] / "fixtures" / "sites" / "versions"
R_MANUALS = Path("/usr/share/doc/r-doc-html/manual")


def _versions(path: Path) -> list[str]:
    return front_matter_versions(html_root(path.read_text(encoding="utf-8"), "http://d.test/"))


@pytest.mark.parametrize(("path", "expected"), [
    # Texinfo's Top node: `@insertcopying` puts "This manual is for Acme, version 3.1." there.
    (VERSIONS / "texinfo/manual/index.html", ["3.1"]),
    # A Sphinx start page: "This documentation covers version 2.4 of Acme. It requires
    # Python 3.8 or later." (the second sentence is not the release).
    (VERSIONS / "sphinx_prose/docs/index.html", ["2.4"]),
    # Pages that are not front matter state other numbers: "Since version 2.0",
    # "Python 3.8", "Acme 1.x".
    (VERSIONS / "texinfo/manual/Installing.html", []),
    (VERSIONS / "sphinx_prose/docs/install.html", []),
    (VERSIONS / "sphinx_prose/docs/usage.html", []),
])
def test_front_matter_states_the_release(path: Path, expected: list[str]) -> None:
    assert _versions(path) == expected


def test_r_manuals_state_their_release_only_in_prose() -> None:
    """Debian's r-doc-html: "This manual is for R, version 4.2.2 Patched (2022-11-10)."."""
    if not R_MANUALS.is_dir():
        pytest.skip(f"{R_MANUALS} is not installed")
    assert _versions(R_MANUALS / "R-intro.html") == ["4.2.2"]
    # The FAQ is versioned by its date ("Version 2022-09-08") and states no R release.
    assert _versions(R_MANUALS / "R-FAQ.html") == []


NAMES = frozenset({"acme", "archiver", "manual", "gnu", "c", "library"})


@pytest.mark.parametrize(("sentence", "expected"), [
    ("This manual is for Acme, version 3.1.", "3.1"),
    ("This manual is for Acme (version 3.1, 2 May 2026), an archiver.", "3.1"),
    ("This is the official documentation for Acme 3.1.2.", "3.1.2"),
    ("This document describes version 3.1 of Acme.", "3.1"),
    ("This documentation covers version 3.1.", "3.1"),
    ("This manual documents Acme v3.1.", "3.1"),
    ("This is Edition 0.13, last updated 2026-05-02, of The GNU C Library Reference Manual, "
     "for version 2.36.", "2.36"),
    # not the site's release:
    ("This manual documents Acme since version 2.0.", None),
    ("This guide requires Python 3.8.", None),
    ("This manual is for Acme, built with GCC version 12.2.", None),
    ("This document describes changes between Acme version 1.3 and Acme version 1.4.", None),
    ("This document describes version 3.0 of the protocol.", None),  # another product
    ("This is the documentation for Python 3.11.", None),  # a product the title never names
    ("This manual is for Acme, version 3.", None),  # a bare number: a chapter, a year...
    ("Acme 3.1 is described in this manual.", None),  # not a sentence about this manual
    ("Install version 3.1 of Acme with this manual.", None),
    ("This is Edition 0.13 of the Acme manual.", None),  # an edition is not a release
])
def test_only_a_sentence_about_this_documentation_names_its_release(
        sentence: str, expected: str | None) -> None:
    assert stated_version(sentence, NAMES) == expected
