"""What the Markdown renderer's parts share: its state and the methods each part calls.

`markdown._Renderer` mixes in `InlineRendering`, `ContainerRendering` and
`TableRendering`; each calls methods another part provides. They are declared here once,
as a trait (`mypy_extensions.trait`), so that a compiled build (docs/compiled.md) types
every call. The declarations below raise; the renderer's own methods replace them, and
being the last base of every part they can never shadow a real method, whatever order
the renderer lists its parts in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from lxml import etree
from mypy_extensions import trait

from docscrawl.extract.headings import HeadingStack
from docscrawl.extract.md_text import Parts

if TYPE_CHECKING:  # the renderer's output type; markdown.py imports the parts
    from docscrawl.extract.markdown import MainRender


@trait
class RendererBase:
    """The renderer's state and the methods its parts call on one another."""

    base_url: str
    main: etree._Element
    main_locator: str
    record: bool  # False while rendering the preamble
    stack: HeadingStack
    out: MainRender
    chrome: Any  # a `ChromeMemo`: is_chrome remembered per element
    containers: dict[etree._Element | None, tuple[str, str | None]]  # `link_container`'s memo
    depth: int  # > 0 inside a composite block
    in_cell: bool
    in_card: bool

    def children(self, el: etree._Element, skip: etree._Element | None = None) -> Parts:
        raise NotImplementedError

    def block(self, el: etree._Element) -> Parts:
        raise NotImplementedError

    def composite(self, kind: str, el: etree._Element, render: Callable[[], str]) -> str:
        raise NotImplementedError

    def leaf(self, kind: str, el: etree._Element, md: str, text: str) -> str:
        raise NotImplementedError

    def code(self, el: etree._Element) -> Parts:
        raise NotImplementedError

    def inline_nodes(self, nodes: Iterable[str | etree._Element]) -> tuple[str, str]:
        raise NotImplementedError

    def is_inline(self, el: etree._Element) -> bool:
        raise NotImplementedError

    def text(self, el: etree._Element) -> str:
        raise NotImplementedError

    @staticmethod
    def join(parts: Parts) -> str:
        raise NotImplementedError

    def record_link(self, a: etree._Element, url: str, text: str) -> None:
        raise NotImplementedError

    def collect_links(self, el: etree._Element) -> None:
        raise NotImplementedError
