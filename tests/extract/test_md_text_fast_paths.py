"""`md_text`'s shortcuts (no sentinel, no backtick) give what the general path gives."""

from __future__ import annotations

import pytest

from docscrawl.extract.md_text import BR, code_span, fence, finish_inline


@pytest.mark.parametrize(
    ("md", "expected"),
    [
        ("  a \n b  ", "a b"),
        ("   ", ""),
        (f"a {BR} b", "a\nb"),
        (f"{BR} a {BR}{BR}", "a"),
        (f" {BR} ", ""),
        ("a\u00a0\u2003b", "a b"),
    ],
)
def test_finish_inline(md: str, expected: str) -> None:
    assert finish_inline(md) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        ("x_y", "`x_y`"),
        ("a`b", "``a`b``"),
        ("`a", "`` `a ``"),
        ("a``b`", "``` a``b` ```"),
    ],
)
def test_code_span(text: str, expected: str) -> None:
    assert code_span(text) == expected


@pytest.mark.parametrize(
    ("code", "language", "expected"),
    [
        ("print(1)", "python", "```python\nprint(1)\n```"),
        ("a``b", None, "```\na``b\n```"),
        ("a```b", None, "````\na```b\n````"),
        ("````", "md", "`````md\n````\n`````"),
    ],
)
def test_fence(code: str, language: str | None, expected: str) -> None:
    assert fence(code, language) == expected
