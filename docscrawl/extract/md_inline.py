"""Inline rendering: text runs, emphasis, code spans, images and links (recorded as `Link`s).

`InlineRendering` holds the renderer methods for inline content; `markdown._Renderer` mixes
it in and provides what `md_base.RendererBase` declares. Links inside content rendered as
plain text (code, signatures, headings) are recorded too (`collect_links`), so `links` never
misses one the Markdown does not show.
"""

from __future__ import annotations

from collections.abc import Iterable

from lxml import etree
from mypy_extensions import trait

from docscrawl.extract.clean import class_tokens, iter_content
from docscrawl.extract.css_separators import css_separators, glued_in_row
from docscrawl.extract.links import SKIP_SCHEMES
from docscrawl.extract.main_links import link_container, link_target
from docscrawl.extract.md_base import RendererBase
from docscrawl.extract.md_text import (
    BR,
    code_span,
    collapse,
    escape_link_text,
    finish_inline,
    join_url,
    md_url,
    wrap,
)
from docscrawl.extract.model import Link

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
# Links rendered as their text only: docutils headings link back to a removed local TOC.
UNWRAPPED_LINK_CLASSES = frozenset({"toc-backref"})


@trait
class InlineRendering(RendererBase):
    """Inline methods of the Markdown renderer (see the module docstring)."""

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
        container, label = link_container(a, self.main, self.containers)
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
