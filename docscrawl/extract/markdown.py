"""Main content -> Markdown, with the blocks, headings, code blocks and links met on the way.

One walk over the main element. Chrome (see `clean.is_chrome`) is skipped, the input tree
is never modified. Wrappers (`div`, `section`...) are transparent: their children become
top-level blocks. Lists, tables, callouts, blockquotes and definition lists are one block.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urljoin

from lxml import etree

from docscrawl.extract.clean import class_tokens, is_chrome, iter_content, visible_text
from docscrawl.extract.code_blocks import classify_kind, code_info, is_code_table
from docscrawl.extract.headings import HeadingStack, heading_anchor, heading_level, heading_text
from docscrawl.extract.main_links import card_title, link_container, link_target
from docscrawl.extract.model import Block, CodeBlock, ExtractionWarning, Heading, Link

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
CODE_HEADING_CLASSES = frozenset({"code-header"})  # rustdoc `section.method h4.code-header`
API_TERM_CLASSES = frozenset({"sig", "sig-object"})  # Sphinx `dl.py.function > dt.sig`
LAYOUT_LIST_CLASSES = frozenset({
    "member-list", "blocklist", "blocklistlast", "details-list", "summary-list", "block-list",
})
TAB_LABEL_CLASSES = frozenset({"tabbed-labels"})
GRID_TABLE_CLASSES = frozenset({"summary-table"})  # Javadoc 16+: tables made of divs
# Links rendered as their text only: docutils headings link back to a removed local TOC.
UNWRAPPED_LINK_CLASSES = frozenset({"toc-backref"})
LAYOUT_TABLE_ROLES = frozenset({"presentation", "none"})

# Callouts: marker classes, then the type read from a prefixed or bare class token.
CALLOUT_MARKERS = frozenset({
    "admonition", "admonitionblock", "custom-block", "markdown-alert", "theme-admonition",
    "starlight-aside", "deprecationblock", "deprecation-block", "callout", "alert", "stab",
})
CALLOUT_PREFIXES = (
    "theme-admonition-", "alert--", "alert-", "markdown-alert-", "starlight-aside--",
    "callout-", "admonition-",
)
BARE_CALLOUT_CLASSES = frozenset({  # a `div` with one of these alone is a callout (mdbook)
    "note", "warning", "tip", "important", "caution", "danger", "attention", "hint",
    "seealso", "deprecated", "warn",
})
GENERIC_CALLOUT_TYPES = frozenset({"admonition", "custom", "alert", "callout"})
CALLOUT_TAGS = frozenset({"div", "aside", "section", "details", "blockquote"})
ALERTS: dict[str, str] = {  # callout type -> GFM alert
    **dict.fromkeys((
        "note", "info", "seealso", "abstract", "summary", "tldr", "todo", "example", "quote",
        "cite", "question", "faq", "help", "details", "secondary", "primary", "portability",
        "admonition", "custom",
    ), "NOTE"),
    **dict.fromkeys(("tip", "hint", "success", "check", "done"), "TIP"),
    **dict.fromkeys(("important", "attention"), "IMPORTANT"),
    **dict.fromkeys(("warning", "warn", "deprecated", "deprecationblock",
                     "deprecation-block", "unstable"), "WARNING"),
    **dict.fromkeys(("caution", "danger", "error", "failure", "fail", "missing", "bug"),
                    "CAUTION"),
}
CALLOUT_TITLE_CLASSES = frozenset({
    "admonition-title", "custom-block-title", "markdown-alert-title",
    "starlight-aside__title", "alert-heading", "admonition-heading", "title",
})
CALLOUT_TITLE_PARTS = ("admonitionheading",)  # Docusaurus CSS modules: admonitionHeading_x1
GFM_ALERT_RE = re.compile(r"^\s*\[!(\w+)\]")

BR = "\x00"  # line-break sentinel inside inline Markdown
WS_RE = re.compile(r"[^\S\x00]+")
IMAGE_ONLY_RE = re.compile(r"^(\[?!\[[^\]]*\]\([^)]*\)(\]\([^)]*\))?\s*)+$")
BLOCK_START_RE = re.compile(r"^(#{1,6}(\s|$)|>|[-+*](\s|$)|~{3,}|={3,}\s*$)")
ORDERED_START_RE = re.compile(r"^(\d+)([.)])(\s|$)")
CONTEXT_CHARS = 300
MAX_NESTING = 80  # containers deeper than this are kept as plain text
NESTING_WARNING = "markup_too_deep"
FALLBACK_WARNING = "markdown_fallback"


def _join(base_url: str, href: str) -> str:
    """`urljoin`, but a malformed href (`http://[::1`) is kept as written, not raised."""
    try:
        return urljoin(base_url, href)
    except ValueError:
        return href


@dataclass(slots=True)
class MainRender:
    """Everything rendered from the main content element."""

    markdown: str
    blocks: list[Block] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    code_blocks: list[CodeBlock] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    warnings: list[ExtractionWarning] = field(default_factory=list)


def render_main(main_el: etree._Element, *, base_url: str) -> MainRender:
    """Render the main content element as Markdown plus its structure."""
    try:
        return _Renderer(main_el, base_url).render()
    except RecursionError:  # pathological nesting the depth guard did not catch
        return _plain_render(main_el)


def _plain_render(main_el: etree._Element) -> MainRender:
    text = visible_text(main_el)
    locator = main_el.getroottree().getpath(main_el)
    blocks = [Block(0, "paragraph", text, [], None, locator, len(text))] if text else []
    warning = ExtractionWarning(FALLBACK_WARNING, "markup nested too deeply; plain text kept")
    return MainRender(text + "\n" if text else "", blocks, warnings=[warning])


Parts = list[tuple[str, str]]  # (block kind, markdown)


class _Renderer:
    """One rendering pass; state lives on the instance and dies with it."""

    def __init__(self, main: etree._Element, base_url: str) -> None:
        self.main = main
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

    def render(self) -> MainRender:
        parts = self.children(self.main)
        self.close_section()
        body = "\n\n".join(md for _, md in parts if md).strip("\n")
        self.out.markdown = body + "\n" if body else ""
        return self.out

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
        text = visible_text(el)
        return [("paragraph", self.leaf("paragraph", el, text, text))] if text else []

    def children_blocks(self, el: etree._Element, skip: etree._Element | None) -> Parts:
        out: Parts = []
        run: list[str | etree._Element] = [el.text] if el.text else []
        for child in el:
            if child is not skip and isinstance(child.tag, str) and not is_chrome(child):
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
            isinstance(c.tag, str) and c.tag not in INLINE_TAGS and not is_chrome(c) for c in el
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
            md = _escape_block_starts(md)
        out.append((kind, self.leaf(kind, container, md, text)))
        if kind == "paragraph":
            self.prose(text)

    def block(self, el: etree._Element) -> Parts:
        level = heading_level(el)
        if level is not None:
            return self.heading(el, level)
        tag = el.tag
        callout = callout_type(el)
        if callout is not None:
            return [("callout", self.composite("callout", el, lambda: self.callout(el, callout)))]
        if _is_tab_list(el):
            return self.tab_labels(el)
        if class_tokens(el) & GRID_TABLE_CLASSES:
            return [("table", self.composite("table", el, lambda: self.grid_table(el)))]
        handler = BLOCK_HANDLERS.get(tag)
        if handler is not None:
            return handler(self, el)
        tokens = class_tokens(el)
        if tokens & SIGNATURE_CLASSES:
            text = visible_text(el)
            self.collect_links(el)
            return [("other", self.leaf("other", el, _code_span(text), text))]
        if tag == "a" and el.get("href"):
            return [("other", self.composite("other", el, lambda: self.card(el)))]
        return self.children(el)

    def leaf(self, kind: str, el: etree._Element, md: str, text: str) -> str:
        """Register a top-level block that contains no other block."""
        if self.depth == 0 and md:
            self.out.blocks.append(self.make_block(len(self.out.blocks), kind, el, md, text))
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
            block = self.make_block(self.ordinal, kind, el, md, visible_text(el))
            block.heading_path, block.anchor = path, anchor
            self.out.blocks.append(block)
        return md

    def make_block(self, ordinal: int, kind: str, el: etree._Element, md: str, text: str) -> Block:
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
        if self.in_card or self.in_cell:
            md, plain = self.inline_nodes([el])
            return [("paragraph", self.leaf("paragraph", el, f"**{md}**", plain))]
        self.close_section()
        heading, warning = self.stack.push(level, text, heading_anchor(el))
        self.out.headings.append(heading)
        if warning:
            self.out.warnings.append(warning)
        if class_tokens(el) & CODE_HEADING_CLASSES:
            self.collect_links(el)
            inner = _code_span(text)
        else:
            inner, _ = self.inline_nodes([el])
            inner = inner.replace("\n", " ")
        return [("heading", self.leaf("heading", el, f"{'#' * level} {inner}", text))]

    def prose(self, text: str) -> None:
        """Remember explanatory prose for the next code block; fill waiting ones."""
        if not text:
            return
        self.last_prose = _tail(text, CONTEXT_CHARS)
        for code_block in self.waiting_for_context:
            code_block.context = _head(text, CONTEXT_CHARS)
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
        if not code_block.context:
            self.waiting_for_context.append(code_block)
        self.out.code_blocks.append(code_block)
        self.last_code_kind, self.blocks_since_code = code_block.kind, 0
        self.collect_links(el)
        if self.in_cell:
            md = "<br>".join(_code_span(line) for line in info.code.split("\n"))
        else:
            md = _fence(info.code, info.language)
        return [("code", self.leaf("code", el, md, info.code))]

    # ---- composite blocks -------------------------------------------------------------

    def tab_labels(self, el: etree._Element) -> Parts:
        """Tab names (npm | yarn) on one line; not prose, so not code context."""
        labels = [
            visible_text(tab) for tab in el if isinstance(tab.tag, str) and not is_chrome(tab)
        ]
        md = " | ".join(label for label in labels if label)
        return [("paragraph", self.leaf("paragraph", el, md, md))] if md else []

    def list_block(self, el: etree._Element) -> Parts:
        if _is_layout_list(el):
            out: Parts = []
            for li in el:
                if isinstance(li.tag, str) and not is_chrome(li):
                    out.extend(self.children(li) if li.tag == "li" else self.block(li))
            return out
        return [("list", self.composite("list", el, lambda: self.list_md(el)))]

    def list_md(self, el: etree._Element) -> str:
        ordered = el.tag == "ol"
        number = int(el.get("start")) if (el.get("start") or "").strip().isdigit() else 1
        items: list[str] = []
        for li in el:
            if not isinstance(li.tag, str) or is_chrome(li):
                continue
            if li.tag != "li":  # stray nested list: belongs to the previous item
                nested = _join_item(self.block(li))
                if nested and items:
                    items[-1] += "\n" + _indent(nested, 2, first=True)
                elif nested:
                    items.append(nested)
                continue
            marker = f"{number}. " if ordered else "- "
            number += 1
            body = _task_box(li) + _join_item(self.children(li))
            items.append(marker + _indent(body, len(marker)) if body else marker.rstrip())
        loose = any("\n\n" in item for item in items)
        return ("\n\n" if loose else "\n").join(items)

    def quote_block(self, el: etree._Element) -> Parts:
        kind = "callout" if GFM_ALERT_RE.match(visible_text(el)) else "blockquote"
        return [(kind, self.composite(kind, el, lambda: _quote(self.join(self.children(el)))))]

    def callout(self, el: etree._Element, kind: str) -> str:
        title_el = _callout_title(el)
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
            return _quote(head)
        return _quote(f"{head}\n\n{body}" if len(lines) > 1 else f"{head}\n{body}")

    def definition_list(self, el: etree._Element) -> Parts:
        items = list(_dl_items(el))
        if any(item.tag == "dt" and class_tokens(item) & API_TERM_CLASSES for item in items):
            out: Parts = []
            for item in items:
                if item.tag == "dt":
                    text = visible_text(item)
                    self.collect_links(item)
                    md = _code_span(text)
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
                groups[-1].append(": " + _indent(body, 2))
            previous = item.tag
        return "\n\n".join("\n".join(group) for group in groups)

    def table(self, el: etree._Element) -> Parts:
        if is_code_table(el):
            return self.code(el)
        rows = list(_table_rows(el))
        cells = [cell for row in rows for cell in _row_cells(row)]
        if (el.get("role") or "").lower() in LAYOUT_TABLE_ROLES or len(cells) <= 1:
            out: Parts = []
            for cell in cells:
                out.extend(self.children(cell))
            return out
        return [("table", self.composite("table", el, lambda: self.table_md(el, rows)))]

    def table_md(self, el: etree._Element, rows: list[etree._Element]) -> str:
        head_count = _header_row_count(rows)
        grid = self.grid(rows, head_count)
        width = max((len(row) for row in grid), default=0)
        if not width:
            return ""
        grid = [row + [""] * (width - len(row)) for row in grid]
        header = _merge_header(grid[:head_count], width)
        lines = [_table_row(header), _table_row(["---"] * width)]
        lines += [_table_row(row) for row in grid[head_count:]]
        caption = next((c for c in el if c.tag == "caption"), None)
        table = "\n".join(lines)
        if caption is not None and visible_text(caption):
            md, _ = self.inline_nodes([caption])
            return f"{md}\n\n{table}"
        return table

    def grid(self, rows: list[etree._Element], head_count: int) -> list[list[str]]:
        """Cell Markdown per row: rowspan filled; colspan text once (repeated in headers)."""
        spans: dict[int, list] = {}  # column -> [rows left, text]
        grid: list[list[str]] = []
        for index, tr in enumerate(rows):
            row: list[str] = []

            def take_spans(row: list[str] = row) -> None:
                while len(row) in spans:
                    left_text = spans[len(row)]
                    row.append(left_text[1])
                    left_text[0] -= 1
                    if left_text[0] <= 0:
                        del spans[len(row) - 1]

            for cell in _row_cells(tr):
                take_spans()
                text = self.cell(cell)
                rowspan = _span(cell.get("rowspan"), 1000)
                for k in range(_span(cell.get("colspan"), 100)):
                    value = text if k == 0 or index < head_count else ""
                    if rowspan > 1:
                        spans[len(row)] = [rowspan - 1, value]
                    row.append(value)
            while spans and len(row) <= max(spans):
                take_spans()
                if spans and len(row) <= max(spans) and len(row) not in spans:
                    row.append("")
            grid.append(row)
        return grid

    def grid_table(self, el: etree._Element) -> str:
        """Javadoc's CSS-grid `div.summary-table`: header divs, then cells row by row."""
        cells = [c for c in el if isinstance(c.tag, str) and not is_chrome(c)]
        header = [c for c in cells if "table-header" in class_tokens(c)]
        width = len(header)
        if not width:
            return self.join(self.children(el))
        body = [self.cell(c) for c in cells if "table-header" not in class_tokens(c)]
        rows = [body[i : i + width] for i in range(0, len(body), width)]
        lines = [_table_row([self.cell(c) for c in header]), _table_row(["---"] * width)]
        lines += [_table_row(row + [""] * (width - len(row))) for row in rows]
        return "\n".join(lines)

    def cell(self, cell: etree._Element) -> str:
        before, self.in_cell = self.in_cell, True
        self.depth += 1
        try:
            md = "<br>".join(md for _, md in self.children(cell) if md)
        finally:
            self.in_cell = before
            self.depth -= 1
        return md.replace("\n", "<br>").replace("|", "\\|")

    def card(self, a: etree._Element) -> str:
        title_el = card_title(a)
        url = _join(self.base_url, (a.get("href") or "").strip())
        title = visible_text(title_el if title_el is not None else a)
        self.record_link(a, url, title)
        before, self.in_card = self.in_card, True
        try:
            rest = self.children(a, skip=title_el) if title_el is not None else []
        finally:
            self.in_card = before
        link = f"[{_escape_link_text(title)}]({_md_url(url)})" if title else ""
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
        return _finish_inline("".join(md)), _collapse("".join(text))

    def inline_children(self, el: etree._Element, md: list[str], text: list[str]) -> None:
        if el.text:
            md.append(el.text)
            text.append(el.text)
        for child in el:
            if isinstance(child.tag, str) and not is_chrome(child):
                self.inline(child, md, text)
            if child.tail:
                md.append(child.tail)
                text.append(child.tail)

    def inline(self, el: etree._Element, md: list[str], text: list[str]) -> None:
        tag = el.tag
        if tag == "br":
            md.append(BR)
            text.append(" ")
        elif tag == "img":
            md.append(self.image(el))
        elif tag == "a":
            self.link(el, md, text)
        elif tag in CODE_TAGS:
            code = visible_text(el)
            self.collect_links(el)
            md.append(_code_span(code))
            text.append(code)
        elif tag in EMPHASIS:
            inner: list[str] = []
            self.inline_children(el, inner, text)
            md.append(_wrap("".join(inner), EMPHASIS[tag]))
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
        alt = _escape_link_text(_collapse(el.get("alt") or ""))
        return f"![{alt}]({_md_url(_join(self.base_url, src))})"

    def link(self, el: etree._Element, md: list[str], text: list[str]) -> None:
        inner_md: list[str] = []
        inner_text: list[str] = []
        self.inline_children(el, inner_md, inner_text)
        text.extend(inner_text)
        inner = "".join(inner_md)
        href = (el.get("href") or "").strip()
        if not href or class_tokens(el) & UNWRAPPED_LINK_CLASSES:
            md.append(inner)
            return
        url = _join(self.base_url, href)
        label = _collapse("".join(inner_text)) or " ".join(
            _collapse(img.get("alt") or "") for img in el.iter("img")
        ).strip()
        self.record_link(el, url, label)
        if _collapse(inner.replace(BR, " ")):
            md.append(_wrap(inner, "[", f"]({_md_url(url)})"))

    def record_link(self, a: etree._Element, url: str, text: str) -> None:
        container, label = link_container(a, self.main)
        self.out.links.append(Link(
            url=url,
            text=text,
            rel=(a.get("rel") or "").split(),
            region="main_content",
            container=container,
            container_label=label,
            heading_path=self.stack.path,
            target=link_target(a.get("href") or "", url, self.base_url),
            position=len(self.out.links),
        ))

    def collect_links(self, el: etree._Element) -> None:
        """Record links inside content rendered as plain text (code, signatures)."""
        for node in iter_content(el):
            href = (node.get("href") or "").strip() if node.tag == "a" else ""
            text = visible_text(node) if href else ""
            if text:
                self.record_link(node, _join(self.base_url, href), text)


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


# ---- callouts ------------------------------------------------------------------------


def callout_type(el: etree._Element) -> str | None:
    """The callout type (`note`, `warning`, ...) when `el` is an admonition, else None."""
    if el.tag not in CALLOUT_TAGS or el.tag == "blockquote":
        return None
    tokens = (el.get("class") or "").lower().split()
    marked = bool(CALLOUT_MARKERS.intersection(tokens)) or any(
        t.startswith(("theme-admonition-", "alert--")) for t in tokens
    )
    bare = [t for t in tokens if t in BARE_CALLOUT_CLASSES]
    is_callout = marked or (el.tag == "div" and bare) or (
        el.tag == "details" and any(t in ALERTS for t in tokens)
    )
    if not is_callout:
        return None
    for token in tokens:
        for prefix in CALLOUT_PREFIXES:
            if token.startswith(prefix) and token[len(prefix):] in ALERTS:
                return token[len(prefix):]
    for token in tokens:
        if token in ALERTS and token not in GENERIC_CALLOUT_TYPES:
            return token
    title = _callout_title(el)
    word = visible_text(title).lower().rstrip(":") if title is not None else ""
    if word in ALERTS:
        return word
    return next((t for t in tokens if t in ALERTS), "note")


def _callout_title(el: etree._Element) -> etree._Element | None:
    for child in el:
        if not isinstance(child.tag, str):
            continue
        if child.tag == "summary":
            return child
        cls = (child.get("class") or "").lower()
        if set(cls.split()) & CALLOUT_TITLE_CLASSES or any(p in cls for p in CALLOUT_TITLE_PARTS):
            return child
    return None


# ---- small structural helpers --------------------------------------------------------


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


def _table_rows(table: etree._Element) -> Iterable[etree._Element]:
    for child in table:
        if not isinstance(child.tag, str) or is_chrome(child):
            continue
        if child.tag == "tr":
            yield child
        elif child.tag in {"thead", "tbody", "tfoot"}:
            yield from (
                tr for tr in child
                if isinstance(tr.tag, str) and tr.tag == "tr" and not is_chrome(tr)
            )


def _row_cells(tr: etree._Element) -> list[etree._Element]:
    return [
        c for c in tr if isinstance(c.tag, str) and c.tag in {"td", "th"} and not is_chrome(c)
    ]


def _header_row_count(rows: list[etree._Element]) -> int:
    """Rows in `thead`, else 1 when the first row is all `th`, else 0."""
    in_head = 0
    for row in rows:
        parent = row.getparent()
        if parent is None or parent.tag != "thead":
            break
        in_head += 1
    if in_head:
        return in_head
    cells = _row_cells(rows[0]) if rows else []
    return 1 if cells and all(cell.tag == "th" for cell in cells) else 0


def _merge_header(rows: list[list[str]], width: int) -> list[str]:
    """One GFM header row: stacked header texts joined with ` / `, without repeats."""
    merged = []
    for col in range(width):
        texts: list[str] = []
        for row in rows:
            if row[col] and row[col] not in texts:
                texts.append(row[col])
        merged.append(" / ".join(texts))
    return merged


def _span(raw: str | None, limit: int) -> int:
    value = (raw or "").strip()
    return min(max(int(value), 1), limit) if value.isdigit() else 1


def _table_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


# ---- Markdown text helpers -----------------------------------------------------------


def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _finish_inline(md: str) -> str:
    """Collapse whitespace, turn line-break sentinels into newlines, trim lines."""
    md = WS_RE.sub(" ", md)
    lines = [line.strip() for line in md.split(BR)]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _wrap(inner: str, start: str, end: str | None = None) -> str:
    """Wrap the non-blank core of `inner`, keeping its outer whitespace outside."""
    match = re.match(r"^([\s\x00]*)(.*?)([\s\x00]*)$", inner, re.DOTALL)
    lead, core, trail = match.groups() if match else ("", inner, "")
    if not core:
        return inner
    return f"{lead}{start}{core}{start if end is None else end}{trail}"


def _code_span(text: str) -> str:
    """Inline code with a backtick fence longer than any run inside."""
    if not text:
        return ""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _fence(code: str, language: str | None) -> str:
    """Fenced code block; the fence is longer than any backtick run in the code."""
    longest = max((len(run) for run in re.findall(r"`{3,}", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language or ''}\n{code}\n{fence}"


def _md_url(url: str) -> str:
    url = url.replace(" ", "%20")
    return f"<{url}>" if url.count("(") != url.count(")") else url


def _escape_link_text(text: str) -> str:
    return text.replace("[", "\\[").replace("]", "\\]")


def _escape_block_starts(md: str) -> str:
    """Keep prose lines from reading as Markdown structure (`# `, `- `, `1. `...)."""
    lines = []
    for line in md.split("\n"):
        if BLOCK_START_RE.match(line):
            line = "\\" + line
        else:
            line = ORDERED_START_RE.sub(r"\1\\\2\3", line, count=1)
        lines.append(line)
    return "\n".join(lines)


def _indent(text: str, width: int, *, first: bool = False) -> str:
    pad = " " * width
    lines = text.split("\n")
    return "\n".join(
        (pad + line if line and (i or first) else line) for i, line in enumerate(lines)
    )


def _join_item(parts: Parts) -> str:
    """Blocks of one list item: a nested list hugs the text before it."""
    out = ""
    previous = ""
    for kind, md in parts:
        if not md:
            continue
        if not out:
            out = md
        elif kind == "list" and previous == "paragraph":
            out += "\n" + md
        else:
            out += "\n\n" + md
        previous = kind
    return out


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def _head(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + "…"


def _tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[-limit:].split(" ", 1)[-1]
    return "…" + cut
