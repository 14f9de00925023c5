"""Main content -> Markdown, with the blocks, headings, code blocks and links met on the way.

One walk over the main element. Chrome (see `clean.is_chrome`) is skipped, the input tree
is never modified. Wrappers (`div`, `section`...) are transparent: their children become
top-level blocks. Lists, tables, callouts, blockquotes and definition lists are one block.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from lxml import etree

from docscrawl.extract.callouts import ALERTS, GFM_ALERT_RE, callout_title, callout_type
from docscrawl.extract.clean import (
    ChromeMemo,
    class_tokens,
    is_chrome,
    iter_content,
    visible_text,
)
from docscrawl.extract.code_blocks import classify_kind, code_info, named_language
from docscrawl.extract.css_separators import css_separators, glued_in_row
from docscrawl.extract.headings import HeadingStack, heading_anchor, heading_level, heading_text
from docscrawl.extract.links import SKIP_SCHEMES
from docscrawl.extract.main_links import card_title, link_container, link_target
from docscrawl.extract.md_text import (
    BR,
    Parts,
    code_span,
    collapse,
    escape_block_starts,
    escape_link_text,
    fence,
    finish_inline,
    head,
    indent,
    join_item,
    join_url,
    md_url,
    quote,
    tail,
    wrap,
)
from docscrawl.extract.model import Block, CodeBlock, ExtractionWarning, Heading, Link
from docscrawl.extract.tables import GRID_TABLE_CLASSES, TableRendering

# ---- tables of markup ----------------------------------------------------------------

INLINE_TAGS = frozenset({
    "a", "abbr", "acronym", "b", "bdi", "bdo", "big", "br", "cite", "code", "data", "del",
    "dfn", "em", "font", "i", "img", "ins", "kbd", "label", "mark", "math", "nobr", "q",
    "rp", "rt", "ruby", "s", "samp", "small", "span", "strike", "strong", "sub", "sup",
    "time", "tt", "u", "var", "wbr",
})
EMPHASIS = {
    "strong": "**", "b": "**", "em": "*", "i": "*", "cite": "*", "dfn": "*", "var": "*",
    "del": "~~", "s": "~~", "strike": "~~",
}
CODE_TAGS = frozenset({"code", "kbd", "samp", "tt"})
# Inline-tag elements that still start a block of their own (rustdoc fields, signatures).
BLOCK_CLASSES = frozenset({"structfield", "variant", "small-section-header", "member-signature"})
SIGNATURE_CLASSES = frozenset({"member-signature"})  # Javadoc
CODE_DIV_CLASSES = frozenset({"redoc-json"})  # code samples rendered without a `pre`
API_TERM_CLASSES = frozenset({"sig", "sig-object"})  # Sphinx `dl.py.function > dt.sig`
LAYOUT_LIST_CLASSES = frozenset({
    "member-list", "blocklist", "blocklistlast", "details-list", "summary-list", "block-list",
})
TAB_LABEL_CLASSES = frozenset({"tabbed-labels"})
# Links rendered as their text only: docutils headings link back to a removed local TOC.
UNWRAPPED_LINK_CLASSES = frozenset({"toc-backref"})
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


class _Renderer(TableRendering):
    """One rendering pass; state lives on the instance and dies with it."""

    def __init__(
        self, main: etree._Element, base_url: str, preamble: etree._Element | None = None,
        excluded: Iterable[etree._Element] = (), notes: tuple[etree._Element, ...] = (),
    ) -> None:
        self.main = main
        self.preamble = preamble
        self.notes = notes
        self.record = True  # False while rendering the preamble
        self.main_locator = main.getroottree().getpath(main)
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

    def text(self, el: etree._Element) -> str:
        """Visible text of `el` (chrome skipped, memoized chrome checks)."""
        return visible_text(el, chrome=self.chrome)

    def render(self) -> MainRender:
        parts: Parts = []
        if self.preamble is not None:
            parts = self._unrecorded(self.preamble)
        parts += self.children(self.main)
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
        run: list[str | etree._Element] = [el.text] if el.text else []
        for child in el:
            if child is not skip and isinstance(child.tag, str) and not self.chrome(child):
                if self.is_inline(child):
                    run.append(child)
                else:
                    self.flush(run, el, out)
                    out.extend(self.block(child))
            if child.tail:
                run.append(child.tail)
        self.flush(run, el, out)
        return out

    def is_inline(self, el: etree._Element) -> bool:
        if el.tag not in INLINE_TAGS or class_tokens(el) & BLOCK_CLASSES:
            return False
        if heading_level(el) is not None:
            return False
        return not any(
            isinstance(c.tag, str) and c.tag not in INLINE_TAGS and not self.chrome(c) for c in el
        )

    def flush(self, run: list[str | etree._Element], container: etree._Element, out: Parts) -> None:
        if not run:
            return
        md, text = self.inline_nodes(run)
        run.clear()
        if not md:
            return
        kind = "image" if IMAGE_ONLY_RE.match(md) else "paragraph"
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
            if _is_tab_list(el):
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
        if tokens & CODE_DIV_CLASSES:
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
            locator=el.getroottree().getpath(el),
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

    # ---- composite blocks -------------------------------------------------------------

    def tab_labels(self, el: etree._Element) -> Parts:
        """Tab names (npm | yarn) on one line; not prose, so not code context."""
        labels = [
            self.text(tab) for tab in el if isinstance(tab.tag, str) and not self.chrome(tab)
        ]
        md = " | ".join(label for label in labels if label)
        return [("paragraph", self.leaf("paragraph", el, md, md))] if md else []

    def list_block(self, el: etree._Element) -> Parts:
        if _is_layout_list(el):
            out: Parts = []
            for li in el:
                if isinstance(li.tag, str) and not self.chrome(li):
                    out.extend(self.children(li) if li.tag == "li" else self.block(li))
            return out
        return [("list", self.composite("list", el, lambda: self.list_md(el)))]

    def list_md(self, el: etree._Element) -> str:
        ordered = el.tag == "ol"
        number = int(el.get("start")) if (el.get("start") or "").strip().isdigit() else 1
        items: list[str] = []
        for li in el:
            if not isinstance(li.tag, str) or self.chrome(li):
                continue
            if li.tag != "li":  # stray nested list: belongs to the previous item
                nested = join_item(self.block(li))
                if nested and items:
                    items[-1] += "\n" + indent(nested, 2, first=True)
                elif nested:
                    items.append(nested)
                continue
            marker = f"{number}. " if ordered else "- "
            number += 1
            body = _task_box(li) + join_item(self.children(li))
            items.append(marker + indent(body, len(marker)) if body else marker.rstrip())
        loose = any("\n\n" in item for item in items)
        return ("\n\n" if loose else "\n").join(items)

    def quote_block(self, el: etree._Element) -> Parts:
        kind = "callout" if GFM_ALERT_RE.match(self.text(el)) else "blockquote"
        return [(kind, self.composite(kind, el, lambda: quote(self.join(self.children(el)))))]

    def callout(self, el: etree._Element, kind: str) -> str:
        title_el = callout_title(el)
        body_el = el
        if "admonitionblock" in class_tokens(el):  # Antora/Asciidoctor: table layout
            body_el = next((td for td in el.iter("td") if "content" in class_tokens(td)), el)
        alert = ALERTS.get(kind, "NOTE")
        lines = [f"[!{alert}]"]
        if title_el is not None:
            title, _ = self.inline_nodes([title_el])
            title = title.replace("\n", " ").rstrip(":").strip()
            if title and title.lower() != alert.lower():
                lines.append(title if title.startswith("**") else f"**{title}**")
        body = self.join(self.children(body_el, skip=title_el))
        head = "\n".join(lines)
        if not body:
            return quote(head)
        return quote(f"{head}\n\n{body}" if len(lines) > 1 else f"{head}\n{body}")

    def definition_list(self, el: etree._Element) -> Parts:
        items = list(_dl_items(el))
        if any(item.tag == "dt" and class_tokens(item) & API_TERM_CLASSES for item in items):
            out: Parts = []
            for item in items:
                if item.tag == "dt":
                    text = self.text(item)
                    self.collect_links(item)
                    md = code_span(text)
                    out.append(("definition_list", self.leaf("definition_list", item, md, text)))
                else:
                    out.extend(self.children(item))
            return out
        md = self.composite("definition_list", el, lambda: self.dl_md(items))
        return [("definition_list", md)]

    def dl_md(self, items: list[etree._Element]) -> str:
        groups: list[list[str]] = []
        previous = ""
        for item in items:
            if item.tag == "dt":
                term = self.join(self.children(item)).replace("\n", " ")
                if not term:
                    continue
                if previous != "dt" or not groups:
                    groups.append([])
                groups[-1].append(term if term.startswith("**") else f"**{term}**")
            else:
                body = self.join(self.children(item))
                if not body:
                    continue
                if not groups:
                    groups.append([])
                groups[-1].append(": " + indent(body, 2))
            previous = item.tag
        return "\n\n".join("\n".join(group) for group in groups)


    def card(self, a: etree._Element) -> str:
        title_el = card_title(a)
        url = join_url(self.base_url, (a.get("href") or "").strip())
        title = self.text(title_el if title_el is not None else a)
        self.record_link(a, url, title)
        before, self.in_card = self.in_card, True
        try:
            rest = self.children(a, skip=title_el) if title_el is not None else []
        finally:
            self.in_card = before
        link = f"[{escape_link_text(title)}]({md_url(url)})" if title else ""
        return self.join([("paragraph", link), *rest])

    def details(self, el: etree._Element) -> Parts:
        return self.children(el)

    def summary(self, el: etree._Element) -> Parts:
        if any(isinstance(c.tag, str) and not self.is_inline(c) for c in el):
            return self.children(el)
        md, text = self.inline_nodes([el])
        return [("paragraph", self.leaf("paragraph", el, f"**{md}**", text))] if md else []

    def figure(self, el: etree._Element) -> Parts:
        if next(el.iter("img"), None) is None:
            return self.children(el)
        return [("image", self.composite("image", el, lambda: self.join(self.children(el))))]

    def rule(self, el: etree._Element) -> Parts:
        return [("rule", self.leaf("rule", el, "---", ""))]

    def paragraph(self, el: etree._Element) -> Parts:
        return self.children(el)

    @staticmethod
    def join(parts: Parts) -> str:
        return "\n\n".join(md for _, md in parts if md)

    # ---- inline level -----------------------------------------------------------------

    def inline_nodes(self, nodes: Iterable[str | etree._Element]) -> tuple[str, str]:
        """(Markdown, plain text) of a run of text and inline elements."""
        md: list[str] = []
        text: list[str] = []
        for node in nodes:
            if isinstance(node, str):
                md.append(node)
                text.append(node)
            elif node.tag in INLINE_TAGS:
                self.inline(node, md, text)
            else:  # a block element rendered inline (heading text, caption, title)
                self.inline_children(node, md, text)
        return finish_inline("".join(md)), collapse("".join(text))

    def inline_children(self, el: etree._Element, md: list[str], text: list[str]) -> None:
        if el.text:
            md.append(el.text)
            text.append(el.text)
        for child in el:
            if isinstance(child.tag, str) and not self.chrome(child):
                self.inline(child, md, text)
            if child.tail:
                md.append(child.tail)
                text.append(child.tail)

    def inline(self, el: etree._Element, md: list[str], text: list[str]) -> None:
        tag = el.tag
        if tag == "span" and glued_in_row(el):
            md.append(" ")
            text.append(" ")
        if el.get("class") is not None and (separators := css_separators(el)):
            before, after = separators
            md.append(before)
            text.append(before)
            self.inline_element(el, md, text)
            md.append(after)
            text.append(after)
            return
        self.inline_element(el, md, text)

    def inline_element(self, el: etree._Element, md: list[str], text: list[str]) -> None:
        """`inline` without the separators CSS draws around the element."""
        tag = el.tag
        if tag == "br":
            md.append(BR)
            text.append(" ")
        elif tag == "img":
            md.append(self.image(el))
        elif tag == "a":
            self.link(el, md, text)
        elif tag in CODE_TAGS:
            code = self.text(el)
            self.collect_links(el)
            md.append(code_span(code))
            text.append(code)
        elif tag in EMPHASIS:
            inner: list[str] = []
            self.inline_children(el, inner, text)
            md.append(wrap("".join(inner), EMPHASIS[tag]))
        elif tag in INLINE_TAGS:
            self.inline_children(el, md, text)
        else:  # block element inside inline content: keep words apart
            md.append(" ")
            self.inline_children(el, md, text)
            md.append(" ")
            text.append(" ")

    def image(self, el: etree._Element) -> str:
        src = (el.get("src") or el.get("data-src") or "").strip()
        if not src or src.startswith("data:"):
            return ""
        alt = escape_link_text(collapse(el.get("alt") or ""))
        return f"![{alt}]({md_url(join_url(self.base_url, src))})"

    def link(self, el: etree._Element, md: list[str], text: list[str]) -> None:
        inner_md: list[str] = []
        inner_text: list[str] = []
        self.inline_children(el, inner_md, inner_text)
        text.extend(inner_text)
        inner = "".join(inner_md)
        href = (el.get("href") or "").strip()
        if (not href or class_tokens(el) & UNWRAPPED_LINK_CLASSES
                or href.partition(":")[0].lower() in SKIP_SCHEMES):
            md.append(inner)  # a script "link" in a sentence: its words, no link
            return
        url = join_url(self.base_url, href)
        label = collapse("".join(inner_text)) or " ".join(
            collapse(img.get("alt") or "") for img in el.iter("img")
        ).strip()
        self.record_link(el, url, label)
        if collapse(inner.replace(BR, " ")):
            md.append(wrap(inner, "[", f"]({md_url(url)})"))

    def record_link(self, a: etree._Element, url: str, text: str) -> None:
        if not self.record:
            return
        container, label = link_container(a, self.main)
        self.out.links.append(Link(
            url=url,
            text=text,
            rel=(a.get("rel") or "").split(),
            region="main_content",
            region_locator=self.main_locator,
            container=container,
            container_label=label,
            heading_path=self.stack.path,
            target=link_target(a.get("href") or "", url, self.base_url),
            position=len(self.out.links),
        ))

    def collect_links(self, el: etree._Element) -> None:
        """Record links inside content rendered as plain text (code, signatures)."""
        if next(el.iter("a"), None) is None:
            return  # no anchor at all (a C-level search): nothing to walk
        for node in iter_content(el, self.chrome):
            href = (node.get("href") or "").strip() if node.tag == "a" else ""
            if href and class_tokens(node) & UNWRAPPED_LINK_CLASSES:
                continue
            text = self.text(node) if href else ""
            if text:
                self.record_link(node, join_url(self.base_url, href), text)


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


def _is_tab_list(el: etree._Element) -> bool:
    """The row of tab names above tabbed content (ARIA, MkDocs Material, VitePress)."""
    if (el.get("role") or "").lower() == "tablist":
        return True
    tokens = class_tokens(el)
    if tokens & TAB_LABEL_CLASSES:
        return True
    children = [c.tag for c in el if isinstance(c.tag, str)]
    return "tabs" in tokens and bool(children) and set(children) <= {"input", "label"}


def _is_layout_list(el: etree._Element) -> bool:
    """Javadoc wraps member sections in lists; those lists are layout, not content."""
    if class_tokens(el) & LAYOUT_LIST_CLASSES:
        return True
    for li in el:
        for child in li if isinstance(li.tag, str) else ():
            if isinstance(child.tag, str) and (
                child.tag == "section" or heading_level(child) is not None
            ):
                return True
    return False


def _task_box(li: etree._Element) -> str:
    """`[x] ` / `[ ] ` for a GFM task-list item (its checkbox input is otherwise chrome)."""
    box = li
    for _ in range(2):  # the input opens the item, possibly inside its first `p`/`label`
        if (box.text or "").strip() or not len(box) or not isinstance(box[0].tag, str):
            return ""
        box = box[0]
        if box.tag == "input":
            break
    if box.tag != "input" or (box.get("type") or "").lower() != "checkbox":
        return ""
    return "[x] " if box.get("checked") is not None else "[ ] "


def _dl_items(dl: etree._Element) -> Iterable[etree._Element]:
    """dt/dd children of a definition list, looking through `div` groups."""
    for child in dl:
        if not isinstance(child.tag, str) or is_chrome(child):
            continue
        if child.tag in {"dt", "dd"}:
            yield child
        elif child.tag == "div":
            yield from _dl_items(child)
