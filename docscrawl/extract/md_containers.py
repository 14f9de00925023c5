"""Blocks that hold other blocks: lists, blockquotes, callouts, definition lists, cards,
figures, tab rows and `details`.

`ContainerRendering` holds the renderer methods for them; `markdown._Renderer` mixes it in
and provides what `md_base.RendererBase` declares. A container is one block (`composite`),
except layout lists and Sphinx API `dl`s, whose items are blocks.
"""

from __future__ import annotations

from collections.abc import Iterable

from lxml import etree
from mypy_extensions import trait

from docscrawl.extract.callouts import ALERTS, GFM_ALERT_RE, callout_title
from docscrawl.extract.clean import class_tokens, is_chrome
from docscrawl.extract.headings import heading_level
from docscrawl.extract.main_links import card_title
from docscrawl.extract.md_base import RendererBase
from docscrawl.extract.md_text import (
    Parts,
    code_span,
    escape_link_text,
    indent,
    join_item,
    join_url,
    md_url,
    quote,
)

API_TERM_CLASSES = frozenset({"sig", "sig-object"})  # Sphinx `dl.py.function > dt.sig`
LAYOUT_LIST_CLASSES = frozenset({
    "member-list", "blocklist", "blocklistlast", "details-list", "summary-list", "block-list",
})
TAB_LABEL_CLASSES = frozenset({"tabbed-labels"})


@trait
class ContainerRendering(RendererBase):
    """Container-block methods of the Markdown renderer (see the module docstring)."""

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


def is_tab_list(el: etree._Element) -> bool:
    """The row of tab names above tabbed content (ARIA, MkDocs Material, VitePress)."""
    if (el.get("role") or "").lower() == "tablist":
        return True
    tokens = class_tokens(el)
    if tokens & TAB_LABEL_CLASSES:
        return True
    if "tabs" not in tokens:
        return False
    children = [c.tag for c in el if isinstance(c.tag, str)]
    return bool(children) and set(children) <= {"input", "label"}


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
