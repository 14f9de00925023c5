"""The export writes its records without asking, value by value, whether orjson may encode
them (`jsonenc.dumps_value(plain=True)`): their types hold only strings, integers,
booleans, None, lists and string-keyed dicts. These tests keep that true (a float field
would be written as orjson writes it, not as the stdlib does) and check that the lines,
the converted dicts and the template blocks are the ones the checked way writes."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import types
import typing
import zlib
from pathlib import Path
from typing import Any

import pytest

from docscrawl import jsonenc
from docscrawl.chunking.chunker import ChunkRecord, _subtree_sizes, _walk, chunk_page
from docscrawl.chunking.units import section_tree
from docscrawl.crawl.items import FetchedPage
from docscrawl.discovery.pagetrack import DiscoveryRecord, PageTrack
from docscrawl.export.records import (
    SHARED_FIELDS,
    PageRecord,
    StructureRecord,
    as_dict,
    page_id,
    page_records,
)
from docscrawl.export.templates import TemplateBlock
from docscrawl.extract import model
from docscrawl.extract.page import extract_page
from docscrawl.extract.tree import html_root
from docscrawl.incremental.rows import pack_links, unpack_links
from docscrawl.jsonl import JsonlWriter, dumps_line, dumps_value, encode_line, encode_value

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PAGES = sorted([*(FIXTURES / "sites" / "demo").rglob("*.html"),
                *(FIXTURES / "pages").rglob("*.html")])
SCALARS = (str, int, bool, type(None))


def _plain_type(hint: Any, seen: set[type]) -> bool:
    """True when every value `hint` allows is one `jsonenc._plain` accepts (dataclasses
    of the extraction model count as the dicts `as_dict` makes of them)."""
    if hint in SCALARS or hint is typing.Literal:
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return all(_plain_type(arg, seen) for arg in args)
    if origin is typing.Literal:
        return all(isinstance(arg, SCALARS) for arg in args)
    if origin in (typing.NotRequired, typing.Required):
        return _plain_type(args[0], seen)
    if origin in (list, tuple):
        return all(_plain_type(arg, seen) for arg in args if arg is not Ellipsis)
    if origin is dict:
        return args[0] is str and _plain_type(args[1], seen)
    if isinstance(hint, type) and (dataclasses.is_dataclass(hint) or typing.is_typeddict(hint)):
        if hint in seen:
            return True
        seen.add(hint)
        return all(_plain_type(h, seen) for name, h in typing.get_type_hints(hint).items()
                   if (hint.__name__, name) not in LATER)
    return False


# Fields the export does not write (the end of the crawl adds them, checked the usual way)
LATER = {("ChunkMetadata", "inbound_links")}


# The record types the export writes with `plain=True`. `FieldDict` values (dict[str, Any])
# are the extraction model's dataclasses, converted by `as_dict`: checked one by one.
WRITTEN = [ChunkRecord, DiscoveryRecord, *(
    cls for cls in vars(model).values()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls is not model.PageExtract)]


@pytest.mark.parametrize("kind", WRITTEN, ids=lambda kind: kind.__name__)
def test_the_written_types_hold_only_plain_values(kind: type) -> None:
    assert _plain_type(kind, set()), f"{kind.__name__} allows a value orjson writes its own way"


def test_page_and_structure_records_are_plain_but_for_converted_dataclasses() -> None:
    field_dict = dict[str, Any]
    for kind in (PageRecord, StructureRecord):
        for name, hint in typing.get_type_hints(kind).items():
            converted = hint in (field_dict, list[field_dict], dict[str, list[field_dict]],
                                 typing.NotRequired[list[field_dict]])
            assert converted or _plain_type(hint, set()), f"{kind.__name__}.{name}"
    assert not _plain_type(float, set()) and not _plain_type(dict[str, float | None], set())


def _as_dict_before(obj: Any) -> dict[str, Any]:
    """`as_dict` as it was written first: every value looked at."""
    out = {}
    for name in obj.__slots__:
        value = getattr(obj, name)
        if isinstance(value, list) and value and hasattr(value[0], "__slots__"):
            value = [_as_dict_before(v) for v in value]
        out[name] = value
    return out


def _stdlib(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _fetched(url: str, html: str) -> FetchedPage:
    ext = extract_page(html_root(html, url), url)
    return FetchedPage(
        track=PageTrack(url, url, 1, [("sidebar", "http://127.0.0.1:8000/")]), final_url=url,
        status=200, content_type="text/html", etag='"e1"', last_modified=None,
        fetch_mode="http", retrieved_at="2026-12-04T00:00:00Z", root=None, extract=ext,
        content_hash=page_id(ext.markdown), canonical_url=url,
        warnings=[{"code": "canonical_conflict", "detail": "x"}])


@pytest.mark.parametrize("path", PAGES, ids=lambda path: path.stem)
def test_real_pages_write_the_lines_the_checked_way_writes(path: Path) -> None:
    url = f"http://127.0.0.1:8000/{path.relative_to(FIXTURES)}"
    page = _fetched(url, path.read_text("utf-8", errors="replace"))
    ext = page.extracted
    for obj in [ext.version, *ext.links, *ext.blocks, *ext.headings, *ext.code_blocks,
                *ext.regions, *ext.breadcrumbs, *ext.warnings]:
        assert as_dict(obj) == _as_dict_before(obj)
        assert list(as_dict(obj)) == list(_as_dict_before(obj))
    record, structure, blocks = page_records(page, lambda locator, block: True)
    chunks = chunk_page(ext, page_id=record["id"], canonical_url=url, title=ext.title,
                        version=ext.version.value, breadcrumbs=[c.label for c in ext.breadcrumbs],
                        retrieved_at=page.retrieved_at, content_hash=record["content_hash"])
    shared = {key: dumps_value(record[key], plain=True) for key in SHARED_FIELDS if key in record}
    utf8 = {key: encode_value(record[key], plain=True) for key in shared}
    assert utf8 == {key: text.encode() for key, text in shared.items()}
    for value, line, written in [
            (record, dumps_line(record, shared, plain=True), encode_line(record, utf8, plain=True)),
            (structure, dumps_line(structure, shared, plain=True),
             encode_line(structure, utf8, plain=True)),
            *((chunk, dumps_line(chunk, plain=True), encode_line(chunk, plain=True))
              for chunk in chunks)]:
        assert jsonenc._plain(value)
        assert line == dumps_line(value) == _stdlib(value) + "\n"
        assert written == line.encode("utf-8")
    for block in blocks:
        held = dumps_value([block.region, block.links])
        assert block.template_id == "tpl:" + hashlib.sha256(held.encode()).hexdigest()[:32]
        assert block.line(3) == TemplateBlock(block.template_id, block.region,
                                              block.links).line(3)
        assert block.line(3) == _stdlib({"template_id": block.template_id,
                                         "region": block.region, "links": block.links,
                                         "pages": 3}) + "\n"


def test_plain_skips_the_walk_and_a_refusal_still_goes_the_stdlib_way(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("orjson")
    walked: list[object] = []
    monkeypatch.setattr(jsonenc, "_plain", lambda value: walked.append(value) or True)
    record = {"id": "x", "links": [{"url": "é", "position": 3}], "n": None}
    assert dumps_line(record, plain=True) == _stdlib(record) + "\n"
    assert dumps_line(record, {"links": dumps_value(record["links"], plain=True)},
                      plain=True) == _stdlib(record) + "\n"
    assert walked == []
    refused = {"text": "lone \ud800 surrogate", "big": [2**64]}  # orjson refuses both
    assert dumps_value(refused, plain=True) == _stdlib(refused)
    assert dumps_line(refused, {"big": "[18446744073709551616]"}, plain=True) == (
        _stdlib(refused) + "\n")


def test_utf8_lines_are_written_in_order_with_text_lines(tmp_path: Path) -> None:
    writer = JsonlWriter(tmp_path / "out.jsonl")
    writer.write({"a": "é"})
    writer.write_raw(encode_line({"b": "😀", "n": 1}, plain=True))
    writer.write_raw('{"c":"x"}')
    writer.write_raw(b'{"d":"\xc3\xa9"}')  # no newline: one is added
    writer.write_joined(encode_line({"e": [1]}) + encode_line({"f": None}), 2)
    writer.write_joined(b"", 0)
    writer.write({"g": "last"})
    writer.close()
    lines = (tmp_path / "out.jsonl").read_text("utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        {"a": "é"}, {"b": "😀", "n": 1}, {"c": "x"}, {"d": "é"}, {"e": [1]}, {"f": None},
        {"g": "last"}]
    assert writer.count == 7
    with pytest.raises(ValueError):
        writer.write_raw(b"{}")


def test_a_refused_value_is_encoded_the_stdlib_way_as_utf8(
        monkeypatch: pytest.MonkeyPatch) -> None:
    value = {"big": [2**64], "x": 0.5, "t": "ü"}
    assert encode_value(value) == _stdlib(value).encode()
    assert encode_line(value, {"t": b'"\xc3\xbc"'}) == (_stdlib(value) + "\n").encode()
    monkeypatch.setattr(jsonenc, "_FAST", None)  # without orjson: the same bytes
    assert encode_line(value, {"t": '"ü"'}, plain=True) == (_stdlib(value) + "\n").encode()


def test_found_links_are_stored_as_json_dumps_wrote_them() -> None:
    links = [("http://d/a", "sidebar", 0), ("http://d/é?x=\"1\"", "in_page", 7)]
    before = json.dumps([list(link) for link in links], ensure_ascii=False,
                        separators=(",", ":"))
    assert zlib.decompress(pack_links(links)).decode() == before
    assert zlib.decompress(pack_links(iter(links))).decode() == before
    assert unpack_links(pack_links(links)) == links


def test_subtree_sizes_are_the_sections_token_sums() -> None:
    for html in PAGES[:12]:
        ext = extract_page(html_root(html.read_text("utf-8"), "http://d/"), "http://d/")
        tree = section_tree(ext.blocks, target=100, hard_max=200)
        sizes = _subtree_sizes(tree)
        sections = _walk(tree)
        assert len(sizes) == len(sections)
        for section in sections:
            assert sizes[id(section)] == section.subtree_tokens()
