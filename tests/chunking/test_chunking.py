"""Chunking rules: sections, merging, splitting, code with its prose, tables, ids, labels."""

from __future__ import annotations

import random
from typing import Any

import pytest

from docscrawl.chunking.chunker import chunk_id, chunk_label, chunk_page, section_citation
from docscrawl.chunking.units import count_tokens
from docscrawl.extract.model import PageExtract
from tests.chunking.pages import make_extract, words

URL = "https://docs.example.test/guide/auth/"
CONTRACT_METADATA = {
    "source_url", "canonical_url", "title", "version", "heading_path", "breadcrumbs", "region",
    "chunk_index", "block_range", "retrieved_at", "content_hash", "has_code", "code_languages",
}


def chunks(markdown: str | PageExtract, **kwargs: Any) -> list[dict[str, Any]]:
    extract = make_extract(markdown) if isinstance(markdown, str) else markdown
    options: dict[str, Any] = {
        "page_id": "sha256:page", "canonical_url": URL, "title": "Auth guide",
        "version": "2.1", "breadcrumbs": ["Docs", "Security"],
        "retrieved_at": "2026-11-29T16:00:00Z", "content_hash": "sha256:content",
    }
    options.update(kwargs)
    return chunk_page(extract, **options)


def paths(records: list[dict[str, Any]]) -> list[list[str]]:
    return [r["metadata"]["heading_path"] for r in records]


# ---- labels and records -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("breadcrumbs", "heading_path", "label"),
    [
        (["Docs", "Security"], ["Auth", "API keys"], "Docs > Security | Auth > API keys"),
        ([], ["Auth", "API keys"], "Auth > API keys"),
        (["Docs"], [], "Docs"),
        ([], [], ""),
        (["Docs", ""], ["Auth"], "Docs | Auth"),
    ],
)
def test_label(breadcrumbs: list[str], heading_path: list[str], label: str) -> None:
    assert chunk_label(breadcrumbs, heading_path) == label


PAGE = f"""
# Authentication {{#auth}}

{words(45, "intro")}

## API keys {{#api-keys}}

{words(250, "keys")}

### Rotate keys

Create a new key before revoking the previous key so clients can transition safely.

```bash
docscrawl keys rotate --grace 7d
```

{words(200, "rot")}

## SSH keys {{#ssh}}

{words(260, "ssh")}
"""


def test_records_carry_every_contract_field() -> None:
    records = chunks(PAGE)
    assert [r["metadata"]["chunk_index"] for r in records] == list(range(len(records)))
    for record in records:
        assert set(record["metadata"]) >= CONTRACT_METADATA
        assert record["id"].startswith("sha256:") and len(record["id"]) == 71
        assert record["page_id"] == "sha256:page"
        label, body = record["text"].split("\n", 1)
        assert body == record["markdown"]
        assert label == chunk_label(["Docs", "Security"], record["metadata"]["heading_path"])
        meta = record["metadata"]
        assert meta["canonical_url"] == URL and meta["version"] == "2.1"
        assert meta["title"] == "Auth guide" and meta["region"] == "main_content"
        assert meta["breadcrumbs"] == ["Docs", "Security"]
        assert meta["content_hash"] == "sha256:content"
        assert record["token_count"] == count_tokens(record["markdown"])


def test_source_url_points_at_nearest_heading_anchor() -> None:
    records = chunks(PAGE)
    by_path = {tuple(r["metadata"]["heading_path"]): r["metadata"]["source_url"] for r in records}
    # "Rotate keys" has no anchor: its chunk cites the nearest ancestor that has one
    assert by_path[("Authentication", "API keys", "Rotate keys")] == URL + "#api-keys"
    assert by_path[("Authentication", "SSH keys")] == URL + "#ssh"


def test_no_label_at_all_gives_markdown_alone() -> None:
    records = chunks(words(20), breadcrumbs=[])
    assert records[0]["text"] == records[0]["markdown"]
    assert records[0]["metadata"]["source_url"] == URL


# ---- sections, merging, splitting -------------------------------------------------------


def test_one_chunk_per_large_section() -> None:
    records = chunks(PAGE)
    assert paths(records) == [
        ["Authentication"],
        ["Authentication", "API keys"],
        ["Authentication", "API keys", "Rotate keys"],
        ["Authentication", "SSH keys"],
    ]


def test_short_sibling_sections_are_chunks_of_their_own() -> None:
    page = f"""
# Install {{#install}}

{words(360, "big")}

## Linux {{#linux}}

{words(40, "lin")}

## macOS {{#mac}}

{words(40, "mac")}

## Windows {{#win}}

{words(40, "win")}
"""
    records = chunks(page)
    assert paths(records) == [
        ["Install"], ["Install", "Linux"], ["Install", "macOS"], ["Install", "Windows"]]
    assert [r["metadata"]["source_url"] for r in records] == [
        URL + "#install", URL + "#linux", URL + "#mac", URL + "#win"]
    assert [r["metadata"]["anchor"] for r in records] == ["install", "linux", "mac", "win"]
    assert not any("sections" in r["metadata"] for r in records)


def test_run_of_tiny_sections_shares_a_chunk_listing_each() -> None:
    members = "\n\n".join(f"## member_{i} {{#m{i}}}\n\nReturns item {i}." for i in range(60))
    page = f"# API {{#api}}\n\n{words(380, 'big')}\n\n{members}\n\n## Notes {{#notes}}\n\n" \
        + words(120, "note")
    records = chunks(page)
    shared = [r for r in records if "sections" in r["metadata"]]
    assert len(shared) >= 2 and all(r["token_count"] <= 400 for r in shared)
    assert all(r["metadata"]["heading_path"] == ["API"] for r in shared)
    assert all(r["metadata"]["source_url"] == URL + "#api" for r in shared)
    listed = [s for r in shared for s in r["metadata"]["sections"]]
    assert [s["heading_path"] for s in listed] == [["API", f"member_{i}"] for i in range(60)]
    assert [s["anchor"] for s in listed] == [f"m{i}" for i in range(60)]
    first = listed[0]["block_range"]
    assert first == [2, 3]  # the member's heading and its one line
    # a search hit on a member's line cites that member, not the shared label
    member = listed[5]
    owner = next(r for r in shared if member in r["metadata"]["sections"])
    assert section_citation(owner, member["block_range"][1]) == (["API", "member_5"],
                                                                 URL + "#m5")
    # the sibling that is not tiny stays a chunk of its own
    assert paths(records)[-1] == ["API", "Notes"] and "sections" not in records[-1]["metadata"]


def test_bare_heading_joins_its_first_subsection_and_lists_both() -> None:
    page = f"# Guide {{#guide}}\n\n## Start {{#start}}\n\n{words(300, 's')}\n\n" \
        f"## Next {{#next}}\n\n{words(300, 'n')}"
    records = chunks(page)
    assert paths(records) == [["Guide"], ["Guide", "Next"]]
    sections = records[0]["metadata"]["sections"]
    assert [s["heading_path"] for s in sections] == [["Guide"], ["Guide", "Start"]]
    assert [s["block_range"] for s in sections] == [[0, 0], [1, 2]]
    assert records[0]["metadata"]["source_url"] == URL + "#guide"


def test_every_heading_in_a_chunk_is_named_by_its_path_or_sections() -> None:
    rng = random.Random(7)
    parts = []
    for i in range(80):
        level = rng.choice([1, 2, 2, 3, 3, 4])
        parts.append(f"{'#' * level} H{i} {{#h{i}}}")
        parts.extend(words(rng.choice([3, 10, 30, 80, 200]), f"w{i}x") for _ in range(
            rng.randint(0, 3)))
    for record in chunks("\n\n".join(parts)):
        meta = record["metadata"]
        named = {meta["heading_path"][-1]} if meta["heading_path"] else set()
        named |= {s["heading_path"][-1] for s in meta.get("sections", []) if s["heading_path"]}
        held = {line.split(" ", 1)[1] for line in record["markdown"].split("\n")
                if line.startswith("#")}
        assert held <= named, (held - named, meta["heading_path"])


def test_whole_small_page_is_one_chunk() -> None:
    page = "# A {#a}\n\nshort.\n\n## B\n\nshort too.\n\n## C\n\nalso short."
    records = chunks(page)
    assert len(records) == 1
    assert records[0]["metadata"]["heading_path"] == ["A"]
    assert records[0]["metadata"]["block_range"] == [0, 5]


@pytest.mark.parametrize(("target", "max_tokens"), [(100, None), (200, None), (150, 180)])
def test_long_section_splits_at_block_boundaries(target: int, max_tokens: int | None) -> None:
    paragraphs = [words(35 + 7 * i, f"p{i}x") for i in range(12)]
    page = "## Long {#long}\n\n" + "\n\n".join(paragraphs)
    records = chunks(page, target_tokens=target, max_tokens=max_tokens)
    assert len(records) > 1
    hard_max = max_tokens or 2 * target
    for record in records:
        assert record["token_count"] <= hard_max and not record["oversized"]
        assert record["metadata"]["heading_path"] == ["Long"]
        assert record["metadata"]["source_url"] == URL + "#long"
    bodies = "\n\n".join(r["markdown"] for r in records)
    assert bodies == page.split("\n\n", 1)[0].replace(" {#long}", "") + "\n\n" + "\n\n".join(
        paragraphs
    )
    for paragraph in paragraphs:  # never split inside a block
        assert sum(paragraph in r["markdown"] for r in records) == 1


@pytest.mark.parametrize("filler", range(0, 420, 15))
def test_code_block_stays_with_its_introducing_prose(filler: int) -> None:
    intro = "Run the migration before you restart the service:"
    page = (
        f"## Upgrade\n\n{words(filler, 'fill')}\n\n{intro}\n\n"
        "```bash\ndocscrawl migrate --to 2\n```\n\n"
        f"{words(150, 'after')}"
    )
    records = chunks(page, target_tokens=200)
    holding = [r for r in records if "docscrawl migrate" in r["markdown"]]
    assert len(holding) == 1
    assert intro in holding[0]["markdown"]
    assert holding[0]["metadata"]["has_code"] is True
    assert holding[0]["metadata"]["code_languages"] == ["bash"]
    assert all(not r["metadata"]["has_code"] for r in records if r is not holding[0])


def test_code_block_is_never_split() -> None:
    code = "\n".join(f"line_{i} = compute({i}, option_{i})" for i in range(120))
    page = f"## Big code\n\nThe whole module:\n\n```python\n{code}\n```\n\n{words(50)}"
    records = chunks(page, target_tokens=100)
    holding = [r for r in records if "line_0 =" in r["markdown"]]
    assert len(holding) == 1 and code in holding[0]["markdown"]
    assert holding[0]["oversized"] is True
    assert holding[0]["markdown"] == f"```python\n{code}\n```"  # stands alone
    assert all(not r["oversized"] for r in records if r is not holding[0])


def test_large_table_splits_by_rows_with_header_repeated() -> None:
    header = "| Option | Default | Meaning |\n| --- | --- | --- |"
    rows = [f"| opt{i} | {i} | {words(12, f't{i}x')} |" for i in range(60)]
    page = f"## Options {{#options}}\n\n{header}\n" + "\n".join(rows)
    records = chunks(page, target_tokens=150)
    parts = [r for r in records if "| opt" in r["markdown"]]
    assert len(parts) > 2
    seen_rows: list[str] = []
    for index, record in enumerate(parts, 1):
        assert header in record["markdown"]
        assert record["token_count"] <= 300 and not record["oversized"]
        assert record["metadata"]["table_part"] == [index, len(parts)]
        assert record["metadata"]["block_range"] == [0 if index == 1 else 1, 1]
        seen_rows += [line for line in record["markdown"].split("\n") if "| opt" in line]
    assert seen_rows == rows
    assert "## Options" in parts[0]["markdown"]  # the heading stays with the first part
    assert len({r["id"] for r in records}) == len(records)


def test_table_under_the_maximum_is_kept_whole() -> None:
    table = "| a | b |\n| --- | --- |\n" + "\n".join(f"| {i} | x |" for i in range(20))
    records = chunks(f"## T\n\n{table}", target_tokens=100)
    assert any(table in r["markdown"] for r in records)


def test_single_oversized_paragraph_stands_alone_flagged() -> None:
    page = f"## S\n\n{words(30, 'a')}\n\n{words(500, 'huge')}\n\n{words(30, 'b')}"
    records = chunks(page, target_tokens=100)
    flagged = [r for r in records if r["oversized"]]
    assert len(flagged) == 1 and flagged[0]["markdown"] == words(500, "huge")


def test_heading_stays_with_an_oversized_block_after_it() -> None:
    page = f"# Page\n\n{words(200, 'a')}\n\n## Variables\n\n{words(900, 'v')}\n\n## After\n\nx."
    records = chunks(page)
    held = [r for r in records if "## Variables" in r["markdown"]]
    assert len(held) == 1 and held[0]["oversized"]
    assert held[0]["markdown"] == "## Variables\n\n" + words(900, "v")
    assert held[0]["metadata"]["heading_path"] == ["Page", "Variables"]


def test_fallback_without_blocks_uses_markdown_paragraphs() -> None:
    markdown = f"{words(150, 'a')}\n\n```sh\nmake demo\n```\n\n{words(150, 'b')}\n"
    records = chunks(PageExtract(markdown=markdown), target_tokens=120)
    assert len(records) >= 2
    assert any("make demo" in r["markdown"] and "a149" in r["markdown"] for r in records)
    assert [r["metadata"]["code_languages"] for r in records if r["metadata"]["has_code"]] == [
        ["sh"]
    ]


def test_empty_page_has_no_chunks() -> None:
    assert chunks(PageExtract()) == []


@pytest.mark.parametrize("seed", range(25))
def test_random_pages_respect_maximum_and_cover_every_block_once(seed: int) -> None:
    rng = random.Random(seed)
    parts: list[str] = []
    for i in range(rng.randint(3, 25)):
        parts.append("#" * rng.randint(1, 4) + f" Heading {i}")
        for j in range(rng.randint(0, 5)):
            kind = rng.random()
            if kind < 0.2:
                parts.append(f"```py\nprint({i}, {j})\n" + "x = 1\n" * rng.randint(1, 40) + "```")
            elif kind < 0.3:
                parts.append("| k | v |\n| --- | --- |\n" + "\n".join(
                    f"| k{r} | {words(rng.randint(1, 9), 'v')} |" for r in range(rng.randint(1, 80))
                ))
            else:
                parts.append(words(rng.randint(1, 260), f"w{i}x{j}y"))
    target = rng.choice([60, 120, 400])
    extract = make_extract("\n\n".join(parts))
    records = chunks(extract, target_tokens=target)
    kinds = {b.ordinal: b.kind for b in extract.blocks}
    for record in records:
        first, last = record["metadata"]["block_range"]
        # over the maximum only as one block, with the heading that opens it
        assert record["token_count"] <= 2 * target or (record["oversized"] and (
            first == last or (last == first + 1 and kinds[first] == "heading")))
        assert any(kinds[o] != "heading" for o in range(first, last + 1)) or (
            last == max(kinds) or kinds[last + 1] == "heading")  # no heading left alone
    covered = [o for r in records for o in range(r["metadata"]["block_range"][0],
                                               r["metadata"]["block_range"][1] + 1)]
    assert sorted(set(covered)) == [b.ordinal for b in extract.blocks]
    for block in extract.blocks:
        if block.kind != "table":  # every other block appears whole in exactly one chunk
            assert sum(block.markdown in r["markdown"].split("\n\n") or
                       block.markdown in r["markdown"] for r in records) >= 1
    assert len({r["id"] for r in records}) == len(records)


# ---- ids --------------------------------------------------------------------------------


def _ids(markdown: str, **kwargs: Any) -> list[str]:
    return [r["id"] for r in chunks(markdown, **kwargs)]


def test_same_page_rechunked_gives_same_ids() -> None:
    assert _ids(PAGE) == _ids(PAGE)
    assert _ids(PAGE) == _ids(PAGE, retrieved_at="2030-01-01T00:00:00Z", content_hash="sha256:x")


@pytest.mark.parametrize(
    ("old", "new", "changed_index"),
    [
        ("keys17 keys18", "keys17 KEYS18", 1),  # a word edited in "API keys"
        ("transition safely.", "transition safely and quickly.", 2),  # in "Rotate keys"
        ("--grace 7d", "--grace 14d", 2),  # inside the code block
        ("ssh259", "ssh259 ssh260", 3),  # appended to "SSH keys"
    ],
)
def test_edit_in_one_section_changes_only_its_chunk_id(
    old: str, new: str, changed_index: int
) -> None:
    before = _ids(PAGE)
    assert old in PAGE
    after = _ids(PAGE.replace(old, new, 1))
    assert len(before) == len(after)
    differing = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert differing == [changed_index]


def test_volatile_text_does_not_change_ids() -> None:
    page = PAGE + "\nLast updated on Jan 5, 2026.\n"
    later = PAGE + "\nLast updated on Nov 29, 2026.\n"
    assert _ids(page) == _ids(later)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"canonical_url": URL + "other/"},
        {"breadcrumbs": ["Docs", "Identity"]},
    ],
)
def test_ids_change_with_url_and_label(kwargs: dict[str, Any]) -> None:
    assert not set(_ids(PAGE)) & set(_ids(PAGE, **kwargs))


def test_identical_chunks_in_one_page_get_distinct_ids() -> None:
    section = f"## Example\n\n{words(300, 'same')}"
    records = chunks(f"# Top\n\n{words(300, 'top')}\n\n{section}\n\n{section}")
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)) == 3


def test_chunk_id_rule() -> None:
    base = chunk_id(URL, ["A", "B"], "label\nbody")
    assert base == chunk_id(URL, ["A", "B"], "label\nbody  \n\n\n")  # whitespace noise
    assert base != chunk_id(URL, ["A"], "label\nbody")
    assert base != chunk_id(URL, ["A", "B"], "label\nbody", occurrence=1)


@pytest.mark.parametrize(
    ("paragraphs", "size", "expected_chunks"),
    [(10, 49, 2), (9, 49, 2), (17, 49, 3), (4, 150, 2)],
)
def test_long_section_is_split_into_about_equal_chunks(
    paragraphs: int, size: int, expected_chunks: int
) -> None:
    page = "\n\n".join(words(size, f"q{i}z") for i in range(paragraphs))
    records = chunks(page, target_tokens=400, breadcrumbs=[])
    sizes = [r["token_count"] for r in records]
    assert len(records) == expected_chunks
    assert max(sizes) - min(sizes) <= size + 2  # at most one paragraph apart


API_PAGE = (
    f"# API {{#api}}\n\n{words(380, 'big')}\n\n"
    + "\n\n".join(f"## member_{i} {{#m{i}}}\n\nReturns item {i}." for i in range(40))
    + "\n\n" + "\n\n".join(f"## Topic {i} {{#t{i}}}\n\n{words(60 + 20 * i, f't{i}x')}"
                           for i in range(4))
)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Returns item 3.", "Returns item three."),  # a tiny section inside a shared run
        ("Returns item 39.", "Returns item 39 or none."),  # the run's last member
        ("t1x5", "t1x5 and more"),  # a short sibling standing alone
        ("t3x0", "T3X0"),  # the last short sibling
        ("t1x5", "t1x5 " + words(150, "grown")),  # a sibling grows: its neighbours keep ids
    ],
)
def test_edit_in_a_short_section_changes_only_the_chunk_holding_it(old: str, new: str) -> None:
    before = chunks(API_PAGE)
    after = chunks(API_PAGE.replace(old, new, 1))
    assert old in API_PAGE and len(before) == len(after)
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a["id"] != b["id"]]
    assert len(changed) == 1
    assert new in after[changed[0]]["markdown"]
