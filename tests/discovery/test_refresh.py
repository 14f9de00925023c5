"""Meta refresh redirects."""

from __future__ import annotations

import pytest
from parsel import Selector

from docscrawl.discovery.refresh import meta_refresh_target

BASE = "https://d.example/docs/old/page.html"


@pytest.mark.parametrize(("meta", "expected"), [
    ('<meta http-equiv="refresh" content="0; url=../new/page.html">',
     "https://d.example/docs/new/page.html"),
    ("<meta http-equiv='Refresh' content=\"0;URL='https://d.example/x/'\">", "https://d.example/x/"),
    ('<meta http-equiv="refresh" content="1, new.html">', "https://d.example/docs/old/new.html"),
    ('<meta http-equiv="refresh" content="30; url=/later">', None),
    ('<meta http-equiv="refresh" content="5">', None),
    ('<meta name="refresh" content="0; url=/x">', None),
])
def test_meta_refresh_target(meta: str, expected: str | None) -> None:
    root = Selector(text=f"<html><head>{meta}</head><body>x</body></html>").root
    assert meta_refresh_target(root, BASE) == expected
