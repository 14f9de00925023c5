"""Soft 404 detection."""

from __future__ import annotations

import pytest

from docscrawl.extract.quality import binary_reason, soft_404_reason


@pytest.mark.parametrize(("title", "heading", "markdown", "soft"), [
    ("404 Not Found", None, "# 404\n\nSorry.", True),
    ("Acme docs", "Page not found", "# Page not found\n\nTry the search.", True),
    ("Oops", "This page does not exist", "short", True),
    ("Handling 404 errors", "Handling 404 errors", "# Handling 404 errors\n\nx", False),
    ("Page not found", None, "x" * 5000, False),
    ("Installing Acme", "Installing Acme", "# Installing Acme", False),
])
def test_soft_404(title: str, heading: str | None, markdown: str, soft: bool) -> None:
    assert (soft_404_reason(title, heading, markdown) is not None) is soft


@pytest.mark.parametrize(("body", "binary"), [
    (bytes(range(256)) * 16, True),
    (b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, True),
    ("<html><body><p>Ünïcödé</p></body></html>".encode(), False),
    (b"<html>\t\r\n<body>\x0c</body></html>", False),
    (b"", False),
])
def test_binary_reason(body: bytes, binary: bool) -> None:
    assert (binary_reason(body) is not None) is binary
