"""Leaving the site's template out of a page's main content (see `template.table`).

The blocks `template.table.template_blocks` calls template are found again in the tree by
their locators and become regions of their own (`template: true`), so their links are
reported as navigation. They are taken out of the one rendering of the page with what
they rendered (`without_blocks`): the page is never rendered twice.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable

from lxml import etree

from docscrawl.extract.markdown import MainRender
from docscrawl.extract.model import Block, CodeBlock, ExtractionWarning, Heading, Link, Region
from docscrawl.extract.regions import RegionMap
from docscrawl.extract.template.table import (
    SHAPE_LINK_SHARE,
    Signed,
    TemplateBlock,
    TemplateTable,
    link_share,
    template_blocks,
)

__all__ = ["TEMPLATE_WARNING", "Dropped", "TemplateNotice", "common_path", "content_root",
           "locator_css", "own_content_root",
           "placed", "template_elements", "template_fix", "template_warning",
           "with_template_regions", "without_blocks"]

Dropped = dict[etree._Element, tuple[TemplateBlock, Region]]


def template_elements(
    root: etree._Element, main_locator: str, blocks: list[Block], signed: Signed,
    model: TemplateTable, elements: dict[int, etree._Element] | None = None,
) -> Dropped:
    """Elements of the main content's template blocks, each with its verdict and region.

    A block's element is left out only when no block of the page's own lies inside it
    (a run of text directly in the main element is never left out).
    """
    found = template_blocks(blocks, signed, model)
    if not found:
        return {}
    template_ordinals = {t.block.ordinal for t in found}
    holding_own: set[str] = set()  # every locator that is or contains a block of the page's own
    for b in blocks:
        if b.ordinal not in template_ordinals:
            path = b.locator
            while path and path not in holding_own:
                holding_own.add(path)
                path = path.rpartition("/")[0]
    tree = root.getroottree()
    out: Dropped = {}
    for verdict in found:
        path = verdict.block.locator
        if main_locator.startswith(path) or path in holding_own:
            continue
        el = (elements or {}).get(verdict.block.ordinal)
        if el is None:  # not rendered here: find it by its locator
            matches = tree.xpath(path)
            if not matches or not isinstance(matches[0], etree._Element):
                continue
            el = matches[0]
        links, share = link_share(verdict.block.markdown)
        kind = "unknown"
        if links and share >= SHAPE_LINK_SHARE:
            kind = "footer_navigation" if verdict.at_end else "primary_navigation"
        region = Region(kind, path, links, verdict.block.text_chars,
                        f"{verdict.signature:016x}", template=True)
        out[el] = (verdict, region)
    return out


def with_template_regions(
    regions: RegionMap, dropped: Dropped
) -> RegionMap:
    """A copy of the region map where the template blocks are regions of their own."""
    kinds = dict(regions.kinds)
    locators = dict(regions.locators)
    for el, (_, region) in dropped.items():
        kinds[el] = region.region
        locators[el] = region.locator
    return dataclasses.replace(  # the original's memos answer for its kinds only
        regions, kinds=kinds, locators=locators, _nearest={}, anchor_regions={},
        regions=[*regions.regions, *(region for _, region in dropped.values())],
    )


TEMPLATE_WARNING = "template_in_main"


def template_warning(
    dropped: Dropped,
) -> ExtractionWarning:
    """`template_in_main`: which blocks were left out, and on how many pages they were."""
    verdicts = [verdict for verdict, _ in dropped.values()]
    sample = "; ".join(repr(v.block.markdown[:60]) for v in verdicts[:3])
    return ExtractionWarning(
        TEMPLATE_WARNING,
        f"{len(verdicts)} block(s) of the main element repeat on most pages of the site "
        f"(up to {max(v.pages for v in verdicts)} pages) and were left out as template: "
        f"{sample}",
    )


def without_blocks(render: MainRender, ordinals: set[int]) -> MainRender:
    """The render with the blocks `ordinals` taken out, as if they had been skipped.

    What each block rendered (headings, code blocks, links, warnings) goes with it
    (`MainRender.marks`); the blocks left are numbered again; a heading taken out leaves
    the heading paths below it, as the renderer would have built them without it. The
    records of `render` are updated in place (they belong to that one rendering).
    """
    keep: list[Block] = []
    headings: list[Heading] = []
    code_blocks: list[CodeBlock] = []
    links: list[Link] = []
    warnings: list[ExtractionWarning] = []
    gone: dict[str, list[list[str]]] = {}  # first entry -> paths of the headings taken out
    start = (0, 0, 0, 0)
    renumber: dict[int, int] = {}
    for block, end in zip(render.blocks, render.marks, strict=True):
        h, c, k, w = (slice(start[0], end[0]), slice(start[1], end[1]),
                      slice(start[2], end[2]), slice(start[3], end[3]))
        start = end
        if block.ordinal in ordinals:
            for heading in render.headings[h]:
                gone.setdefault(heading.path[0], []).append(heading.path)
            continue
        renumber[block.ordinal] = len(keep)
        keep.append(block)
        headings += render.headings[h]
        code_blocks += render.code_blocks[c]
        links += render.links[k]
        warnings += render.warnings[w]
    headings += render.headings[start[0]:]
    code_blocks += render.code_blocks[start[1]:]
    links += render.links[start[2]:]
    warnings += render.warnings[start[3]:]
    for paths in gone.values():
        paths.sort(key=len, reverse=True)

    gone_texts = {path[-1] for paths in gone.values() for path in paths}

    def path(p: list[str]) -> list[str]:
        if gone_texts.isdisjoint(p):  # no heading taken out above it (the usual case)
            return p
        for removed in gone.get(p[0], ()) if p else ():
            if p[:len(removed)] == removed:
                p = p[:len(removed) - 1] + p[len(removed):]
                if not p:
                    break
        return p

    for block in keep:
        block.ordinal = renumber[block.ordinal]
    if gone:
        placed: list[Block | CodeBlock | Link] = [*keep, *code_blocks, *links]
        for record in placed:
            record.heading_path = path(record.heading_path)
        for heading in headings:
            heading.path = path(heading.path)
    for code in code_blocks:
        code.block_ordinal = renumber.get(code.block_ordinal, 0)
    for position, link in enumerate(links):
        link.position = position
    body = "\n\n".join(b.markdown for b in keep).strip("\n")
    return MainRender(markdown=body + "\n" if body else "", blocks=keep, headings=headings,
                      code_blocks=code_blocks, links=links, warnings=warnings)


def placed(links: list[Link], left_out: list[Link], dropped: Dropped) -> list[Link]:
    """`links` where each link of a left-out block keeps where it sat: the heading path
    and container the renderer gave it (a "Read more" under "Trait Implementations"),
    while its region stays the template's. `left_out` are the renderer's links of the
    blocks taken out, in order; a page link is matched to the first unused one with its
    URL and text. Changed in place; returned for convenience."""
    if not left_out:
        return links
    template = {region.locator for _, region in dropped.values()}
    waiting: dict[tuple[str, str], list[Link]] = {}
    for link in left_out:
        waiting.setdefault((link.url, link.text), []).append(link)
    for link in links:
        if link.region_locator not in template or link.heading_path:
            continue
        queue = waiting.get((link.url, link.text))
        if queue:
            source = queue.pop(0)
            link.heading_path = list(source.heading_path)
            link.container_label = link.container_label or source.container_label
    return links


# -- naming the fix: the element that holds a page's own content ------------------------

def common_path(locators: Iterable[str], *, inclusive: bool = False) -> str:
    """The deepest element locator holding every one of `locators` (XPath paths from the
    root): blocks are held by their parent (a single block's locator gives its parent);
    `inclusive` elements may hold themselves (the roots of several pages' content)."""
    parts = [p.split("/") for p in locators]
    if not parts:
        return ""
    common: list[str] = []
    for steps in zip(*parts, strict=False):
        if len(set(steps)) != 1:
            break
        common.append(steps[0])
    if not inclusive and len(common) == min(len(p) for p in parts):
        common = common[:-1]
    return "/".join(common)


def content_root(roots: Iterable[str | None], main_locator: str | None) -> str | None:
    """The deepest element holding the own content (`own_content_root`) of more than half
    the pages voting, when it is deeper than the main element: a page unlike the others
    (an index that is all menus) does not hide what most pages share."""
    votes = [r for r in roots if r]
    main = main_locator or ""
    held: dict[str, int] = {}
    for root in votes:
        path = root
        while path.startswith(main + "/"):
            held[path] = held.get(path, 0) + 1
            path = path.rpartition("/")[0]
    best = [p for p, n in held.items() if n * 2 > len(votes)]
    return max(best, key=lambda p: p.count("/"), default=None)


def own_content_root(blocks: Iterable[Block]) -> str | None:
    """The element holding every block of the page's own with text (None: no such block)."""
    return common_path(b.locator for b in blocks if b.text_chars and b.locator) or None


_STEP = re.compile(r"^([A-Za-z][\w-]*)(?:\[(\d+)\])?$")


def locator_css(locator: str) -> str | None:
    """`/html/body/div/div[2]` as `html > body > div:nth-of-type(1) > div:nth-of-type(2)`
    (an XPath position counts siblings of the same tag, as `nth-of-type` does): a site
    profile's `main` selector for the element."""
    steps = []
    for step in locator.strip("/").split("/"):
        match = _STEP.match(step)
        if not match:
            return None
        tag, position = match.groups()
        steps.append(tag if tag in ("html", "body") else f"{tag}:nth-of-type({position or 1})")
    return " > ".join(steps) or None


def template_fix(selector: str | None) -> str:
    """What to do about a site template inside the main content: one sentence, said by
    the crawl's warning and by `docscrawl check`'s template leak."""
    profile = json.dumps({"selectors": {"main": selector or "CSS"}})
    return ("give the crawl a site profile, -a config=FILE holding " + profile
            + ("" if selector else ", CSS naming the element of the pages' own content")
            + " (docs/extraction-rules.md, Site profile)")


class TemplateNotice:
    """The crawl's one warning about a template inside the main content: fed the first
    pages judged by the frozen table (`add`), it says (`message`) whether most of them
    had template blocks around one element holding their own content, and names a site
    profile `main` selector for it (with it the template stays out without learning)."""

    def __init__(self, min_pages: int) -> None:
        self.min_pages = min_pages
        self.judged = 0
        self.roots: list[str | None] = []  # own-content roots of the pages with template
        self.example: str | None = None
        self.main: str | None = None

    def add(self, url: str, blocks: Iterable[Block], warnings: Iterable[ExtractionWarning],
            main_locator: str | None) -> None:
        self.judged += 1
        if any(w.code == TEMPLATE_WARNING for w in warnings):
            self.roots.append(own_content_root(blocks))
            self.example = self.example or url
            self.main = self.main or main_locator

    def message(self) -> str | None:
        """The warning, or None (too few pages, template on too few, no such element)."""
        if self.judged < self.min_pages or len(self.roots) * 2 < self.judged:
            return None
        root = content_root(self.roots, self.main)
        selector = locator_css(root) if root else None
        if selector is None:  # repeated prose between the page's own blocks: no profile helps
            return None
        return (f"{len(self.roots)} of the first {self.judged} pages have the site's template "
                f"inside their main content (e.g. {self.example}); its repeated blocks are "
                f"left out (template_in_main); to keep it out without learning it, "
                + template_fix(selector))
