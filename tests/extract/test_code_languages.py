"""Code language from every convention: all class tokens, wrappers, label spans.

Cases are hand-written in fixtures/pages/code/languages.html (mdBook, rustdoc, VitePress,
Docusaurus, Pandoc, highlight.js shapes); each names its expected language.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from docscrawl.extract.code_blocks import code_info
from docscrawl.extract.tree import html_root

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "pages" / "code" / "languages.html"


def _cases() -> list[tuple[str, etree._Element]]:
    root = html_root(FIXTURE.read_text(encoding="utf-8"), "http://example.test/")
    return [(section.get("data-expect"), next(section.iter("pre")))
            for section in root.iter("section")]


CASES = _cases()


@pytest.mark.parametrize(("expected", "pre"), CASES,
                         ids=[f"{i}-{e or 'none'}" for i, (e, _) in enumerate(CASES)])
def test_language_of_each_generator_shape(expected: str, pre: etree._Element) -> None:
    assert code_info(pre).language == (expected or None)


def test_fixture_covers_the_shapes() -> None:
    assert len(CASES) >= 15
