"""The site template's links written once (`templates.jsonl`, CONTRACT v1.2), and joined
back for every reader.

Every page of a documentation site repeats the links of its header, sidebar and footer.
The links of a region the template learner found repeated
(`extract.templates.TemplateTracker`), or met again, the same, on another page of the
crawl (`TemplateWriter.keep`), are written once, as one line of templates.jsonl
(`{"template_id", "region", "links", "pages"}`); the page and structure records list
`template_ids` instead, with `template_offsets` (the `position` of the block's first
link on that page: a block's links are stored with positions counted from 0, since a
sidebar after the main content starts at a different position on every page). The
page's own links (main content, and any block not found repeated) stay inline.

`join_links` gives a page's full link list back, in page order, exactly as it would
have been written inline; `TemplateLinks` reads a templates.jsonl (plain or .gz) for the
readers: the inspection commands, the inbound-link graph (and so the search index and the
loaders' chunk metadata), `get_page`. A missing templates.jsonl (an older output) means
no template ids to join; a truncated one: one warning line naming the file, and the
blocks it still holds.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableSet
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docscrawl.export.pagecounts import PageCounts
from docscrawl.jsonl import (
    GZIP_SUFFIX,
    IO_BUFFER,
    JsonlWriter,
    UnreadableJsonl,
    dumps_line,
    dumps_value,
    parse_object,
    read_jsonl,
    read_raw_lines,
    replacing,
    resolve_jsonl,
)

logger = logging.getLogger(__name__)

__all__ = ["TEMPLATES_FILE", "BlockIds", "PreviousBlocks", "TemplateBlock", "TemplateLinks",
           "TemplateWriter", "join_links", "split_links", "template_blocks", "template_ids_in"]

TEMPLATES_FILE = "templates.jsonl"
MIN_LINKS = 2  # a block of one link costs more as a reference than inline
SEEN_ONCE = 100_000  # block ids remembered until met on a second page
# The key opens a top-level field only: inside a JSON string its quotes are escaped.
_IDS = re.compile(r'"template_ids":\[([^\]]*)\]')
_IDS_BYTES = re.compile(_IDS.pattern.encode())  # the same, over an undecoded line


@dataclass(frozen=True, slots=True)
class TemplateBlock:
    """One template block as templates.jsonl stores it (positions from 0)."""

    template_id: str
    region: str
    links: list[dict[str, Any]]
    # `links` as JSON (`dumps_value`), when `split_links` encoded them for the block's id:
    # its line reuses the text
    links_json: str | None = None

    def line(self, pages: int) -> str:
        record = {"template_id": self.template_id, "region": self.region,
                  "links": self.links, "pages": pages}
        if self.links_json is None:
            return dumps_line(record)
        return dumps_line(record, {"links": self.links_json}, plain=True)


def split_links(links: list[dict[str, Any]], candidates: Iterable[str],
                keep: Callable[[str, TemplateBlock], bool] | None = None,
                ) -> tuple[list[dict[str, Any]], list[TemplateBlock], list[int]]:
    """A page's links as (its own links, the template blocks, each block's offset).

    `links`: as `export.records` makes them (plain values: `jsonenc.dumps_value`).
    `candidates`: locators of the page's regions that may be template (not its main
    content). Their links are grouped by region, with positions made relative to the
    block's first link; a block's id is the digest of what it holds, so two pages share
    an id exactly when joining it back gives each its own links. `keep(locator, block)`
    says which blocks leave the page (default: every one); the others stay inline."""
    wanted = set(candidates)
    if not wanted:
        return links, [], []
    groups: dict[str, list[dict[str, Any]]] = {}
    for link in links:
        locator = link.get("region_locator")
        if locator in wanted:
            groups.setdefault(locator, []).append(link)
    blocks, offsets, moved = [], [], set()
    for locator, group in groups.items():
        if len(group) < MIN_LINKS:
            continue
        offset = group[0]["position"]
        relative = [{**link, "position": link["position"] - offset} for link in group]
        region = str(group[0].get("region") or "unknown")
        encoded = dumps_value(relative, plain=True)  # the id's digest and the block's line
        held = f"[{dumps_value(region)},{encoded}]"  # = dumps_value([region, relative])
        digest = hashlib.sha256(held.encode("utf-8")).hexdigest()
        block = TemplateBlock(f"tpl:{digest[:32]}", region, relative, encoded)
        if keep is None or keep(locator, block):
            blocks.append(block)
            offsets.append(offset)
            moved.add(locator)
    if not moved:
        return links, [], []
    own = [link for link in links if link.get("region_locator") not in moved]
    return own, blocks, offsets


def join_links(record: Mapping[str, Any], blocks: Mapping[str, list[dict[str, Any]]]
               ) -> list[dict[str, Any]]:
    """The record's full link list: its own links and those of its template blocks, in
    page order. A block `blocks` does not hold (a truncated templates.jsonl) is left out."""
    own = list(record.get("links") or [])
    ids = record.get("template_ids") or []
    if not ids:
        return own
    offsets = record.get("template_offsets") or [0] * len(ids)
    joined = own
    for template_id, offset in zip(ids, offsets, strict=False):
        for link in blocks.get(template_id) or ():
            joined.append({**link, "position": link.get("position", 0) + offset})
    joined.sort(key=lambda link: link.get("position", 0))
    return joined


def template_ids_in(line: str | bytes) -> list[str]:
    """The template ids a serialized page or structure record references (no parse of
    the rest of the line; a line read as bytes is not decoded: the ids are ASCII)."""
    found = _IDS_BYTES.search(line) if isinstance(line, bytes) else _IDS.search(line)
    ids = found.group(1) if found is not None else ""
    if isinstance(ids, bytes):
        ids = ids.decode("utf-8", "replace")
    return [part.strip().strip('"') for part in ids.split(",")] if ids else []


def template_blocks(path: Path) -> Iterator[tuple[str, list[Any]]]:
    """(template id, links) of each block of a templates.jsonl (plain or .gz), in file
    order, streamed. A truncated file: one warning naming it, and the blocks before the
    damage (pages keep their own links)."""
    def torn(lineno: int) -> None:
        logger.warning("docscrawl: %s line %d: cut short; pages keep their own links, and "
                       "the template links before it", path, lineno)
    try:
        for record in read_jsonl(path, strict=True, on_torn=torn):
            if isinstance(record.get("template_id"), str):
                yield record["template_id"], list(record.get("links") or [])
    except UnreadableJsonl as exc:  # the blocks before the damage were given
        logger.warning("docscrawl: %s; pages keep their own links, and the "
                       "template links it still holds", exc)


class TemplateLinks(Mapping[str, list[dict[str, Any]]]):
    """The template blocks of one run directory (read on first use), for readers."""

    def __init__(self, run_dir: Path) -> None:
        self.path = resolve_jsonl(run_dir / TEMPLATES_FILE)
        self._blocks: dict[str, list[dict[str, Any]]] | None = None

    def _load(self) -> dict[str, list[dict[str, Any]]]:
        if self._blocks is None:
            self._blocks = dict(template_blocks(self.path))
        return self._blocks

    def __getitem__(self, key: str) -> list[dict[str, Any]]:
        return self._load()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def join(self, record: dict[str, Any]) -> dict[str, Any]:
        """`record` as if written without templates.jsonl: its full link list, and no
        `template_ids`/`template_offsets` (unchanged when it references no block)."""
        if "template_ids" not in record:
            return record
        joined = {**record, "links": join_links(record, self)}
        del joined["template_ids"]
        joined.pop("template_offsets", None)
        return joined


class PreviousBlocks:
    """Template id -> its line in earlier runs' templates.jsonl, for carried-over pages.
    A plain file is indexed by byte range and a line read when its block is carried (on a
    10,000-page generated site the file is 168 MB: held as strings, a re-crawl started at
    440 MB); a compressed one cannot be read at an offset and is held (it is 8-10 times
    smaller). The last run that has an id gives its line."""

    def __init__(self, run_dirs: Iterable[Path]) -> None:
        self._where: dict[str, tuple[Path, int, int] | str] = {}
        for run_dir in run_dirs:  # a missing file reads as empty
            try:
                self._index(resolve_jsonl(run_dir / TEMPLATES_FILE))
            except UnreadableJsonl as exc:
                logger.warning("docscrawl: %s; pages using its missing blocks are "
                               "extracted again", exc)

    def _index(self, path: Path) -> None:
        if not path.is_file():
            return
        if path.name.endswith(GZIP_SUFFIX):
            for raw in read_raw_lines(path):
                template_id = _block_id(raw)
                if template_id is not None:
                    self._where[template_id] = raw.decode("utf-8")
            return
        offset = 0
        with path.open("rb", buffering=IO_BUFFER) as handle:
            for raw in handle:
                template_id = _block_id(raw)
                if template_id is not None:
                    self._where[template_id] = (path, offset, len(raw))
                offset += len(raw)

    def __contains__(self, template_id: str) -> bool:
        return template_id in self._where

    def get(self, template_id: str) -> str | None:
        """The block's line (None when no earlier run has it)."""
        where = self._where.get(template_id)
        if where is None or isinstance(where, str):
            return where
        path, offset, length = where
        with path.open("rb") as handle:
            handle.seek(offset)
            return handle.read(length).decode("utf-8")


def _block_id(raw: bytes) -> str | None:
    record = parse_object(raw)
    template_id = record.get("template_id") if record is not None else None
    return template_id if isinstance(template_id, str) else None


@dataclass(frozen=True, slots=True)
class BlockIds:
    """The two id sets a `TemplateWriter` checks on every page. Both grow with the site
    (on a generated site every page has its own table-of-contents block: 0.8 KB of
    memory per page as Python sets), so a crawl keeps them in its ledger
    (`crawl.ledger.SqlSet`); plain sets serve a small job and the tests."""

    written: MutableSet[str]  # blocks in this run's templates.jsonl
    seen_once: MutableSet[str]  # blocks met on one page so far (at most SEEN_ONCE)


class TemplateWriter:
    """The crawl's templates.jsonl: each block written once, before the first page line
    that references it (a kill never leaves a page referencing a block not written).

    A carried-over page (incremental re-crawl) references blocks of the previous run:
    they are copied from the previous run's templates.jsonl (`previous`), read once on
    first need; a page whose blocks are not there is not carried over (`available`).
    At the end (`finish`) the file is rewritten with each block's page count, the blocks
    no page references left out."""

    def __init__(self, run_dir: Path, *, append: bool = False,
                 previous: Path | None = None, ids: BlockIds | None = None) -> None:
        """`previous`: the run carried-over pages come from (more: `also_previous`).
        `ids`: where the block ids live (default: in memory)."""
        self.path = run_dir / TEMPLATES_FILE
        ids = ids if ids is not None else BlockIds(set(), set())
        self._written = ids.written
        if append:  # a resumed run: the blocks its file already holds
            for record in read_jsonl(self.path):
                if isinstance(record.get("template_id"), str):
                    self._written.add(record["template_id"])
        self._writer = JsonlWriter(self.path, append=append)
        self._seen_once = ids.seen_once  # block ids met on one page so far
        self._seen_count = len(self._seen_once)
        self._previous_dirs = [previous] if previous is not None else []
        self._previous: PreviousBlocks | None = None

    def also_previous(self, run_dirs: Iterable[Path]) -> None:
        """More runs carried-over pages may come from: the runs the incremental state
        points at (an inventory crawl published since is not one of them)."""
        for run_dir in run_dirs:
            if run_dir not in self._previous_dirs and run_dir != self.path.parent:
                self._previous_dirs.append(run_dir)
        self._previous = None

    def keep(self, learned: Iterable[str]) -> Callable[[str, TemplateBlock], bool]:
        """Which blocks of one page leave it (`split_links`' `keep`): those of the regions
        the template learner found repeated (`learned`: the same link set on several
        pages), and any block met on an earlier page (the same links, texts and order).
        The second catches what the learner's signatures miss: they leave out the page's
        own URL, so a sidebar listing every page has a new signature on each. A block
        met once so far, in a region the learner has not confirmed, stays inline;
        memory: at most SEEN_ONCE ids."""
        learned = set(learned)

        def decide(locator: str, block: TemplateBlock) -> bool:
            template_id = block.template_id
            if locator in learned or template_id in self._written:
                return True
            if template_id in self._seen_once:
                return True
            if self._seen_count >= SEEN_ONCE:
                self._seen_once.clear()
                self._seen_count = 0
            self._seen_once.add(template_id)
            self._seen_count += 1
            return False
        return decide

    def write(self, blocks: Iterable[TemplateBlock]) -> None:
        """Write the blocks this run has not written yet."""
        for block in blocks:
            if block.template_id not in self._written:
                self._writer.write_raw(block.line(0))
                self._written.add(block.template_id)

    def _previous_lines(self) -> PreviousBlocks:
        if self._previous is None:
            self._previous = PreviousBlocks(self._previous_dirs)
        return self._previous

    def available(self, record_line: str | None) -> bool:
        """True when every block a stored record references can be written in this run."""
        ids = template_ids_in(record_line or "")
        if not ids:
            return True
        previous = None
        for template_id in ids:
            if template_id in self._written:
                continue
            previous = previous if previous is not None else self._previous_lines()
            if template_id not in previous:
                return False
        return True

    def carry(self, record_line: str) -> None:
        """Write the blocks of a carried-over record that this run has not written yet."""
        for template_id in template_ids_in(record_line):
            if template_id not in self._written:
                line = self._previous_lines().get(template_id)
                if line is not None:
                    self._writer.write_raw(line)
                    self._written.add(template_id)

    def close(self) -> None:
        self._writer.close()

    def finish(self, pages_path: Path) -> int:
        """Close, then rewrite with each block's page count (from the page lines);
        returns the number of blocks kept. No block at all: no file."""
        self.close()
        with closing(PageCounts(
                template_id for raw in read_raw_lines(pages_path)
                for template_id in template_ids_in(raw))) as counts:
            if not counts.any():
                self.path.unlink(missing_ok=True)
                return 0
            kept = 0
            with replacing(self.path, binary=True) as handle:
                for raw in read_raw_lines(self.path):
                    parts = _block_parts(raw)
                    if parts is not None:  # only the count is written again
                        pages = counts.take(parts[0])
                        if pages:
                            handle.write(b'%s,"pages":%d}\n' % (raw[:parts[1]], pages))
                            kept += 1
                        continue
                    record = parse_object(raw)
                    pages = counts.take(record.get("template_id") if record else None)
                    if record is None or not pages:
                        continue
                    record["pages"] = pages
                    handle.write(dumps_line(record).encode("utf-8"))
                    kept += 1
        return kept


def _block_parts(raw: bytes) -> tuple[str, int] | None:
    """The template id of a block line as `TemplateBlock.line` writes it, and where its
    `,"pages":N}` ends the line (the top-level key: the object closes after its digits);
    None for any other line (parsed whole). Splicing the count there gives the line that
    parsing it, setting `pages` and encoding it again gives, without reading its links."""
    if not raw.startswith(b'{"template_id":"') or not raw.endswith(b"}\n"):
        return None
    end = raw.find(b'"', 16)
    at = raw.rfind(b',"pages":')
    if end < 0 or at < end or not raw[at + 9:-2].isdigit():
        return None
    template_id = raw[16:end]
    if b"\\" in template_id or not template_id.isascii():
        return None
    return template_id.decode("ascii"), at
