"""changes.jsonl lines: what a re-crawl added, changed, kept and removed (see the README).

Pure functions over `docscrawl.incremental.state` rows; no Scrapy.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from docscrawl.incremental.rows import Run, StateRow
from docscrawl.incremental.state import StateStore

CHANGE_KINDS = ("added", "changed", "unchanged", "removed")
# `removed_reason` of a page that no link of a complete crawl led to (the others name
# what the fetch said: `http_404`, `http_410`, or the skip reason of a redirect away).
UNREACHABLE = "unreachable"


class ChangeRecord(TypedDict):
    """One changes.jsonl line."""

    canonical_url: str
    change: str  # one of CHANGE_KINDS
    old_content_hash: str | None
    new_content_hash: str | None
    chunk_ids_to_add: list[str]
    chunk_ids_to_delete: list[str]
    removed_reason: NotRequired[str]  # `removed` only


def compute_change(
    old: StateRow | None,
    new_hash: str | None,
    new_chunk_ids: list[str],
    *,
    canonical_url: str | None = None,
    removed_reason: str | None = None,
) -> ChangeRecord:
    """One changes.jsonl line for a page (`removed_reason`: why a gone page is removed).

    `old` is the state row before this run (None: never seen); `new_hash` None means the page
    is gone (404/410, redirected away, unreachable in a complete crawl). A page whose hash
    is unchanged but whose chunk ids differ (chunk size or breadcrumbs changed) is `changed`.
    Ids to add keep the new order, ids to delete the old order.
    """
    url = canonical_url or (old.canonical_url if old is not None else None)
    if url is None:
        raise ValueError("compute_change needs canonical_url when there is no old row")
    old_ids = list(old.chunk_ids) if old is not None else []
    if old is None and new_hash is None:
        raise ValueError(f"{url}: neither an old row nor a new hash")
    if old is None:
        change, add, delete = "added", list(new_chunk_ids), []
    elif new_hash is None:
        change, add, delete = "removed", [], old_ids
    else:
        kept_old, kept_new = set(old_ids), set(new_chunk_ids)
        add = [i for i in new_chunk_ids if i not in kept_old]
        delete = [i for i in old_ids if i not in kept_new]
        same = new_hash == old.content_hash and not add and not delete
        change = "unchanged" if same else "changed"
    line: ChangeRecord = {
        "canonical_url": url,
        "change": change,
        "old_content_hash": old.content_hash if old is not None else None,
        "new_content_hash": new_hash,
        "chunk_ids_to_add": _unique(add),
        "chunk_ids_to_delete": _unique(delete),
    }
    if change == "removed":
        line["removed_reason"] = removed_reason or UNREACHABLE
    return line


def removed_pages(store: StateStore, run: Run | str, complete: bool) -> list[ChangeRecord]:
    """`removed` lines for pages known in state but not seen in `run`.

    An incomplete run (interrupted, `max_pages` or `max_depth` limited, failures that hid
    part of the site) never reports unreachable pages as removed: the result is empty.
    """
    if not complete:
        return []
    run_id = run.run_id if isinstance(run, Run) else run
    return [compute_change(row, None, [], removed_reason=UNREACHABLE)
            for row in store.unseen(run_id)]


def _unique(ids: list[str]) -> list[str]:
    return list(dict.fromkeys(ids))
