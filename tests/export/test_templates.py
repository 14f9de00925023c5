"""The template's links written once (`export.templates`): split and join are lossless,
and a bad templates.jsonl costs one line, never the rest."""

from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

import pytest

from docscrawl.export.templates import (
    PreviousBlocks,
    TemplateLinks,
    TemplateWriter,
    join_links,
    split_links,
    template_ids_in,
)
from docscrawl.jsonl import dumps_line
from docscrawl.seekjsonl import compress_jsonl


def link(position: int, url: str, locator: str | None, region: str = "sidebar_navigation",
         text: str | None = None) -> dict:
    return {"url": url, "text": text or url.rsplit("/", 1)[-1], "rel": [], "region": region,
            "container": "navigation", "container_label": None, "heading_path": [],
            "target": "internal", "position": position, "region_locator": locator}


def page_links(main: int, sidebar: list[str]) -> list[dict]:
    """A header (3 links), `main` links of content, then the sidebar: the sidebar starts
    at a position that differs with the page."""
    header = [link(i, f"http://d/{name}", "/html/body/div[1]", "primary_navigation")
              for i, name in enumerate(("home", "contents", "index"))]
    content = [link(3 + i, f"http://d/ref{i}", "/html/body/main", "main_content")
               for i in range(main)]
    side = [link(3 + main + i, f"http://d/{name}", "/html/body/div[2]")
            for i, name in enumerate(sidebar)]
    return header + content + side


def record_of(links: list[dict], template_locators: set[str]) -> tuple[dict, list]:
    own, blocks, offsets = split_links(links, template_locators)
    return ({"links": own, "template_ids": [b.template_id for b in blocks],
             "template_offsets": offsets}, blocks)


TEMPLATE = {"/html/body/div[1]", "/html/body/div[2]"}


def test_split_then_join_gives_the_page_its_links_back() -> None:
    pages = [page_links(main, ["a", "b", "c", "d"]) for main in (0, 5, 17)]
    store: dict[str, list[dict]] = {}
    records = []
    for links in pages:
        record, blocks = record_of(links, TEMPLATE)
        store.update({b.template_id: b.links for b in blocks})
        records.append(record)
        assert [x["region"] for x in record["links"]] == ["main_content"] * len(record["links"])
    # the header and the sidebar are one block each, shared by all three pages
    assert len(store) == 2
    assert len({tuple(r["template_ids"]) for r in records}) == 1
    for record, links in zip(records, pages, strict=True):
        assert join_links(record, store) == links


def test_a_section_with_its_own_sidebar_gets_its_own_block() -> None:
    first, _ = record_of(page_links(2, ["a", "b", "c"]), TEMPLATE)
    other, _ = record_of(page_links(2, ["x", "y", "z"]), TEMPLATE)
    retitled, _ = record_of([{**x, "text": x["text"].upper()} if x["region_locator"] ==
                             "/html/body/div[2]" else x for x in page_links(2, ["a", "b", "c"])],
                            TEMPLATE)
    assert first["template_ids"][0] == other["template_ids"][0]  # the same header
    sidebars = {first["template_ids"][1], other["template_ids"][1], retitled["template_ids"][1]}
    assert len(sidebars) == 3  # another sidebar, or other link texts: another block


def test_region_not_found_repeated_stays_inline() -> None:
    links = page_links(3, ["a", "b"])
    record, blocks = record_of(links, set())
    assert record["links"] == links and not blocks
    record, blocks = record_of([link(0, "http://d/x", "/nav")], {"/nav"})  # one link: inline
    assert not blocks and len(record["links"]) == 1


def test_100000_template_links(tmp_path: Path) -> None:
    huge = [f"p{i}" for i in range(100_000)]
    links = page_links(4, huge)
    record, blocks = record_of(links, TEMPLATE)
    assert len(record["links"]) == 4
    writer = TemplateWriter(tmp_path)
    writer.write(blocks)
    writer.write(blocks)  # written once
    (tmp_path / "pages.jsonl").write_text(dumps_line(record) * 3, encoding="utf-8")
    assert writer.finish(tmp_path / "pages.jsonl") == 2
    stored = TemplateLinks(tmp_path)
    assert join_links(record, stored) == links
    assert sorted(len(v) for v in stored.values()) == [3, 100_000]


def test_writer_counts_pages_and_drops_unused_blocks(tmp_path: Path) -> None:
    one, blocks_one = record_of(page_links(1, ["a", "b"]), TEMPLATE)
    two, blocks_two = record_of(page_links(1, ["x", "y"]), TEMPLATE)
    writer = TemplateWriter(tmp_path)
    writer.write(blocks_one + blocks_two)
    (tmp_path / "pages.jsonl").write_text(dumps_line(one) * 2, encoding="utf-8")
    assert writer.finish(tmp_path / "pages.jsonl") == 2
    lines = {r["template_id"]: r for r in map(__import__("json").loads,
             (tmp_path / "templates.jsonl").read_text().splitlines())}
    assert set(lines) == set(one["template_ids"])
    assert {r["pages"] for r in lines.values()} == {2}
    assert {r["region"] for r in lines.values()} == {"primary_navigation",
                                                      "sidebar_navigation"}
    assert template_ids_in(dumps_line(two)) == two["template_ids"]
    assert template_ids_in(dumps_line({"markdown": 'a "template_ids":["x"] b'})) == []


def test_template_ids_read_from_bytes_as_from_text() -> None:
    """`finish` reads page lines as bytes, not decoded: the same ids as from the text,
    non-ASCII around them and invalid UTF-8 inside included."""
    one, _ = record_of(page_links(1, ["é", "b"]), TEMPLATE)
    lines = [dumps_line({"title": "Über ✓", **one, "markdown": "日本 ]"}),
             dumps_line({"markdown": 'a "template_ids":["x"] b'}),
             dumps_line({"template_ids": []}), '{"template_ids":["a", "b"]}\n']
    for line in lines:
        assert template_ids_in(line.encode()) == template_ids_in(line)
    assert template_ids_in(lines[0].encode()) == one["template_ids"] != []
    broken = b'{"t":"\xff\xfe","template_ids":["a\xff","b"]}\n'
    assert template_ids_in(broken) == template_ids_in(broken.decode("utf-8", "replace"))


def test_finish_splices_each_count_as_encoding_the_line_whole_would(tmp_path: Path) -> None:
    """`finish` writes only the count into a block line as the writer wrote it; other lines
    (another layout, a second copy of a block, a torn last line) are parsed whole. The
    file is what parsing, counting and encoding every line gives."""
    pages, blocks = [], []
    for n in range(4):
        record, page_blocks = record_of(page_links(1, [f"s{n}", "ü ,\"pages\":1}"]), TEMPLATE)
        pages += [record] * (n + 1)
        blocks += page_blocks
    writer = TemplateWriter(tmp_path)
    writer.write(blocks[:-1])
    writer.close()
    spaced = json.loads(blocks[-1].line(0))
    unused = {"template_id": "tpl:unused", "region": "x", "links": [], "pages": 0}
    with (tmp_path / "templates.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(spaced) + "\n" + blocks[0].line(0) + dumps_line(unused))
        handle.write(blocks[1].line(0).rstrip("\n"))  # torn
    before = (tmp_path / "templates.jsonl").read_text(encoding="utf-8").splitlines()
    counts: dict[str, int] = {}
    for record in pages:
        for template_id in record["template_ids"]:
            counts[template_id] = counts.get(template_id, 0) + 1
    expected = []
    for line in before[:-1]:
        block = json.loads(line)
        if counts.get(block["template_id"]):
            block["pages"] = counts.pop(block["template_id"])
            expected.append(dumps_line(block))
    (tmp_path / "pages.jsonl").write_text("".join(map(dumps_line, pages)), encoding="utf-8")
    assert TemplateWriter(tmp_path, append=True).finish(tmp_path / "pages.jsonl") == len(
        expected)
    assert (tmp_path / "templates.jsonl").read_text(encoding="utf-8") == "".join(expected)


@pytest.mark.parametrize("compressed", [False, True])
def test_carried_over_record_copies_its_blocks_from_the_previous_run(
        tmp_path: Path, compressed: bool) -> None:
    previous, current = tmp_path / "prev", tmp_path / "cur"
    previous.mkdir()
    current.mkdir()
    record, blocks = record_of(page_links(2, ["a", "b"]), TEMPLATE)
    other, other_blocks = record_of(page_links(1, ["x", "y"]), TEMPLATE)
    old = TemplateWriter(previous)
    old.write(other_blocks + blocks)
    (previous / "pages.jsonl").write_text(dumps_line(other) + dumps_line(record),
                                          encoding="utf-8")
    old.finish(previous / "pages.jsonl")
    wanted = {json.loads(raw)["template_id"]: raw for raw in
              (previous / "templates.jsonl").read_text(encoding="utf-8").splitlines(True)}
    if compressed:  # a `compress=gzip` run: held, not read at an offset
        compress_jsonl(previous / "templates.jsonl")
    previous_blocks = PreviousBlocks([previous])
    assert {i: previous_blocks.get(i) for i in wanted} == wanted  # byte for byte
    assert previous_blocks.get("tpl:none") is None and "tpl:none" not in previous_blocks
    line = dumps_line(record)
    assert not TemplateWriter(current).available(line)  # nothing to copy from
    writer = TemplateWriter(current, previous=previous)
    assert writer.available(line)
    writer.carry(line)
    writer.close()
    assert join_links(record, TemplateLinks(current)) == page_links(2, ["a", "b"])


def test_truncated_templates_file_is_one_line_and_keeps_the_rest(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    record, blocks = record_of(page_links(2, ["a", "b", "c"]), TEMPLATE)
    (tmp_path / "templates.jsonl").write_text(
        "".join(b.line(1) for b in blocks)[:-40], encoding="utf-8")  # the sidebar cut short
    with caplog.at_level(logging.WARNING):
        stored = TemplateLinks(tmp_path)
        joined = stored.join({**record})
    own = [x for x in page_links(2, ["a", "b", "c"]) if x["region_locator"] !=
           "/html/body/div[2]"]
    assert joined["links"] == own  # the page's own links and the header: nothing else lost
    assert "template_ids" not in joined
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "templates.jsonl" in warnings[0]


def test_truncated_gzip_templates_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    record, blocks = record_of(page_links(2, ["a", "b", "c"]), TEMPLATE)
    data = gzip.compress("".join(b.line(1) for b in blocks).encode())
    (tmp_path / "templates.jsonl.gz").write_bytes(data[:-12])
    with caplog.at_level(logging.WARNING):
        joined = TemplateLinks(tmp_path).join(record)
    assert len(joined["links"]) >= 2
    assert any("templates.jsonl.gz" in r.getMessage() for r in caplog.records)


def test_old_output_without_templates_reads_as_before(tmp_path: Path) -> None:
    links = page_links(2, ["a"])
    old = {"links": links, "title": "x"}  # no template_ids at all
    assert TemplateLinks(tmp_path).join(old) is old
    assert join_links(old, TemplateLinks(tmp_path)) == links


def test_a_block_leaves_the_page_when_learned_or_met_before(tmp_path: Path) -> None:
    writer = TemplateWriter(tmp_path)
    links = page_links(1, ["a", "b", "c"])
    first, first_blocks = record_of(links, TEMPLATE)
    # nothing learned yet: the first page keeps its blocks inline, the second moves them
    own, blocks, _ = split_links(links, TEMPLATE, writer.keep(set()))
    assert own == links and not blocks
    own, blocks, _ = split_links(links, TEMPLATE, writer.keep(set()))
    assert own == first["links"] and [b.template_id for b in blocks] == first["template_ids"]
    # a region the template learner confirmed leaves the page at once
    other = page_links(1, ["x", "y"])
    own, blocks, _ = split_links(other, TEMPLATE, writer.keep({"/html/body/div[2]"}))
    # the header was met before; the new sidebar, met for the first time, was learned
    assert [b.region for b in blocks] == ["primary_navigation", "sidebar_navigation"]
    assert [x["region"] for x in own] == ["main_content"]
    own, blocks, _ = split_links(page_links(1, ["p", "q"]), TEMPLATE, writer.keep(set()))
    assert [b.region for b in blocks] == ["primary_navigation"]  # not learned, not met
    assert first_blocks


def _sidebar_variants(tmp_path: Path, sections: int) -> list[dict]:
    """Page records of a site whose sidebar is one block per section (each section's
    entry expanded), the header one block: templates.jsonl written as a crawl writes it."""
    names = [f"s{i}" for i in range(40)]
    writer = TemplateWriter(tmp_path)
    records = []
    for section in range(sections):
        sidebar = [*names[:section % 40 + 1], f"sub{section}-a", f"sub{section}-b",
                   *names[section % 40 + 1:]]
        links = page_links(2 + section % 3, sidebar)
        links[3]["url"] = f"http://d/s{(section + 1) % 40}#part"  # a section link
        record, blocks = record_of(links, TEMPLATE)
        writer.write(blocks)
        record = {"canonical_url": f"http://d/s{section % 40}", **record}
        records.append((record, links))
    (tmp_path / "pages.jsonl").write_text("".join(dumps_line(r) for r, _ in records),
                                          encoding="utf-8")
    writer.finish(tmp_path / "pages.jsonl")
    return records


def test_the_link_graph_ranks_the_same_from_its_own_block_store(tmp_path: Path) -> None:
    from docscrawl.export.linkgraph import LinkGraph

    _sidebar_variants(tmp_path, 400)
    graphs = []
    # the same inbound links with the readers' full blocks or the graph's own block store
    for own in (False, True):
        with LinkGraph() as graph:
            if own:
                graph.add_run(tmp_path)
            else:
                graph.add_identities(tmp_path / "pages.jsonl")
                graph.add_links(tmp_path / "pages.jsonl", TemplateLinks(tmp_path))
            graph.rank()
            graphs.append({key: (count, best) for key, count, best in graph.targets()})
    assert graphs[0] == graphs[1] and ("http://d/s1", "part") in graphs[0]
