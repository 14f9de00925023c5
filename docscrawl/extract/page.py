"""The extraction orchestrator: one parsed page in, one `PageExtract` out."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from docscrawl.extract.breadcrumbs import extract_breadcrumbs
from docscrawl.extract.generator import contract_generator, detect_profile
from docscrawl.extract.links import page_links
from docscrawl.extract.main_content import find_main_content
from docscrawl.extract.markdown import render_main
from docscrawl.extract.metadata import document_base, page_metadata
from docscrawl.extract.model import ExtractionWarning, PageExtract
from docscrawl.extract.regions import RegionMap, classify
from docscrawl.extract.section_path import active_sidebar_trail
from docscrawl.extract.version import detect_version

_WORD = re.compile(r"\w+")
# Words too common in titles and headings to show that two of them name the same page.
STOPWORDS = frozenset({
    "the", "and", "for", "with", "from", "into", "your", "you", "how", "what", "why", "are",
    "this", "that", "about", "using", "use", "docs", "documentation", "doc", "guide", "page",
    "manual", "reference", "home", "welcome", "of", "to", "in", "on", "a", "an", "by", "or",
})


def significant_words(text: str) -> set[str]:
    """Lowercase words of `text` that can carry a page's identity."""
    return {
        w for w in (m.group().lower() for m in _WORD.finditer(text))
        if w not in STOPWORDS and (len(w) > 2 or w.isdigit())
    }


def identity_warning(title: str | None, main_heading: str | None) -> ExtractionWarning | None:
    """`identity_mismatch` when title and main heading share no significant word."""
    if not title or not main_heading:
        return None
    a, b = significant_words(title), significant_words(main_heading)
    if not a or not b or a & b:
        return None
    return ExtractionWarning(
        "identity_mismatch", f"title {title!r} and main heading {main_heading!r} share no word"
    )


@dataclass(slots=True)
class PageStructure:
    """Where things are on a page: computed once, shared by link discovery and extraction."""

    base_url: str
    profile: str | None
    main_el: etree._Element
    main_locator: str
    warnings: list[ExtractionWarning]
    regions: RegionMap


def page_structure(root: etree._Element, url: str) -> PageStructure:
    """Generator profile, main content and region map of a parsed page."""
    base = document_base(root, url)
    profile = detect_profile(root)
    main_el, main_locator, warnings = find_main_content(root, generator=profile)
    regions = classify(root, generator=profile, main_el=main_el, base_url=base)
    return PageStructure(base, profile, main_el, main_locator, list(warnings), regions)


def extract_page(root: etree._Element, url: str, *, html: str | None = None,
                 structure: PageStructure | None = None) -> PageExtract:
    """Extract everything the contract needs from a parsed page (`parsel.Selector.root`).

    `url` is the page's final URL; `html` (optional) lets breadcrumb extraction read
    structured data from the raw text; `structure` reuses a `page_structure` already
    computed for the same tree. The tree is never modified.
    """
    structure = structure or page_structure(root, url)
    base, profile, main_el = structure.base_url, structure.profile, structure.main_el
    main_locator, regions = structure.main_locator, structure.regions
    warnings = list(structure.warnings)
    title, description, language, canonical = page_metadata(root, url)
    render = render_main(main_el, base_url=base)
    links = page_links(root, base, regions=regions, main_el=main_el, main_links=render.links)
    crumbs = extract_breadcrumbs(root, html, base)
    section_path = active_sidebar_trail(root, base)
    version, version_warnings = detect_version(root, url, canonical)
    main_heading = next((h.text for h in render.headings if h.level == 1), None)
    warnings = [*warnings, *render.warnings, *crumbs.warnings, *version_warnings]
    if mismatch := identity_warning(title, main_heading):
        warnings.append(mismatch)
    return PageExtract(
        title=title,
        main_heading=main_heading,
        description=description,
        language=language,
        generator=contract_generator(profile),
        canonical_href=canonical,
        markdown=render.markdown,
        headings=render.headings,
        code_blocks=render.code_blocks,
        links=links,
        regions=regions.regions,
        blocks=render.blocks,
        breadcrumbs=crumbs.breadcrumbs,
        breadcrumb_source=crumbs.source,
        breadcrumb_observations=crumbs.observations,
        navigation_path=[c.label for c in crumbs.breadcrumbs] or list(section_path),
        section_path=section_path,
        version=version,
        warnings=warnings,
        main_locator=main_locator,
    )
