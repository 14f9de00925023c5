"""changes.jsonl lines: added, changed, unchanged, removed; never removed when incomplete."""

from __future__ import annotations

from pathlib import Path

import pytest

from docscrawl.incremental.changes import compute_change, removed_pages
from docscrawl.incremental.rows import StateRow
from docscrawl.incremental.state import StateStore

URL = "https://docs.example.test/guide/"


def row(content_hash: str = "sha256:old", ids: tuple[str, ...] = ("a", "b", "c")) -> StateRow:
    return StateRow(URL, None, None, content_hash, None, list(ids), "{}", "", "r1", None)


@pytest.mark.parametrize(
    ("old", "new_hash", "new_ids", "expected"),
    [
        (None, "sha256:new", ["a", "b"], ("added", None, ["a", "b"], [])),
        (row(), "sha256:old", ["a", "b", "c"], ("unchanged", "sha256:old", [], [])),
        (row(), "sha256:new", ["a", "x", "c"], ("changed", "sha256:old", ["x"], ["b"])),
        (row(), "sha256:new", ["c", "b", "a"], ("changed", "sha256:old", [], [])),  # reordered
        (row(), "sha256:new", [], ("changed", "sha256:old", [], ["a", "b", "c"])),
        (row(), "sha256:old", ["a", "b"], ("changed", "sha256:old", [], ["c"])),  # re-chunked
        (row(), None, [], ("removed", "sha256:old", [], ["a", "b", "c"])),
        (row(ids=("a", "a")), None, [], ("removed", "sha256:old", [], ["a"])),
    ],
)
def test_compute_change(
    old: StateRow | None, new_hash: str | None, new_ids: list[str],
    expected: tuple[str, str | None, list[str], list[str]],
) -> None:
    line = compute_change(old, new_hash, new_ids, canonical_url=URL)
    change, old_hash, add, delete = expected
    assert line == {
        "canonical_url": URL, "change": change, "old_content_hash": old_hash,
        "new_content_hash": new_hash, "chunk_ids_to_add": add, "chunk_ids_to_delete": delete,
        **({"removed_reason": "unreachable"} if change == "removed" else {}),
    }


@pytest.mark.parametrize(
    ("old", "new_hash", "kwargs"),
    [(None, "sha256:x", {}), (None, None, {"canonical_url": URL})],
)
def test_compute_change_rejects_impossible_input(
    old: StateRow | None, new_hash: str | None, kwargs: dict[str, str]
) -> None:
    with pytest.raises(ValueError):
        compute_change(old, new_hash, [], **kwargs)


@pytest.mark.parametrize(("complete", "removed"), [(True, ["p0", "p3"]), (False, [])])
def test_removed_pages_only_in_complete_runs(
    tmp_path: Path, complete: bool, removed: list[str]
) -> None:
    base = "https://docs.example.test/"
    with StateStore.open(tmp_path) as store:
        first = store.begin_run()
        for i in range(4):
            store.upsert_page(
                f"{base}p{i}", run_id=first.run_id, etag=None, last_modified=None,
                content_hash=f"sha256:{i}", chunk_ids=[f"c{i}"],
            )
        store.finish_run(first.run_id, complete=True)
        second = store.begin_run()
        store.mark_seen(f"{base}p1", second.run_id)
        store.upsert_page(
            f"{base}p2", run_id=second.run_id, etag=None, last_modified=None,
            content_hash="sha256:new", chunk_ids=["n2"],
        )
        lines = removed_pages(store, second, complete)
        assert [line["canonical_url"] for line in lines] == [base + p for p in removed]
        for line in lines:
            assert line["change"] == "removed" and line["new_content_hash"] is None
            assert line["chunk_ids_to_delete"] == ["c" + line["canonical_url"][-1]]
        assert removed_pages(store, second.run_id, complete) == lines  # run id works too
