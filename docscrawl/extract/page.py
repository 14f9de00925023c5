"""The extraction orchestrator: one parsed page in, one `PageExtract` out."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from lxml import etree

from docscrawl.extract.breadcrumbs import extract_breadcrumbs
from docscrawl.extract.docindex import DocIndex
from docscrawl.extract.generator import contract_generator, detect_profile
from docscrawl.extract.links import page_links
from docscrawl.extract.main_content import find_main_content, title_block
from docscrawl.extract.main_heading import banner_headings, page_heading
from docscrawl.extract.markdown import render_main
from docscrawl.extract.metadata import document_base, page_metadata, page_title
from docscrawl.extract.model import Block, ExtractionWarning, Heading, Link, PageExtract
from docscrawl.extract.notes import linked_notes
from docscrawl.extract.profiles import profile_for
from docscrawl.extract.regions import RegionMap, classify
from docscrawl.extract.section_path import active_sidebar_trail
from docscrawl.extract.site_profile import SiteSelectors
from docscrawl.extract.template.content import (
    Dropped,
    placed,
    template_elements,
    template_warning,
    with_template_regions,
    without_blocks,
)
from docscrawl.extract.template.table import TemplateTable, page_signatures, sign_blocks
from docscrawl.extract.tree import PARSE_NOTE
from docscrawl.extract.version import detect_version

_WORD = re.compile(r"\w+")
# Links listed in a page's record (the crawl follows them all). An index of a large API
# lists a few thousand; 100,000 cost several hundred MB of records and JSON text.
MAX_LINKS = 10_000
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


def _squeeze(text: str) -> str:
    return "".join(m.group().lower() for m in _WORD.finditer(text)).replace("_", "")


def identity_warning(title: str | None, main_heading: str | None) -> ExtractionWarning | None:
    """`identity_mismatch` when title and main heading share no significant word."""
    if not title or not main_heading:
        return None
    a, b = significant_words(title), significant_words(main_heading)
    if not a or not b or a & b:
        return None
    squeezed_title, squeezed_heading = _squeeze(title), _squeeze(main_heading)
    if squeezed_heading in squeezed_title or squeezed_title in squeezed_heading:
        return None  # "Gsk.BlurNode" and "GskBlurNode" (gi-docgen) name the same thing
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
    index: DocIndex | None = None  # one walk's worth of facts, shared by the extractors
    site: SiteSelectors = field(default_factory=SiteSelectors)
    excluded: tuple[etree._Element, ...] = ()  # skipped like chrome in the Markdown
    title_el: etree._Element | None = None  # the page title's block before the main element
    notes: tuple[etree._Element, ...] = ()  # blocks after it the main element links into
    # ids and `<a name>` anchors inside the main element, in document order
    main_names: tuple[str, ...] = ()


def page_structure(
    root: etree._Element, url: str, *, profile: Mapping[str, Any] | None = None
) -> PageStructure:
    """Generator profile, main content and region map of a parsed page.

    `profile` is the site profile (`-a config=FILE`); its `selectors` override the
    heuristics (see `site_profile`). A bad selector raises ValueError.
    """
    site = SiteSelectors.from_profile(profile)
    base = document_base(root, url)
    index = DocIndex.of(root)
    generator = detect_profile(root, index=index)
    title = page_title(root)
    main_el, main_locator, warnings = find_main_content(
        root, generator=generator, selectors=site.main, index=index, title=title
    )
    regions = classify(root, generator=generator, main_el=main_el, base_url=base, index=index)
    title_el = title_block(main_el, title)
    main_names = tuple(MAIN_NAMES(main_el))
    notes = tuple(linked_notes(root, main_el, frozenset(main_names), index=index))
    scopes = ((main_el,) if title_el is None else (title_el, main_el)) + notes
    warnings = list(warnings)
    if repaired := root.get(PARSE_NOTE):  # extract.tree repaired what libxml2 would drop
        code = "parse_truncated" if "missing" in repaired else "parse_recovered"
        warnings.append(ExtractionWarning(code, repaired))
    return PageStructure(
        base, generator, main_el, main_locator, warnings, regions, index, site,
        _excluded(index, scopes, generator, site), title_el, notes, main_names,
    )


def _excluded(
    index: DocIndex, scopes: tuple[etree._Element, ...], generator: str | None,
    site: SiteSelectors,
) -> tuple[etree._Element, ...]:
    """Elements under `scopes` matching the site's `exclude` selectors and the generator
    profile's `chrome` selectors: the renderer skips them."""
    known = profile_for(generator)
    selectors = (*site.exclude, *(known.chrome if known else ()))
    found: list[etree._Element] = []
    for css in selectors:
        if index.may_match(css):
            for scope in scopes:
                found.extend(index.css(scope, css))
    return tuple(found)


def extract_page(root: etree._Element, url: str, *, html: str | None = None,
                 structure: PageStructure | None = None,
                 profile: Mapping[str, Any] | None = None,
                 template_table: TemplateTable | None = None) -> PageExtract:
    """Extract everything the contract needs from a parsed page (`parsel.Selector.root`).

    `url` is the page's final URL; `html` (optional) lets breadcrumb extraction read
    structured data from the raw text; `structure` reuses a `page_structure` already
    computed for the same tree; `profile` is the site profile (only needed when
    `structure` was computed without it); `template_table` (read, never changed) is what the
    crawl learned about the site's template: blocks it repeats on most pages are left
    out of the main content (`template_table.template_blocks`). The tree is never modified.
    """
    if structure is None:
        structure = page_structure(root, url, profile=profile)
    site = SiteSelectors.from_profile(profile) if profile is not None else structure.site
    base, main_el, regions = structure.base_url, structure.main_el, structure.regions
    index = structure.index if structure.index is not None else DocIndex.of(root)
    warnings = list(structure.warnings)
    title, description, language, canonical = page_metadata(root, url)
    render = render_main(main_el, base_url=base, preamble=structure.title_el,
                         excluded=structure.excluded, notes=structure.notes)
    signed = sign_blocks(render.blocks, structure.main_locator)
    dropped: Dropped = {}
    if template_table is not None and template_table.warm:
        dropped = template_elements(root, structure.main_locator, render.blocks, signed,
                                    template_table, render.elements)
    banner = banner_headings(render.blocks, render.elements)  # before blocks are taken out
    left_out: list[Link] = []  # the renderer's links of the blocks taken out
    if dropped:
        rendered = render.links
        render = without_blocks(render, {verdict.block.ordinal for verdict, _ in dropped.values()})
        regions = with_template_regions(regions, dropped)
        warnings.append(template_warning(dropped))
        kept = {id(link) for link in render.links}
        left_out = [link for link in rendered if id(link) not in kept]
    links = placed(page_links(root, base, regions=regions, main_el=main_el,
                              main_links=render.links), left_out, dropped)
    crumbs = extract_breadcrumbs(root, html, base, index=index, selectors=site.breadcrumb)
    section_path = active_sidebar_trail(root, base, index=index)
    version, version_warnings = detect_version(root, url, canonical, index=index,
                                               selectors=site.version)
    main_heading = page_heading(render.blocks, title, skip=banner)
    if main_heading is None and not render.headings and title:
        # A page with no heading at all (a source listing, a preformatted text page) is
        # named by its <title> alone; said so, so that nobody takes it for a body heading.
        main_heading = " ".join(title.split())
        warnings.append(ExtractionWarning(
            "main_heading_from_title",
            "no heading in the main content: the <title> names the page"))
    warnings = [*warnings, *render.warnings, *crumbs.warnings, *version_warnings,
                *fragment_warnings(links, index)]
    if mismatch := identity_warning(title, main_heading):
        warnings.append(mismatch)
    if len(links) > MAX_LINKS:  # a page's record grows with its links: bounded memory
        warnings.append(ExtractionWarning(
            "links_truncated", f"{len(links)} links; the first {MAX_LINKS} are listed"))
        del links[MAX_LINKS:]
    return PageExtract(
        title=title,
        main_heading=main_heading,
        description=description,
        language=language,
        generator=contract_generator(structure.profile),
        canonical_href=canonical,
        markdown=render.markdown,
        headings=render.headings,
        fragment_ids=fragment_ids(structure.main_names, render.headings),
        code_blocks=render.code_blocks,
        links=links,
        regions=regions.regions,
        blocks=block_tree(render.blocks),
        breadcrumbs=crumbs.breadcrumbs,
        breadcrumb_source=crumbs.source,
        breadcrumb_observations=crumbs.observations,
        navigation_path=[c.label for c in crumbs.breadcrumbs] or list(section_path),
        section_path=section_path,
        version=version,
        warnings=warnings,
        main_locator=structure.main_locator,
        signatures=page_signatures(signed),
    )


MAX_FRAGMENT_IDS = 2000  # a page's record stays bounded whatever its markup
MAIN_NAMES = etree.XPath(".//@id | .//a/@name", smart_strings=False)


def fragment_ids(main_names: tuple[str, ...], headings: list[Heading]) -> list[str]:
    """The main content's ids and `<a name>` anchors (`PageStructure.main_names`) other
    than the headings' anchors, in document order (at most MAX_FRAGMENT_IDS): DocBook and
    AsciiDoc glossary terms, Sphinx grammar tokens and option anchors are link targets
    that are not headings."""
    own = {heading.anchor for heading in headings if heading.anchor}
    found = dict.fromkeys(name for name in main_names if name and name not in own)
    return list(found)[:MAX_FRAGMENT_IDS]


MAX_FRAGMENT_WARNINGS = 20


def fragment_warnings(links: list[Link], index: DocIndex) -> list[ExtractionWarning]:
    """`unresolved_fragment` for each table-of-contents fragment link that resolves to no
    heading or element id of the page (also `a[name]`); at most MAX_FRAGMENT_WARNINGS,
    then one line with the count of the rest."""
    targets: set[str] | None = None
    missing: list[str] = []
    for link in links:
        if link.region != "table_of_contents" or link.target != "fragment":
            continue
        fragment = link.url.partition("#")[2]
        if not fragment:
            continue  # "#" alone is the top of the page
        if targets is None:
            targets = set(index.ids) | index.anchor_names()
        if fragment not in targets and unquote(fragment) not in targets:
            missing.append(f"#{fragment} ({link.text!r})")
    warnings = [
        ExtractionWarning("unresolved_fragment",
                          f"table-of-contents link {item} resolves to no heading or id")
        for item in dict.fromkeys(missing)
    ]
    if len(warnings) > MAX_FRAGMENT_WARNINGS:
        rest = len(warnings) - MAX_FRAGMENT_WARNINGS
        warnings = warnings[:MAX_FRAGMENT_WARNINGS]
        warnings.append(ExtractionWarning("unresolved_fragment", f"and {rest} more"))
    return warnings


def block_tree(blocks: list[Block]) -> list[Block]:
    """Fill `id`, `type`, `region` and `parent` (the block tree) of rendered blocks.

    The tree follows the heading paths: a heading block's parent is the heading block
    one level up its path; any other block's parent is the heading block that opened
    its section. Blocks before the first heading have no parent.
    """
    open_headings: dict[int, int] = {}  # path length -> ordinal of that heading block
    for block in blocks:
        depth = len(block.heading_path)
        if block.kind == "heading":
            for level in [d for d in open_headings if d >= depth]:
                del open_headings[level]
            block.parent = open_headings.get(depth - 1)
            open_headings[depth] = block.ordinal
        elif block.parent is None:
            block.parent = open_headings.get(depth)
        block.id = f"b{block.ordinal}"
        block.type = block.kind
        block.region = "main_content"
    return blocks
