"""templates.jsonl's block ids kept in the crawl ledger (`export.templates.BlockIds`): the
writer's memory stays flat however many blocks the site has, and it writes the same file
as with ids in memory."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from docscrawl.crawl.ledger import Ledger
from docscrawl.crawl.outputs import OutputFiles
from docscrawl.export import templates
from docscrawl.export.templates import TemplateBlock, TemplateWriter
from docscrawl.jsonl import dumps_line

HEADER, TOC, ASIDE = "/html/body/header", "/html/body/nav", "/html/body/aside"


def _link(position: int, url: str) -> dict:
    return {"url": url, "text": url, "position": position}


def _page_blocks(page: int) -> list[tuple[str, TemplateBlock]]:
    """One page's (locator, block): the header every page shares, its own table of
    contents (a region the learner confirmed: written), and an aside met on this page only
    (not learned: its id is remembered as met once)."""
    header = TemplateBlock("tpl:header", "primary_navigation",
                           [_link(0, "http://d/"), _link(1, "http://d/index")])
    toc = TemplateBlock(f"tpl:toc{page:08d}", "page_toc",
                        [_link(0, f"#a{page}"), _link(1, f"#b{page}")])
    aside = TemplateBlock(f"tpl:aside{page:08d}", "related",
                          [_link(0, f"http://d/r{page}"), _link(1, f"http://d/s{page}")])
    return [(HEADER, header), (TOC, toc), (ASIDE, aside)]


def _crawl(writer: TemplateWriter, pages: range) -> None:
    """What the export pipeline does per page: decide which blocks leave it, write them."""
    for page in pages:
        decide = writer.keep({TOC})
        writer.write([block for locator, block in _page_blocks(page) if decide(locator, block)])


def _held_after(tmp_path: Path, pages: int, *, in_ledger: bool) -> int:
    """Python memory the writer holds after `pages` pages (SQLite's own memory is not
    Python's: the ledger's page cache is capped at `CACHE_KIB`)."""
    run_dir = tmp_path / f"{in_ledger}-{pages}"
    run_dir.mkdir()
    ledger = Ledger.open(tmp_path / f"ledger-{in_ledger}-{pages}")
    try:
        tracemalloc.start()
        outputs = OutputFiles(tmp_path, run_dir, append=False,
                              ledger=ledger if in_ledger else None)
        _crawl(outputs.templates, range(pages))
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        outputs.templates.close()
        outputs.close()
    finally:
        ledger.close()
    return held


def test_block_ids_in_the_ledger_do_not_grow_with_the_pages(tmp_path: Path) -> None:
    grown = {in_ledger: _held_after(tmp_path, 3000, in_ledger=in_ledger)
             - _held_after(tmp_path, 300, in_ledger=in_ledger) for in_ledger in (False, True)}
    # in sets: two ids per page (its table of contents written, its aside met once)
    assert grown[False] > 2700 * 100, grown
    assert grown[True] < 20_000, grown


@pytest.mark.parametrize("seen_once", [100_000, 7])
def test_ids_in_the_ledger_write_the_same_file(tmp_path: Path, seen_once: int,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(templates, "SEEN_ONCE", seen_once)  # 7: cleared on the way
    written = {}
    for in_ledger in (False, True):
        run_dir = tmp_path / str(in_ledger)
        run_dir.mkdir()
        with_ledger = Ledger.open(tmp_path / f"ledger-{in_ledger}") if in_ledger else None
        outputs = OutputFiles(tmp_path, run_dir, append=False, ledger=with_ledger)
        writer = outputs.templates
        # every page met twice, 20 pages apart: its aside leaves its second page unless
        # the met-once ids were cleared in between
        _crawl(writer, range(20))
        _crawl(writer, range(20))
        writer.close()
        written[in_ledger] = (run_dir / templates.TEMPLATES_FILE).read_bytes()
        if with_ledger is not None:
            with_ledger.close()
    assert written[False] == written[True]
    assert written[True].count(b'"tpl:aside') == (20 if seen_once > 40 else 0)


def test_a_resumed_run_reads_its_written_ids_into_the_ledger(tmp_path: Path) -> None:
    first = Ledger.open(tmp_path / "first")
    outputs = OutputFiles(tmp_path, tmp_path, append=False, ledger=first)
    _crawl(outputs.templates, range(5))
    outputs.templates.close()
    first.close()
    again = Ledger.open(tmp_path / "again")  # a resume starts a new ledger
    outputs = OutputFiles(tmp_path, tmp_path, append=True, ledger=again)
    _crawl(outputs.templates, range(8))
    outputs.templates.close()
    again.close()
    ids = [line.split('"')[3] for line in
           (tmp_path / templates.TEMPLATES_FILE).read_text().splitlines()]
    assert len(ids) == len(set(ids))  # nothing written twice
    assert sum(i.startswith("tpl:toc") for i in ids) == 8


def _finish_peak(tmp_path: Path, pages: int) -> tuple[int, int]:
    """(blocks kept, Python memory peak) of `finish` on `pages` pages, each with its own
    two blocks, one of them referenced twice."""
    run_dir = tmp_path / str(pages)
    run_dir.mkdir()
    writer = TemplateWriter(run_dir)
    lines = []
    for page in range(pages):
        blocks = [block for _, block in _page_blocks(page)][1:]
        writer.write(blocks)
        ids = [block.template_id for block in blocks]
        lines.append(dumps_line({"url": f"http://d/{page}", "template_ids": ids}))
    (run_dir / "pages.jsonl").write_text("".join(lines))
    tracemalloc.start()
    kept = writer.finish(run_dir / "pages.jsonl")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return kept, peak


def test_the_page_counts_at_the_end_do_not_grow_with_the_blocks(tmp_path: Path) -> None:
    small, large = _finish_peak(tmp_path, 300), _finish_peak(tmp_path, 3000)
    assert (small[0], large[0]) == (600, 6000)
    # a dict of the 6,000 ids: about 600 KB more than of 600
    assert large[1] < small[1] + 60_000, (small, large)
