"""The output files one crawl writes line by line into its run directory.

pages, chunks and structure are appended a page at a time (every line complete and
flushed); `templates.jsonl` is written by its `TemplateWriter` (which also reads the
previous run's blocks, for carried-over pages). A resumed run appends to the files the
interrupted one left (`append`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docscrawl.crawl.ledger import Ledger
from docscrawl.export.linkgraph import LinkGraph
from docscrawl.export.templates import BlockIds, TemplateBlock, TemplateWriter
from docscrawl.jsonl import JsonlWriter
from docscrawl.runs import published_dir


class OutputFiles:
    """pages.jsonl, chunks.jsonl, structure.jsonl and templates.jsonl of one run."""

    def __init__(self, out_dir: Path, run_dir: Path, *, append: bool,
                 ledger: Ledger | None = None) -> None:
        """`ledger`: where templates.jsonl's block ids are kept (default: in memory)."""
        self.run_dir = run_dir
        self.pages = JsonlWriter(run_dir / "pages.jsonl", append=append)
        self.chunks = JsonlWriter(run_dir / "chunks.jsonl", append=append)
        self.structure = JsonlWriter(run_dir / "structure.jsonl", append=append)
        previous = published_dir(out_dir)
        ids = None if ledger is None else BlockIds(
            ledger.url_set("templates_written"), ledger.url_set("templates_seen_once"))
        self.templates = TemplateWriter(  # the previous run's blocks, for carried pages
            run_dir, append=append, previous=previous if previous != out_dir else None,
            ids=ids)
        # The links of the pages this run writes, for the end of the crawl's inbound pass
        # (`LinkGraph.feed`); not for a resumed run, whose files hold earlier pages.
        self._feeding = not append
        self._link_graph: LinkGraph | None = None

    def path(self, name: str) -> Path:
        """Where the run's file `name` is written."""
        return self.run_dir / name

    def feed_links(self, source: str, links: list[dict[str, Any]],
                   blocks: list[TemplateBlock], offsets: list[int]) -> None:
        """A fresh page's links, as its record was just written (`LinkGraph.feed`)."""
        if not self._feeding:
            return
        if self._link_graph is None:
            self._link_graph = LinkGraph()
        self._link_graph.feed(source, links, blocks, offsets)

    def stop_feeding_links(self) -> None:
        """A page written otherwise (carried over from the previous run): the end of the
        crawl reads every page's links from pages.jsonl, as it always could."""
        self._feeding = False
        if self._link_graph is not None:
            self._link_graph.close()
            self._link_graph = None

    def take_link_graph(self) -> LinkGraph | None:
        """The fed graph, handed over (its new owner closes it); None when none was fed."""
        graph, self._link_graph = self._link_graph, None
        self._feeding = False
        return graph

    def recount(self, *, pages: int, chunks: int, structure: int) -> None:
        """Resume: the lines the interrupted run already wrote count as written."""
        self.pages.count, self.chunks.count, self.structure.count = pages, chunks, structure

    def close(self) -> None:
        """Close pages, chunks and structure (templates.jsonl ends with the crawl)."""
        for writer in (self.pages, self.chunks, self.structure):
            writer.close()
