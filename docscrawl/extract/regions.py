"""Classify the block-level regions of a page (navigation kinds, main content).

Evidence, strongest first: the main-content element, the generator profile's selectors,
ARIA roles and landmark tags read with the class/id/aria-label vocabulary, previous/next
links, lists of same-page fragment links, and finally link clusters left unlabelled
(`unknown`). The innermost classified ancestor of an element gives its region.

Cross-page repetition is not judged here: `region_signature` gives a region's link-set
signature for a crawl-level component, which can feed its verdicts back through
`classify(..., overrides={locator: region})`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from lxml import etree

from docscrawl.extract.docindex import DocIndex
from docscrawl.extract.main_content import find_main_content, locator, text_chars
from docscrawl.extract.model import Region
from docscrawl.extract.profiles import (
    NAV_TOKENS,
    PAGINATION_ACCESSKEYS,
    PAGINATION_RELS,
    PAGINATION_TEXTS,
    ROLE_HINTS,
    may_name_region,
    profile_for,
    select,
    vocabulary_region,
    vocabulary_tokens,
)
from docscrawl.extract.urls import join

# Profile field -> region it marks.
PROFILE_FIELDS: tuple[tuple[str, str], ...] = (
    ("breadcrumb", "breadcrumb"),
    ("toc", "table_of_contents"),
    ("pagination", "pagination"),
    ("related", "related_content"),
    ("sidebar", "sidebar_navigation"),
    ("primary_nav", "primary_navigation"),
    ("footer", "footer_navigation"),
)
REGION_TAGS = (
    "nav", "aside", "header", "footer", "div", "section", "ul", "ol", "table", "menu", "td",
    "p", "dl",
)
REGION_TAG_SET = frozenset(REGION_TAGS)
LIST_TAGS = ("ul", "ol")
LANDMARK_TAGS = frozenset({"nav", "menu", "aside", "header", "footer"})  # regions by tag
# Kinds specific enough to be recognised inside another region (a TOC inside a sidebar,
# a breadcrumb inside the main content); the general kinds never nest.
NESTING_KINDS = frozenset({"breadcrumb", "table_of_contents", "pagination", "related_content"})
NAV_KINDS = frozenset({
    "primary_navigation", "sidebar_navigation", "table_of_contents", "breadcrumb",
    "pagination", "footer_navigation",
})
MIN_TOC_LINKS = 2
TOC_FRAGMENT_SHARE = 0.9
NAMED_TOC_FRAGMENTS = 0.5  # share of fragment links a block named "toc" still needs
INSIDE_MAIN_LINK_SHARE = 0.5  # link text share a block in the main content needs to be nav
SIDEBAR_MIN_LINKS = 15  # a navigation block this big (or nested lists) is a sidebar tree
PAGINATION_MAX_LINKS = 4


@dataclass(slots=True)
class RegionMap:
    """Classified regions of one page, and the element -> region lookup links use."""

    main: etree._Element
    kinds: dict[etree._Element, str]
    regions: list[Region]
    # `region_element`'s answers; `classify` fills in every anchor's (`_anchor_owners`)
    _nearest: dict[etree._Element, etree._Element | None] = field(default_factory=dict)
    locators: dict[etree._Element, str] = field(default_factory=dict)  # region el -> locator
    # `is_pagination_anchor` of every `a` of the page that could be one (`paging_anchors`),
    # computed once by `classify`; `paging_complete`: anchors left out are not pagination.
    paging: dict[etree._Element, bool] = field(default_factory=dict)
    paging_complete: bool = False
    anchor_regions: dict[etree._Element, str] = field(default_factory=dict)  # links._anchor_region

    def is_pagination(self, a: etree._Element) -> bool:
        """`is_pagination_anchor(a)`, looked up when `classify` already answered it."""
        found = self.paging.get(a)
        if found is None:
            return False if self.paging_complete else is_pagination_anchor(a)
        return found

    def region_element(self, el: etree._Element) -> etree._Element | None:
        """The innermost classified element containing `el` (itself included), or None."""
        walked: list[etree._Element] = []
        found: etree._Element | None = None
        node: etree._Element | None = el
        while node is not None:
            if node in self._nearest:
                found = self._nearest[node]
                break
            walked.append(node)
            if node in self.kinds:
                found = node
                break
            node = node.getparent()
        for step in walked:
            self._nearest[step] = found
        return found

    def region_of(self, el: etree._Element) -> str | None:
        """Region kind of the innermost classified element containing `el`, or None."""
        owner = self.region_element(el)
        return self.kinds[owner] if owner is not None else None


def _tokens_of(cls: str | None, ident: str | None, aria: str | None) -> frozenset[str]:
    """Vocabulary tokens of an element's class, id and aria-label values."""
    return vocabulary_tokens(cls, ident, (aria or "").replace(" ", "-"))


def _links(el: etree._Element) -> list[etree._Element]:
    return [a for a in el.iter("a") if a.get("href") is not None]


def _first_links(el: etree._Element, limit: int) -> list[etree._Element]:
    """The first `limit` links of `_links(el)` (a cheap test of "more than a few")."""
    found: list[etree._Element] = []
    for a in el.iter("a"):
        if a.get("href") is not None:
            found.append(a)
            if len(found) == limit:
                break
    return found


def _is_self_fragment(href: str, base_url: str | None) -> bool:
    href = href.strip()
    if href.startswith("#"):
        return True
    if not base_url or "#" not in href:
        return False
    joined = join(base_url, href)
    return joined is not None and joined.partition("#")[0] == base_url.partition("#")[0]


def _fragment_share_at_least(
    links: list[etree._Element], base_url: str | None, share: float
) -> bool:
    """True when at least `share` of `links` are same-page fragment links.

    Stops as soon as the answer is certain: the misses already keep the share below
    `share`, or the hits already reach it (big sidebars decide within a few links).
    """
    total = len(links)
    if not total:
        return share <= 0.0
    hits = misses = 0
    for a in links:
        if _is_self_fragment(a.get("href", ""), base_url):
            hits += 1
            if hits / total >= share:
                return True
        else:
            misses += 1
            if (total - misses) / total < share:
                return False
    return hits / total >= share


def _link_text_share(el: etree._Element) -> float:
    total = text_chars(el)
    if not total:
        return 1.0 if _links(el) else 0.0
    return min(1.0, sum(text_chars(a) for a in _links(el)) / total)


_NESTED_LIST = etree.XPath(
    "boolean(descendant-or-self::*[self::ul or self::ol]//*[self::ul or self::ol])"
)


def _has_nested_list(el: etree._Element) -> bool:
    return bool(_NESTED_LIST(el))


@dataclass(slots=True)
class _Context:
    """Landmark ancestors of an element, found once per candidate."""

    in_main: bool
    in_header: bool
    in_footer: bool
    in_aside: bool


def _context(el: etree._Element, main: etree._Element) -> _Context:
    ctx = _Context(False, False, False, False)
    for anc in el.iterancestors():
        role = (anc.get("role") or "").lower()
        if anc is main:
            ctx.in_main = True
        elif anc.tag == "header" or role == "banner":
            ctx.in_header = True
        elif anc.tag == "footer" or role == "contentinfo":
            ctx.in_footer = True
        elif anc.tag == "aside" or role == "complementary":
            ctx.in_aside = True
    return ctx


def _nav_kind_by_shape(
    el: etree._Element, ctx: _Context, links: list[etree._Element], *, after_main: bool,
    base_url: str | None,
) -> str | None:
    """Kind of a navigation block that names no kind itself."""
    if len(links) >= MIN_TOC_LINKS and _fragment_share_at_least(
        links, base_url, TOC_FRAGMENT_SHARE
    ):
        return "table_of_contents"
    if ctx.in_header:
        return "primary_navigation"
    if ctx.in_footer:
        return "footer_navigation"
    if ctx.in_aside or len(links) >= SIDEBAR_MIN_LINKS or _has_nested_list(el):
        return "sidebar_navigation"
    return None if after_main else "primary_navigation"


def _generic_kind(
    el: etree._Element, main: etree._Element, *, after_main: bool, base_url: str | None
) -> tuple[str | None, bool]:
    """(region kind or None, whether the element names its kind) of a landmark element."""
    tag = el.tag
    role, cls, ident, aria = el.get("role"), el.get("class"), el.get("id"), el.get("aria-label")
    if not (role or cls or ident or aria) and tag not in LANDMARK_TAGS:
        return None, False  # most paragraphs, cells and divs: nothing names a region
    hint = ROLE_HINTS.get((role or "").lower())
    named: str | None = None
    nav_named = False  # neither is found in values no vocabulary word occurs in
    if ((cls and may_name_region(cls)) or (ident and may_name_region(ident))
            or (aria and may_name_region(aria))):
        tokens = _tokens_of(cls, ident, aria)
        named = vocabulary_region(tokens)
        nav_named = bool(tokens & NAV_TOKENS)
    is_nav = tag in ("nav", "menu") or hint == "nav" or nav_named
    if not (named or is_nav or hint or tag in ("aside", "header", "footer")):
        return None, False
    links = _links(el)
    if not links:
        return None, False
    if named == "table_of_contents" and not _fragment_share_at_least(
        links, base_url, NAMED_TOC_FRAGMENTS
    ):
        # "toc" in a class name without same-page links: PyData's sidebar tree sits in
        # `div.bd-toc-item`; the element takes its ancestor's region instead.
        return None, False
    ctx = _context(el, main)
    if ctx.in_main:
        kind = named or hint
        if kind in NESTING_KINDS and _link_text_share(el) >= INSIDE_MAIN_LINK_SHARE:
            return kind, True
        return None, False
    if named:
        return named, True
    if hint and hint not in ("nav", "aside"):
        return hint, True
    if tag == "header":
        return "primary_navigation", False
    if tag == "footer":
        return "footer_navigation", False
    if (tag == "aside" or hint == "aside") and _link_text_share(el) < INSIDE_MAIN_LINK_SHARE:
        return "related_content", False
    if tag in ("nav", "menu", "aside") or hint in ("nav", "aside") or tag in LIST_TAGS:
        return _nav_kind_by_shape(el, ctx, links, after_main=after_main, base_url=base_url), False
    return None, False


# Words every PAGINATION_TEXTS entry contains: an anchor's text is checked for them before
# `is_pagination_anchor` decides.
_PAGING_WORDS = ("next", "prev", "older", "newer")


def paging_anchors(root: etree._Element) -> dict[etree._Element, bool]:
    """`is_pagination_anchor` of every anchor that could be one, in document order: those
    with a rel or accesskey, or a text holding one of `_PAGING_WORDS`. (One `iter("a")`
    pass: an XPath `//a[...]` doing the same took 2.5 times as long.)"""
    paging = {}
    for a in root.iter("a"):
        text = a.text if len(a) == 0 else "".join(a.itertext())
        if text:  # `_PAGING_WORDS` spelled out: a generator per anchor cost more than this
            text = text.lower()
            if "next" in text or "prev" in text or "older" in text or "newer" in text:
                paging[a] = is_pagination_anchor(a)
                continue
        if a.get("rel") is not None or a.get("accesskey") is not None:
            paging[a] = is_pagination_anchor(a)
    return paging


def is_pagination_anchor(a: etree._Element) -> bool:
    """A previous/next link: rel=next/prev, accesskey n/p, or text like "Next"."""
    rels = set((a.get("rel") or "").lower().split())
    if rels & PAGINATION_RELS or (a.get("accesskey") or "").lower() in PAGINATION_ACCESSKEYS:
        return True
    text = "".join(a.itertext())
    return len(text) < 40 and _ARROWS.sub(" ", text).strip().lower() in PAGINATION_TEXTS


_ARROWS = re.compile(r"[\s«»←→‹›<>|:\u2190-\u21ff]+")


def _pagination_containers(
    blocked: set[etree._Element], paging: dict[etree._Element, bool]
) -> list[etree._Element]:
    """Smallest blocks holding previous/next links (rel or accesskey), at most a few links.

    `paging` is `paging_anchors(root)`: every anchor that could be pagination, in order.
    """
    found: list[etree._Element] = []
    for a, is_paging in paging.items():
        if not is_paging:
            continue
        best: etree._Element | None = None
        for anc in a.iterancestors():
            if anc in blocked:
                break
            links = _first_links(anc, PAGINATION_MAX_LINKS + 1)
            if len(links) > PAGINATION_MAX_LINKS or not all(
                paging.get(x, False) for x in links
            ):
                break
            best = anc
        if best is not None and best not in found:
            found.append(best)
    return found


def _fragment_lists(
    root: etree._Element, base_url: str | None, main: etree._Element
) -> list[etree._Element]:
    """Outermost lists of same-page fragment links (tables of contents)."""
    found: list[etree._Element] = []
    for lst in root.iter(*LIST_TAGS):
        if found and any(anc in found for anc in lst.iterancestors()):
            continue
        links = _links(lst)
        if len(links) < MIN_TOC_LINKS or not _fragment_share_at_least(
            links, base_url, TOC_FRAGMENT_SHARE
        ):
            continue
        inside_main = lst is main or any(anc is main for anc in lst.iterancestors())
        if inside_main and _link_text_share(lst) < INSIDE_MAIN_LINK_SHARE:
            continue
        found.append(lst)
    return found


def _orphan_containers(
    owners: dict[etree._Element, etree._Element | None], blocked: set[etree._Element]
) -> list[etree._Element]:
    """Nearest block containers of links that no classified region holds (`owners`:
    `_anchor_owners` of the regions so far)."""
    found: dict[etree._Element, None] = {}
    for a, owner in owners.items():
        if owner is not None or a.tag != "a" or a.get("href") is None:
            continue
        container = next((anc for anc in a.iterancestors() if anc.tag in REGION_TAGS), None)
        if container is not None and container not in blocked:
            found[container] = None
    return list(found)


def _depth(el: etree._Element) -> int:
    return sum(1 for _ in el.iterancestors())


def _anchor_owners(
    root: etree._Element, regions: Iterable[etree._Element]
) -> dict[etree._Element, etree._Element | None]:
    """`RegionMap.region_element` of every `a` and `area` of the page, in document order.

    Each region element's anchors are listed by lxml (`iter`, in C), the outer regions
    before the inner ones, so an anchor ends with its innermost region: one pass per
    region instead of a walk up from every anchor (discovery, the page's links and the
    orphan search each asked it of every anchor)."""
    owners: dict[etree._Element, etree._Element | None] = dict.fromkeys(root.iter("a", "area"))
    for el in sorted(regions, key=_depth):
        for a in el.iter("a", "area"):
            owners[a] = el
    return owners


def _add_owners(
    owners: dict[etree._Element, etree._Element | None], added: list[etree._Element]
) -> None:
    """`owners` updated for the regions `added` (`unknown` containers, which hold no
    classified region's anchor but may hold a classified region, or one another)."""
    new = set(added)
    for el in sorted(added, key=_depth):
        for a in el.iter("a", "area"):
            owner = owners.get(a)
            if owner is None or owner in new:
                owners[a] = el


def region_signature(el: etree._Element, base_url: str) -> str:
    """Link-set signature of a region: a digest of its sorted absolute link URLs.

    A crawl-level component compares signatures across pages: a region repeated with the
    same links on many pages is template navigation.
    """
    return _signature(_links(el), base_url)


def _signature(links: list[etree._Element], base_url: str) -> str:
    """Digest of the sorted absolute link URLs, fragments and the page itself left out
    (so a sidebar that only marks a different current page keeps its signature)."""
    page = base_url.partition("#")[0]
    urls: set[str] = set()
    for a in links:
        href = a.get("href", "").strip()
        url = (join(base_url, href) or href).partition("#")[0]
        if url != page:
            urls.add(url)
    return "sha256:" + hashlib.sha256("\n".join(sorted(urls)).encode()).hexdigest()


def _build_regions(kinds: dict[etree._Element, str], base_url: str | None) -> list[Region]:
    regions = []
    for el, kind in kinds.items():
        links = _links(el)
        signature = None
        if kind != "main_content" and links:
            signature = _signature(links, base_url or "")
        regions.append(Region(kind, locator(el), len(links), text_chars(el), signature))
    return regions


def _drop_redundant(kinds: dict[etree._Element, str]) -> dict[etree._Element, str]:
    """Drop regions nested in a region of the same kind."""
    kept: dict[etree._Element, str] = {}
    for el, kind in kinds.items():
        outer = next((anc for anc in el.iterancestors() if anc in kinds), None)
        if outer is not None and kinds[outer] == kind:
            continue
        kept[el] = kind
    return kept


def classify(
    root: etree._Element,
    *,
    generator: str | None = None,
    main_el: etree._Element | None = None,
    base_url: str | None = None,
    overrides: Mapping[str, str] | None = None,
    index: DocIndex | None = None,
) -> RegionMap:
    """Classify a page's regions; see the module docstring for the evidence order.

    `index` (the page's `DocIndex`) only saves tree walks; results are the same.
    """
    if main_el is None:
        main_el = find_main_content(root, generator=generator)[0]
    # Neither the main element nor its ancestors can be navigation.
    blocked = {main_el, *main_el.iterancestors()}
    kinds: dict[etree._Element, str] = {}
    profile = profile_for(generator)
    if profile is not None:
        for field_name, kind in PROFILE_FIELDS:
            for css in getattr(profile, field_name):
                if index is not None and not index.may_match(css):
                    continue
                for el in index.css(root, css) if index is not None else select(root, css):
                    if el not in blocked:
                        kinds.setdefault(el, kind)
    main_seen = False
    # The main element is visited too when its tag is no region tag (`main`, `article`):
    # what follows it is after the main content.
    tags = REGION_TAGS if main_el.tag in REGION_TAG_SET else (*REGION_TAGS, main_el.tag)
    for el in root.iter(*tags):
        if el is main_el:
            main_seen = True
            continue
        if el.tag not in REGION_TAG_SET:
            continue  # another element of the main element's tag
        if not el.keys() and el.tag not in LANDMARK_TAGS:
            continue  # `_generic_kind`'s first test, without the call: most p, td and div
        if el in blocked or el in kinds:
            continue
        generic, named = _generic_kind(el, main_el, after_main=main_seen, base_url=base_url)
        # Only a named, specific region (breadcrumb, toc...) splits one classified around it.
        nests = named and generic in NESTING_KINDS
        if generic and (nests or not any(anc in kinds for anc in el.iterancestors())):
            kinds[el] = generic
    paging = paging_anchors(root)
    for el in _pagination_containers(blocked, paging):
        kinds.setdefault(el, "pagination")
    for el in _fragment_lists(root, base_url, main_el):
        if el not in blocked:
            kinds[el] = "table_of_contents"
    kinds[main_el] = "main_content"
    kinds = _drop_redundant(_in_document_order(root, kinds, index))
    owners = _anchor_owners(root, kinds)
    orphans = _orphan_containers(owners, blocked)
    for el in orphans:
        kinds[el] = "unknown"
    _add_owners(owners, orphans)
    if overrides:
        for el in list(kinds):
            kinds[el] = overrides.get(locator(el), kinds[el])
    kinds = _in_document_order(root, kinds, index)
    regions = _build_regions(kinds, base_url)
    locators = {el: region.locator for el, region in zip(kinds, regions, strict=True)}
    return RegionMap(main_el, kinds, regions, _nearest=owners, locators=locators, paging=paging,
                     paging_complete=True)


def _in_document_order(
    root: etree._Element, kinds: dict[etree._Element, str], index: DocIndex | None = None
) -> dict[etree._Element, str]:
    if len(kinds) < 2:
        return dict(kinds)
    if index is not None and index.root is root:
        return {el: kinds[el] for el in index.in_order(kinds)}
    return {el: kinds[el] for el in root.iter() if el in kinds}


def classify_regions(
    root: etree._Element, *, generator: str | None = None, base_url: str | None = None
) -> list[Region]:
    """Every classified region of the page, in document order."""
    return classify(root, generator=generator, base_url=base_url).regions
