"""Tables as GFM: rows, header rows, spans, layout tables, and Javadoc's div grids.

`TableRendering` holds the renderer methods for tables; `markdown._Renderer` mixes it in
and provides what `md_base.RendererBase` declares. Merged cells keep their text: a
`rowspan` repeats it down the column, a `colspan` keeps it once (repeated across header
columns so every column is named).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lxml import etree
from mypy_extensions import trait

from docscrawl.extract.clean import class_tokens, is_chrome
from docscrawl.extract.code_blocks import is_code_table
from docscrawl.extract.headings import HEADING_TAGS
from docscrawl.extract.md_base import RendererBase
from docscrawl.extract.md_text import Parts

LAYOUT_TABLE_ROLES = frozenset({"presentation", "none"})
GRID_TABLE_CLASSES = frozenset({"summary-table"})  # Javadoc 16+: tables made of divs
# A table whose cells hold headings is page layout (gtk-doc's title row), not data.

def holds_heading(table: etree._Element) -> bool:
    """True when an `h1`-`h6` lies inside `table` (lxml's C-level tag search: an XPath
    predicate per element cost more)."""
    return next(table.iterdescendants(*HEADING_TAGS), None) is not None


def table_rows(table: etree._Element) -> Iterable[etree._Element]:
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


def row_cells(tr: etree._Element) -> list[etree._Element]:
    return [
        c for c in tr if isinstance(c.tag, str) and c.tag in {"td", "th"} and not is_chrome(c)
    ]


def header_row_count(rows: list[etree._Element],
                     first_cells: list[etree._Element] | None = None) -> int:
    """Rows in `thead`, else 1 when the first row is all `th`, else 0. `first_cells`: the
    first row's `row_cells`, when known."""
    in_head = 0
    for row in rows:
        parent = row.getparent()
        if parent is None or parent.tag != "thead":
            break
        in_head += 1
    if in_head:
        return in_head
    cells = first_cells if first_cells is not None else row_cells(rows[0]) if rows else []
    return 1 if cells and all(cell.tag == "th" for cell in cells) else 0


def merge_header(rows: list[list[str]], width: int) -> list[str]:
    """One GFM header row: stacked header texts joined with ` / `, without repeats."""
    merged = []
    for col in range(width):
        texts: list[str] = []
        for row in rows:
            if row[col] and row[col] not in texts:
                texts.append(row[col])
        merged.append(" / ".join(texts))
    return merged


def cell_span(raw: str | None, limit: int) -> int:
    value = (raw or "").strip()
    return min(max(int(value), 1), limit) if value.isdigit() else 1


def table_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


@trait
class TableRendering(RendererBase):
    """Table methods of the Markdown renderer (see the module docstring)."""

    def table(self, el: etree._Element) -> Parts:
        if is_code_table(el):
            return self.code(el)
        rows = list(table_rows(el))
        by_row = [row_cells(row) for row in rows]  # read once, for the checks and the grid
        cells = [cell for row in by_row for cell in row]
        if (
            (el.get("role") or "").lower() in LAYOUT_TABLE_ROLES
            or len(cells) <= 1
            or holds_heading(el)
        ):
            out: Parts = []
            for cell in cells:
                out.extend(self.children(cell))
            return out
        return [("table", self.composite("table", el, lambda: self.table_md(el, rows, by_row)))]

    def table_md(self, el: etree._Element, rows: list[etree._Element],
                 by_row: list[list[etree._Element]]) -> str:
        """GFM of a data table; `by_row`: each row's `row_cells`."""
        head_count = header_row_count(rows, by_row[0] if by_row else None)
        grid = self.grid(by_row, head_count)
        width = max((len(row) for row in grid), default=0)
        if not width:
            return ""
        grid = [row + [""] * (width - len(row)) for row in grid]
        header = merge_header(grid[:head_count], width)
        lines = [table_row(header), table_row(["---"] * width)]
        lines += [table_row(row) for row in grid[head_count:]]
        caption = next((c for c in el if c.tag == "caption"), None)
        table = "\n".join(lines)
        if caption is not None and self.text(caption):
            md, _ = self.inline_nodes([caption])
            return f"{md}\n\n{table}"
        return table

    def grid(self, by_row: list[list[etree._Element]], head_count: int) -> list[list[str]]:
        """Cell Markdown per row (`by_row`: each row's `row_cells`): rowspan filled;
        colspan text once (repeated in headers)."""
        spans: dict[int, list[Any]] = {}  # column -> [rows left, text]
        grid: list[list[str]] = []
        for index, cells in enumerate(by_row):
            row: list[str] = []

            def take_spans(row: list[str] = row) -> None:
                while len(row) in spans:
                    left_text = spans[len(row)]
                    row.append(left_text[1])
                    left_text[0] -= 1
                    if left_text[0] <= 0:
                        del spans[len(row) - 1]

            for cell in cells:
                take_spans()
                text = self.cell(cell)
                rowspan = cell_span(cell.get("rowspan"), 1000)
                for k in range(cell_span(cell.get("colspan"), 100)):
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
        cells = [c for c in el if isinstance(c.tag, str) and not self.chrome(c)]
        header = [c for c in cells if "table-header" in class_tokens(c)]
        width = len(header)
        if not width:
            return self.join(self.children(el))
        body = [self.cell(c) for c in cells if "table-header" not in class_tokens(c)]
        rows = [body[i : i + width] for i in range(0, len(body), width)]
        lines = [table_row([self.cell(c) for c in header]), table_row(["---"] * width)]
        lines += [table_row(row + [""] * (width - len(row))) for row in rows]
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
