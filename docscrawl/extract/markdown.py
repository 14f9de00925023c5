"""Main content -> Markdown, with the blocks, headings, code blocks and links met on the way.

One walk over the main element. Chrome (see `clean.is_chrome`) is skipped, the input tree
is never modified. Wrappers (`div`, `section`...) are transparent: their children become
top-level blocks. Lists, tables, callouts, blockquotes and definition lists are one block.

This module walks the blocks (dispatch, headings, code, block records); the renderer mixes
in the methods of the other jobs: `md_inline` (text runs, links), `md_containers` (lists,
callouts, definition lists, cards...) and `tables`; `md_text` holds the string helpers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from lxml import etree

from docscrawl.extract.callouts import callout_type
from docscrawl.extract.clean import ChromeMemo, class_tokens, visible_text
from docscrawl.extract.code_blocks import classify_kind, code_info, is_code_div, named_language
from docscrawl.extract.headings import HeadingStack, heading_anchor, heading_level, heading_text
from docscrawl.extract.md_containers import ContainerRendering, is_tab_list
from docscrawl.extract.md_inline import INLINE_TAGS, InlineRendering
from docscrawl.extract.md_text import (
    BR,
    Parts,
    code_span,
    collapse,
    escape_block_starts,
    fence,
    finish_inline,
    head,
    tail,
)
from docscrawl.extract.model import Block, CodeBlock, ExtractionWarning, Heading, Link
from docscrawl.extract.tables import GRID_TABLE_CLASSES, TableRendering

# Inline-tag elements that still start a block of their own (rustdoc fields, signatures).
BLOCK_CLASSES = frozenset({"structfield", "variant", "small-section-header", "member-signature"})
SIGNATURE_CLASSES = frozenset({"member-signature"})  # Javadoc
CODE_DIV_CLASSES = frozenset({"redoc-json"})  # code samples rendered without a `pre`
IMAGE_ONLY_RE = re.compile(r"^(\[?!\[[^\]]*\]\([^)]*\)(\]\([^)]*\))?\s*)+$")
CONTEXT_CHARS = 300
MAX_NESTING = 80  # containers deeper than this are kept as plain text
NESTING_WARNING = "markup_too_deep"
FALLBACK_WARNING = "markdown_fallback"
CODE_LANGUAGE_WARNING = "code_language_unread"  # `docscrawl check` counts these


@dataclass(slots=True)
class MainRender:
    """Everything rendered from the main content element."""

    markdown: str
    blocks: list[Block] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    code_blocks: list[CodeBlock] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    warnings: list[ExtractionWarning] = field(default_factory=list)
    # Per block: how many headings, code blocks, links and warnings were rendered when it
    # ended, so a block can be taken out afterwards with what it rendered
    # (`template.content.without_blocks`) instead of rendering the page again.
    marks: list[tuple[int, int, int, int]] = field(default_factory=list)
    # The element of each block (by ordinal), so a block is found without an XPath query.
    elements: dict[int, etree._Element] = field(default_factory=dict)

    def mark(self) -> None:
        """Record where the block just appended ends."""
        self.marks.append((len(self.headings), len(self.code_blocks), len(self.links),
                           len(self.warnings)))


def render_main(
    main_el: etree._Element, *, base_url: str, preamble: etree._Element | None = None,
    excluded: Iterable[etree._Element] = (), notes: Iterable[etree._Element] = (),
) -> MainRender:
    """Render the main content element as Markdown plus its structure.

    `preamble` (see `main_content.title_block`) is rendered first and `notes` (see
    `notes.linked_notes`) last, without recording their links (they lie outside the main
    element; `links.page_links` reports them). Elements in `excluded` (site-profile
    `exclude` selectors) are skipped like chrome.
    """
    try:
        return _Renderer(main_el, base_url, preamble, excluded, tuple(notes)).render()
    except RecursionError:  # pathological nesting the depth guard did not catch
        return _plain_render(main_el)


def _plain_render(main_el: etree._Element) -> MainRender:
    text = visible_text(main_el)
    locator = main_el.getroottree().getpath(main_el)
    blocks = [Block(0, "paragraph", text, [], None, locator, len(text))] if text else []
    warning = ExtractionWarning(FALLBACK_WARNING, "markup nested too deeply; plain text kept")
    return MainRender(text + "\n" if text else "", blocks, warnings=[warning],
                      marks=[(0, 0, 0, 0)] if blocks else [])


class _Renderer(InlineRendering, ContainerRendering, TableRendering):
    """One rendering pass; state lives on the instance and dies with it."""

    def __init__(
        self, main: etree._Element, base_url: str, preamble: etree._Element | None = None,
        excluded: Iterable[etree._Element] = (), notes: tuple[etree._Element, ...] = (),
    ) -> None:
        self.main = main
        self.preamble = preamble
        self.notes = notes
        self.record = True  # False while rendering the preamble
        self.tree = main.getroottree()  # its `getpath` gives every block's locator
        self.main_locator = self.tree.getpath(main)
        self.base_url = base_url
        self.stack = HeadingStack()
        self.out = MainRender(markdown="")
        self.depth = 0  # > 0 while inside a composite block (list, table, callout...)
        self.ordinal = 0  # ordinal of the top-level block being rendered
        self.in_cell = False
        self.in_card = False
        self.last_prose = ""
        self.waiting_for_context: list[CodeBlock] = []
        self.last_code_kind: str | None = None
        self.blocks_since_code = 0
        self.nesting = 0
        self.chrome = ChromeMemo(excluded)
        self.containers: dict[etree._Element | None, tuple[str, str | None]] = {}

    def text(self, el: etree._Element) -> str:
        """Visible text of `el` (chrome skipped, memoized chrome checks)."""
        return visible_text(el, chrome=self.chrome)

    def render(self) -> MainRender:
        parts: Parts = []
        if self.preamble is not None:
            parts = self._unrecorded(self.preamble)
        # A main element that is itself a code listing (a source view: HsColour's and
        # Haddock's `<body><pre>`) is one code block, not the run of text inside it.
        parts += self.code(self.main) if self.main.tag == "pre" else self.children(self.main)
        for note in self.notes:
            parts += self._unrecorded(note)
        self.close_section()
        body = "\n\n".join(md for _, md in parts if md).strip("\n")
        self.out.markdown = body + "\n" if body else ""
        return self.out

    def _unrecorded(self, el: etree._Element) -> Parts:
        """A block outside the main element (the title block, a note), rendered without
        recording its links: `links.page_links` reports them in their own region."""
        self.record = False
        try:
            return self.block(el)
        finally:
            self.record = True

    # ---- block level ------------------------------------------------------------------

    def children(self, el: etree._Element, skip: etree._Element | None = None) -> Parts:
        """Blocks of `el`'s content; runs of text and inline elements become paragraphs."""
        if self.nesting >= MAX_NESTING:
            return self.too_deep(el)
        self.nesting += 1
        try:
            return self.children_blocks(el, skip)
        finally:
            self.nesting -= 1

    def too_deep(self, el: etree._Element) -> Parts:
        """Keep the text (and links) of a subtree nested beyond MAX_NESTING."""
        if not any(w.code == NESTING_WARNING for w in self.out.warnings):
            path = el.getroottree().getpath(el)
            detail = f"content nested over {MAX_NESTING} levels kept as text: {path[-120:]}"
            self.out.warnings.append(ExtractionWarning(NESTING_WARNING, detail))
        self.collect_links(el)
        text = self.text(el)
        return [("paragraph", self.leaf("paragraph", el, text, text))] if text else []

    def children_blocks(self, el: etree._Element, skip: etree._Element | None) -> Parts:
        out: Parts = []
        text = el.text
        run: list[str | etree._Element] = [text] if text else []
        # the hottest loop of the renderer; `self.is_inline` is not kept in a local: the
        # compiled build (docs/compiled.md) would call it with too few arguments (mypyc 2.4)
        chrome = self.chrome
        for child in el:
            if child is not skip and isinstance(child.tag, str) and not chrome(child):
                if self.is_inline(child):
                    run.append(child)
                else:
                    if run:
                        self.flush(run, el, out)
                    out.extend(self.block(child))
            tail = child.tail
            if tail:
                run.append(tail)
        if run:
            self.flush(run, el, out)
        return out

    def is_inline(self, el: etree._Element) -> bool:
        if el.tag not in INLINE_TAGS or class_tokens(el) & BLOCK_CLASSES:
            return False
        # an inline tag is no `h1`-`h6`: only `role=heading` can make it a heading
        if el.get("role") is not None and heading_level(el) is not None:
            return False
        chrome = self.chrome
        for child in el:
            tag = child.tag
            if isinstance(tag, str) and tag not in INLINE_TAGS and not chrome(child):
                return False
        return True

    def flush(self, run: list[str | etree._Element], container: etree._Element, out: Parts) -> None:
        if not run:
            return
        only = run[0] if len(run) == 1 else None
        if isinstance(only, str):
            if only.isspace():
                # the whitespace between two blocks (half of all runs): no Markdown, no text
                # (`str.isspace` and `finish_inline`'s `str.split` ask `Py_UNICODE_ISSPACE`)
                run.clear()
                return
            # plain text (a table cell, a list item): without a line-break sentinel its
            # Markdown and its text are the same collapse (`inline_nodes` of one string)
            if BR in only:
                md, text = finish_inline(only), collapse(only)
            else:
                md = text = collapse(only)
        else:
            md, text = self.inline_nodes(run)
        run.clear()
        if not md:
            return
        kind = "image" if "![" in md and IMAGE_ONLY_RE.match(md) else "paragraph"
        if kind == "paragraph":
            md = escape_block_starts(md)
        out.append((kind, self.leaf(kind, container, md, text)))
        if kind == "paragraph":
            self.prose(text)

    def block(self, el: etree._Element) -> Parts:
        level = heading_level(el)
        if level is not None:
            return self.heading(el, level)
        tag = el.tag
        if el.get("class") is not None or el.get("role") is not None:
            # callouts, tab rows and div grids are all marked by a class or a role
            callout = callout_type(el)
            if callout is not None:
                return [(
                    "callout", self.composite("callout", el, lambda: self.callout(el, callout))
                )]
            if is_tab_list(el):
                return self.tab_labels(el)
            if class_tokens(el) & GRID_TABLE_CLASSES:
                return [("table", self.composite("table", el, lambda: self.grid_table(el)))]
        handler = BLOCK_HANDLERS.get(tag)
        if handler is not None:
            return handler(self, el)
        tokens = class_tokens(el)
        if tokens & SIGNATURE_CLASSES:
            text = self.text(el)
            self.collect_links(el)
            return [("other", self.leaf("other", el, code_span(text), text))]
        if tokens & CODE_DIV_CLASSES or is_code_div(el):
            return self.code(el)
        if tag == "a" and el.get("href"):
            if _wraps_heading(el):  # `<a href="#g:1"><h1>..</h1></a>` (Haddock): a heading
                return self.children(el)
            return [("other", self.composite("other", el, lambda: self.card(el)))]
        return self.children(el)

    def leaf(self, kind: str, el: etree._Element, md: str, text: str) -> str:
        """Register a top-level block that contains no other block."""
        if self.depth == 0 and md:
            self.out.blocks.append(self.make_block(len(self.out.blocks), kind, el, md, text))
            self.out.mark()
        if kind != "code":
            self.blocks_since_code += 1
        return md

    def composite(self, kind: str, el: etree._Element, render: Callable[[], str]) -> str:
        """Render a block that holds other blocks; register it when it is top-level."""
        top = self.depth == 0
        if top:
            self.ordinal = len(self.out.blocks)
            path, anchor = self.stack.path, self.stack.anchor
        self.depth += 1
        try:
            md = render()
        finally:
            self.depth -= 1
        if top and md:
            block = self.make_block(self.ordinal, kind, el, md, self.text(el))
            block.heading_path, block.anchor = path, anchor
            self.out.blocks.append(block)
            self.out.mark()
        return md

    def make_block(self, ordinal: int, kind: str, el: etree._Element, md: str, text: str) -> Block:
        self.out.elements[ordinal] = el
        return Block(
            ordinal=ordinal,
            kind=kind,
            markdown=md,
            heading_path=self.stack.path,
            anchor=self.stack.anchor,
            locator=self.tree.getpath(el),
            text_chars=len(text),
        )

    # ---- headings and prose context ---------------------------------------------------

    def heading(self, el: etree._Element, level: int) -> Parts:
        text = heading_text(el)
        if not text:
            return []
        if self.in_card or self.in_cell or (not self.stack.path and _is_kicker(el, level)):
            md, plain = self.inline_nodes([el])
            return [("paragraph", self.leaf("paragraph", el, f"**{md}**", plain))]
        self.close_section()
        scope = self.main if self.record else self.preamble
        heading, warning = self.stack.push(level, text, heading_anchor(el, scope, self.base_url))
        self.out.headings.append(heading)
        if warning:
            self.out.warnings.append(warning)
        # Plain text, the same words as its heading path: a heading that links to its own
        # anchor (or elsewhere) keeps its links in `links`, never a URL in the label text.
        self.collect_links(el)
        return [("heading", self.leaf("heading", el, f"{'#' * level} {text}", text))]

    def prose(self, text: str) -> None:
        """Remember explanatory prose for the next code block; fill waiting ones."""
        if not text:
            return
        self.last_prose = tail(text, CONTEXT_CHARS)
        for code_block in self.waiting_for_context:
            code_block.context = head(text, CONTEXT_CHARS)
        self.waiting_for_context.clear()

    def close_section(self) -> None:
        for code_block in self.waiting_for_context:
            code_block.context = code_block.heading_path[-1] if code_block.heading_path else ""
        self.waiting_for_context.clear()
        self.last_prose = ""
        self.last_code_kind = None

    # ---- code -------------------------------------------------------------------------

    def code(self, el: etree._Element) -> Parts:
        info = code_info(el)
        if not info.code.strip():
            return []
        after_command = self.last_code_kind == "command" and self.blocks_since_code <= 1
        code_block = CodeBlock(
            code=info.code,
            language=info.language,
            kind=classify_kind(
                info.code, info.language, info.raw_language, after_command=after_command
            ),
            heading_path=self.stack.path,
            context=self.last_prose,
            block_ordinal=len(self.out.blocks) if self.depth == 0 else self.ordinal,
        )
        if info.language is None and (named := named_language(el)):
            self.out.warnings.append(ExtractionWarning(
                CODE_LANGUAGE_WARNING, f"markup names a language ({named}) the code block "
                f"record lacks: {info.code[:40]!r}"))
        if not code_block.context:
            self.waiting_for_context.append(code_block)
        self.out.code_blocks.append(code_block)
        self.last_code_kind, self.blocks_since_code = code_block.kind, 0
        self.collect_links(el)
        if self.in_cell:
            md = "<br>".join(code_span(line) for line in info.code.split("\n"))
        else:
            md = fence(info.code, info.language)
        return [("code", self.leaf("code", el, md, info.code))]

    @staticmethod
    def join(parts: Parts) -> str:
        return "\n\n".join(md for _, md in parts if md)


BLOCK_HANDLERS: dict[str, Callable[[_Renderer, etree._Element], Parts]] = {
    "p": _Renderer.paragraph,
    "ul": _Renderer.list_block,
    "ol": _Renderer.list_block,
    "dl": _Renderer.definition_list,
    "table": _Renderer.table,
    "pre": _Renderer.code,
    "blockquote": _Renderer.quote_block,
    "hr": _Renderer.rule,
    "figure": _Renderer.figure,
    "details": _Renderer.details,
    "summary": _Renderer.summary,
}


# ---- small structural helpers --------------------------------------------------------


def _is_kicker(el: etree._Element, level: int) -> bool:
    """A heading directly followed by the page's `h1` is that title's label, not a
    section (gi-docgen's `<header><h3>Class</h3><h1>GskBlurNode</h1>`); asked only
    before the first heading."""
    nxt = el.getnext()
    while nxt is not None and not isinstance(nxt.tag, str):
        nxt = nxt.getnext()
    if nxt is None:
        return False
    return level > 1 and heading_level(nxt) == 1


def _wraps_heading(a: etree._Element) -> bool:
    """True when a link's only element child is a heading (a heading that is its own
    permalink) and the link has no text of its own."""
    children = [c for c in a if isinstance(c.tag, str)]
    return (
        len(children) == 1 and heading_level(children[0]) is not None
        and not (a.text or "").strip() and not (children[0].tail or "").strip()
    )
