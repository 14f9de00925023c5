"""Site profile selectors (`{"selectors": {...}}`) override the heuristics."""

from __future__ import annotations

import parsel
import pytest

from docscrawl.extract.page import extract_page, page_structure
from docscrawl.extract.site_profile import SiteSelectors

PAGE = """<html><head><title>Widgets - Acme</title></head><body>
<div class="top"><a href="/">Acme</a></div>
<div class="trail"><a href="/docs/">Docs</a> / <a href="/docs/widgets/">Widgets</a></div>
<div class="shell">
  <div class="article">
    <h1>Widgets</h1>
    <p>Widgets hold the parts together.</p>
    <div class="promo"><p>Buy the enterprise plan today.</p></div>
    <p>Release <span class="rel">4.2.1</span> of the manual.</p>
  </div>
  <div class="other"><p>Something much longer than the article that a density heuristic
  would prefer. Something much longer than the article that a density heuristic would
  prefer. Something much longer than the article.</p></div>
</div></body></html>"""
PROFILE = {"selectors": {"main": "div.article", "exclude": ["div.promo"],
                         "breadcrumb": "div.trail", "version": "span.rel"}}
URL = "https://acme.test/docs/widgets/"


def root():
    return parsel.Selector(text=PAGE, type="html").root


def test_profile_selectors_drive_extraction() -> None:
    page = extract_page(root(), URL, profile=PROFILE)
    assert page.main_locator.endswith("div[1]")
    assert page.main_heading == "Widgets"
    assert "enterprise" not in page.markdown
    assert "hold the parts together" in page.markdown
    assert [c.label for c in page.breadcrumbs] == ["Docs", "Widgets"]
    assert page.breadcrumb_source == "visible"
    assert (page.version.value, page.version.evidence[0].source) == ("4.2.1", "selector")
    assert "main_content_fallback" not in [w.code for w in page.warnings]


def test_structure_computed_with_the_profile_is_reused() -> None:
    tree = root()
    structure = page_structure(tree, URL, profile=PROFILE)
    page = extract_page(tree, URL, structure=structure)
    assert "enterprise" not in page.markdown
    assert page.version.value == "4.2.1"


def test_without_profile_the_heuristics_run() -> None:
    page = extract_page(root(), URL)
    assert page.version.value is None


@pytest.mark.parametrize(("profile", "message"), [
    ({"selectors": {"main": "div[["}}, "selectors.main: bad CSS selector"),
    ({"selectors": {"mian": "div"}}, "unknown key 'mian'"),
    ({"selectors": {"exclude": [1]}}, "selectors.exclude: expected"),
    ({"selectors": "div"}, "expected an object"),
])
def test_bad_profiles_name_the_key(profile: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        SiteSelectors.from_profile(profile)


def test_empty_profiles() -> None:
    assert not SiteSelectors.from_profile(None)
    assert not SiteSelectors.from_profile({"scope": {"allow": ["x"]}})
    assert SiteSelectors.from_profile({"selectors": {"main": ["main", "article"]}}).main == (
        "main", "article")
