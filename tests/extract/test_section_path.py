"""Active sidebar trail (section_path) for the common documentation generators."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree
from parsel import Selector

from docscrawl.extract.section_path import active_sidebar_trail

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "pages" / "breadcrumbs"
DOC = Path("/usr/share/doc")
BASE = "https://docs.example.test/page.html"


def _root(html: str) -> etree._Element:
    return Selector(text=html).root


FIXTURE_CASES = [
    ("rtd", ["User guide", "Usage", "Configuration"]),
    ("docusaurus_jsonld", ["Guides", "Installation"]),
    ("pydata", ["Theming"]),
    ("mkdocs_material", ["Setup", "Setting up tags"]),
    ("antora", ["Getting started", "Install the CLI"]),
    ("no_trail", []),
    ("microdata", []),
]


@pytest.mark.parametrize(("name", "trail"), FIXTURE_CASES, ids=[c[0] for c in FIXTURE_CASES])
def test_fixture_pages(name: str, trail: list[str]) -> None:
    html = (FIXTURES / f"{name}.html").read_text(encoding="utf-8")
    root = _root(html)
    before = etree.tostring(root)
    assert active_sidebar_trail(root, BASE) == trail
    assert etree.tostring(root) == before


VITEPRESS = """
<aside class="VPSidebar"><nav class="nav" id="VPSidebarNav">
 <div class="group"><section class="VPSidebarItem level-0 collapsible has-active">
  <div class="item" role="button"><div class="indicator"></div><h2 class="text">Guide</h2>
   <div class="caret" role="button"><span class="vpi-chevron-right caret-icon"></span></div>
   </div>
  <div class="items">
   <div class="VPSidebarItem level-1 is-link"><div class="item">
   <a class="VPLink link" href="/guide/a">
    <p class="text">What is it?</p></a></div></div>
   <div class="VPSidebarItem level-1 is-link is-active has-active"><div class="item">
    <a class="VPLink link" href="/guide/getting-started"><p class="text">Getting Started</p>
   </a></div></div>
  </div></section></div>
</nav></aside>
"""
MDBOOK_OLD = """
<nav id="sidebar" class="sidebar"><div class="sidebar-scrollbox"><ol class="chapter">
 <li class="chapter-item expanded affix"><a href="intro.html">Introduction</a></li>
 <li class="chapter-item expanded"><a href="guide/index.html">
   <strong aria-hidden="true">1.</strong> Guide</a></li>
 <li><ol class="section">
  <li class="chapter-item expanded"><a href="guide/setup.html" class="active">
   <strong aria-hidden="true">1.1.</strong> Setup</a></li>
 </ol></li>
</ol></div></nav>
"""
MDBOOK_NEW = """
<nav id="sidebar" class="sidebar"><div class="sidebar-scrollbox"><ol class="chapter">
 <li class="chapter-item expanded"><span class="chapter-link-wrapper"><a href="ref/index.html">
  <strong aria-hidden="true">2.</strong> Reference</a></span>
  <ol class="section"><li class="chapter-item expanded"><span class="chapter-link-wrapper">
   <a href="ref/cli.html" class="active"><strong aria-hidden="true">2.1.</strong> CLI</a>
   </span></li></ol>
 </li>
</ol></div></nav>
"""
DOCUSAURUS_NESTED = """
<nav aria-label="Docs sidebar" class="menu"><ul class="theme-doc-sidebar-menu menu__list">
 <li class="menu__list-item"><div class="menu__list-item-collapsible">
  <a class="menu__link menu__link--sublist menu__link--active" href="#">API</a></div>
  <ul class="menu__list"><li class="menu__list-item"><div class="menu__list-item-collapsible">
   <a class="menu__link menu__link--sublist menu__link--active" href="#">Client</a>
   <button aria-label="Toggle" class="clean-btn menu__caret" type="button"></button></div>
   <ul class="menu__list"><li class="menu__list-item">
    <a class="menu__link menu__link--active" aria-current="page"
   href="/api/client/auth">Auth</a></li></ul>
  </li></ul></li>
</ul></nav>
"""
MKDOCS_DEFAULT = """
<div class="navbar"><ul class="nav navbar-nav">
 <li class="navitem"><a href="../index.html" class="nav-link">Home</a></li>
 <li class="dropdown active">
   <a href="#" class="nav-link dropdown-toggle">User Guide <b class="caret"></b></a>
  <ul class="dropdown-menu"><li><a href="index.html" class="dropdown-item">Overview</a></li>
   <li><a href="cli.html" class="dropdown-item active">CLI</a></li></ul></li>
</ul></div>
"""
TOC_ONLY_ACTIVE = """
<aside class="sidebar"><nav class="toc"><ul><li><a class="active" href="#intro">Intro</a></li>
   </ul></nav></aside>
"""
ARIA_CURRENT_ASIDE = """
<aside><ul><li><span>Concepts</span><ul><li><a href="/a">A</a></li>
 <li><a aria-current="page" href="/b">B</a></li></ul></li></ul></aside>
"""
BOOTSTRAP_NAVBAR = """
<nav class="navbar"><ul class="navbar-nav"><li class="nav-item active">
<a class="nav-link" href="#">Home</a></li></ul></nav>
"""
NO_ACTIVE = '<aside class="sidebar"><ul><li><a href="/a">A</a></li></ul></aside>'
SPHINX_ALABASTER = """
<div class="sphinxsidebar" role="navigation"><div class="sphinxsidebarwrapper">
 <p class="caption" role="heading"><span class="caption-text">Contents:</span></p>
 <ul class="current"><li class="toctree-l1 current">
   <a class="reference internal" href="index.html">Tutorial</a>
  <ul class="current"><li class="toctree-l2 current">
   <a class="current reference internal" href="#">Step 2</a></li></ul>
 </li></ul></div></div>
"""

INLINE_CASES = [
    ("vitepress", VITEPRESS, ["Guide", "Getting Started"]),
    ("mdbook-sibling-section", MDBOOK_OLD, ["Guide", "Setup"]),
    ("mdbook-nested-section", MDBOOK_NEW, ["Reference", "CLI"]),
    ("docusaurus-nested", DOCUSAURUS_NESTED, ["API", "Client", "Auth"]),
    ("mkdocs-default-navbar", MKDOCS_DEFAULT, ["User Guide", "CLI"]),
    ("toc-active-is-not-a-trail", TOC_ONLY_ACTIVE, []),
    ("aria-current-generic-aside", ARIA_CURRENT_ASIDE, ["Concepts", "B"]),
    ("no-active-item", NO_ACTIVE, []),
    ("plain-bootstrap-navbar", BOOTSTRAP_NAVBAR, []),
    ("sphinx-alabaster-caption", SPHINX_ALABASTER, ["Contents:", "Tutorial", "Step 2"]),
]


@pytest.mark.parametrize(("case", "body", "trail"), INLINE_CASES, ids=[c[0] for c in INLINE_CASES])
def test_generator_shapes(case: str, body: str, trail: list[str]) -> None:
    assert active_sidebar_trail(_root(f"<html><body>{body}</body></html>"), BASE) == trail, case


REAL = [
    ("python-scrapy-doc/html/topics/spiders.html", ["Basic concepts", "Spiders"]),
    ("sphinx-doc/html/usage/configuration.html", ["User Guides", "Using Sphinx", "Configuration"]),
    ("mkdocs/html/user-guide/configuration.html", ["User Guide", "Configuration"]),
]


@pytest.mark.parametrize(("path", "trail"), REAL, ids=[r[0].split("/")[0] for r in REAL])
def test_real_generator_pages(path: str, trail: list[str]) -> None:
    page = DOC / path
    if not page.exists():
        pytest.skip(f"{page} not installed")
    assert active_sidebar_trail(_root(page.read_text(encoding="utf-8")), BASE) == trail
