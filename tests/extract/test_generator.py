"""Generator detection: meta generator first, DOM fingerprints second."""

from __future__ import annotations

import json
from pathlib import Path

import parsel
import pytest

from docscrawl.extract.generator import contract_generator, detect_generator, detect_profile
from docscrawl.extract.model import GENERATORS

FIXTURES = Path(__file__).parents[2] / "fixtures" / "pages" / "generators"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))


def parse(html: str):
    return parsel.Selector(text=html, type="html").root


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_generator(name: str) -> None:
    root = parse((FIXTURES / f"{name}.html").read_text(encoding="utf-8"))
    assert detect_generator(root) == EXPECTED[name]["generator"]


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ('<meta name="generator" content="Hugo 0.124.1">', "hugo"),
        ('<meta name="generator" content="Docusaurus v3.1.1">', "docusaurus"),
        ('<meta name="generator" content="mkdocs-1.5.3, mkdocs-material-9.5.3">', "mkdocs"),
        ('<meta name="generator" content="sphinx-7.2.6, furo 2024.01.29">', "sphinx"),
        ('<meta name="generator" content="GTK-Doc V1.33.1 (XML mode)">', "docbook"),
        ('<meta name="generator" content="Antora 3.1.7">', "antora"),
        ('<meta name="generator" content="GitBook 3.2.3">', "gitbook"),
        ('<meta name="Generator" content="Astro v4.3.5">'
         '<meta name="generator" content="Starlight v0.19.0">', "starlight"),
        ('<meta name="generator" content="WordPress 6.4">', "other"),
        ('<meta name="generator" content="Docutils 0.19: https://docutils.sourceforge.io/">',
         "other"),
        ('<meta name="generator" content="AsciiDoc 10.2.0">', "other"),
        ("", None),
    ],
)
def test_meta_generator(head: str, expected: str | None) -> None:
    root = parse(f"<html><head>{head}</head><body><p>Text</p></body></html>")
    assert detect_generator(root) == expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('<div class="sphinxsidebar"></div><div class="body" role="main">x</div>', "sphinx"),
        ('<div id="__docusaurus"><div class="theme-doc-markdown">x</div></div>', "docusaurus"),
        ('<div id="VPContent"><div class="vp-doc">x</div></div>', "vitepress"),
        ('<div class="md-content"><article class="md-content__inner">x</article></div>',
         "mkdocs"),
        ('<div id="mkdocs_search_modal"></div><div class="bs-sidebar"></div>', "mkdocs"),
        ('<script src="//cdn.jsdelivr.net/npm/docsify@4"></script>'
         '<article class="markdown-section">x</article>', "docsify"),
        ("<redoc spec-url='openapi.yaml'></redoc>", "redoc"),
        ('<!-- Book generated using mdBook --><nav id="mdbook-sidebar"></nav>', "mdbook"),
        ('<div class="doc">x</div>', None),  # one weak antora fingerprint is not enough
        ("<main><h1>Plain page</h1></main>", None),
    ],
)
def test_fingerprints(body: str, expected: str | None) -> None:
    root = parse(f"<html><head></head><body>{body}</body></html>")
    assert detect_generator(root) == expected


def test_profile_is_finer_than_contract_name() -> None:
    root = parse('<html><head><meta name="generator" content="Asciidoctor 2.0.20"></head></html>')
    assert detect_profile(root) == "asciidoc"
    assert contract_generator("asciidoc") == "other"
    assert contract_generator("gtkdoc") == "docbook"


def test_answers_stay_in_contract_vocabulary() -> None:
    for name in EXPECTED:
        root = parse((FIXTURES / f"{name}.html").read_text(encoding="utf-8"))
        assert detect_generator(root) in (*GENERATORS, None)
