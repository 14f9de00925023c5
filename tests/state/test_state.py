"""The state database: pages, aliases, runs; refusal of corrupt or foreign files; migration."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest

from docscrawl.incremental.carry import copied_lines
from docscrawl.incremental.rows import LinePointer
from docscrawl.incremental.schema import APPLICATION_ID, SCHEMA_VERSION
from docscrawl.incremental.state import DB_NAME, StateError, StateStore

URL = "https://docs.example.test/guide/"


def page(store: StateStore, url: str = URL, run: str = "r1", **kwargs: Any) -> None:
    values: dict[str, Any] = {
        "etag": '"abc"', "last_modified": "Wed, 01 May 2024 10:00:00 GMT",
        "content_hash": "sha256:c1", "chunk_ids": ["sha256:a", "sha256:b"],
        "observed_urls": [url + "index.html", url.rstrip("/")], "body_hash": "sha256:body",
        "discovery_links": [(url + "genindex.html", "primary_navigation", 0)],
    }
    values.update(kwargs)
    store.upsert_page(url, run_id=run, **values)


POINTER = LinePointer(0, 10, 200, 0, 150, 4000, 90, 123456)


def point(store: StateStore, tmp_path: Path, url: str = URL, chunks: int = 2) -> int:
    """Index a (pretend) published run holding the page's lines."""
    return store.set_lines(tmp_path / "run", {"pages.jsonl": 1}, [(url, POINTER, chunks)])[0]


def to_schema(path: Path, version: int, copies: dict[str, tuple[str, str, str]]) -> None:
    """Turn a current database back into the layout of schema `version` (3 or older),
    with the copies of the lines that schema kept (`copies`: URL -> page line, chunk
    lines, structure line)."""
    conn = sqlite3.connect(path)
    for url, (record, chunks, structure) in copies.items():
        conn.execute("UPDATE pages SET page_record = ?, chunk_records = ?, structure_record = ?"
                     " WHERE canonical_url = ?", (record, chunks, structure, url))
    for url, links in conn.execute("SELECT canonical_url, discovery_links FROM pages"
                                   " WHERE discovery_links IS NOT NULL").fetchall():
        conn.execute("UPDATE pages SET discovery_links = ? WHERE canonical_url = ?",
                     (zlib.decompress(links).decode(), url))  # schema 3 kept JSON text
    conn.execute("DROP TABLE sources")
    for column in ("source", "page_at", "page_len", "structure_at", "structure_len",
                   "chunks_at", "chunks_len", "lines_crc"):
        conn.execute(f"ALTER TABLE pages DROP COLUMN {column}")
    if version < 3:
        conn.execute("ALTER TABLE pages DROP COLUMN discovery_links")
    if version < 2:
        conn.execute("ALTER TABLE pages DROP COLUMN structure_record")
    conn.execute("UPDATE docscrawl_schema SET version = ?", (version,))
    conn.commit()
    conn.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_creates_database_with_schema_version(tmp_path: Path) -> None:
    with StateStore.open(tmp_path / "state") as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store.path == tmp_path / "state" / DB_NAME
    conn = sqlite3.connect(tmp_path / "state" / DB_NAME)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()


def test_page_round_trip_and_lookup_by_any_observed_url(tmp_path: Path) -> None:
    with StateStore.open(tmp_path) as store:
        assert store.get(URL) is None
        page(store)
    with StateStore.open(tmp_path) as store:  # survives reopening
        for url in (URL, URL + "index.html", URL.rstrip("/")):
            row = store.get(url)
            assert row is not None and row.canonical_url == URL
        assert store.canonical_for(URL + "index.html") == URL
        assert store.canonical_for("https://docs.example.test/other/") is None
        row = store.get(URL)
        assert row is not None
        assert (row.etag, row.content_hash, row.last_seen_run) == ('"abc"', "sha256:c1", "r1")
        assert row.body_hash == "sha256:body"
        assert row.chunk_ids == ["sha256:a", "sha256:b"]
        assert row.lines is None and not row.can_carry_over  # not published yet
        assert row.discovery_links == [(URL + "genindex.html", "primary_navigation", 0)]
        assert point(store, tmp_path) == 1
        row = store.get(URL)
        assert row is not None and row.can_carry_over
        assert row.lines is not None and row.lines.page_at == POINTER.page_at
        assert row.lines.crc == POINTER.crc and row.lines.chunks_len == POINTER.chunks_len
        source = store.source(row.lines.source)
        assert source == (tmp_path / "run", {"pages.jsonl": 1})
        page(store, content_hash="sha256:c9")  # extracted again: the old lines are not it
        row = store.get(URL)
        assert row is not None and row.lines is None and not row.can_carry_over


def test_a_newer_run_replaces_the_older_ones(tmp_path: Path) -> None:
    """Rows the newer published run does not hold lose their pointer (the older run is
    no longer the output); the older runs are returned, to be released."""
    other = "https://docs.example.test/other/"
    with StateStore.open(tmp_path) as store:
        page(store)
        page(store, url=other)
        both = [(URL, POINTER, 2), (other, POINTER, 2)]
        assert store.set_lines(tmp_path / "run1", {}, both) == (2, [])
        pointed, older = store.set_lines(tmp_path / "run2", {}, [(other, POINTER, 2)])
        assert (pointed, older) == (1, [tmp_path / "run1"])
        row = store.get(URL)
        assert row is not None and row.lines is None
        row = store.get(other)
        assert row is not None and row.lines is not None
        assert store.source(row.lines.source) == (tmp_path / "run2", {})


def test_lines_need_as_many_chunks_as_the_state_has_ids(tmp_path: Path) -> None:
    with StateStore.open(tmp_path) as store:
        page(store)
        assert point(store, tmp_path, chunks=3) == 0  # the output has another page
        row = store.get(URL)
        assert row is not None and row.lines is None


def test_chunk_ids_are_stored_as_digests_and_schema_4_rows_read_as_before(
        tmp_path: Path) -> None:
    """sha256 ids as 32 raw bytes each (a list with any other id as JSON text); a row of
    schema 4 keeps its JSON text, read and counted as before."""
    ids = ["sha256:" + hashlib.sha256(str(n).encode()).hexdigest() for n in range(3)]
    other = "https://docs.example.test/other/"
    with StateStore.open(tmp_path) as store:
        page(store, chunk_ids=ids)
        page(store, url=other, chunk_ids=[*ids, "sha256:short"])
    conn = sqlite3.connect(tmp_path / DB_NAME)
    stored = dict(conn.execute("SELECT canonical_url, chunk_ids FROM pages"))
    assert stored[URL] == b"".join(bytes.fromhex(i[7:]) for i in ids)
    assert json.loads(stored[other]) == [*ids, "sha256:short"]
    conn.execute("UPDATE pages SET chunk_ids = ? WHERE canonical_url = ?", (json.dumps(ids), URL))
    conn.execute("UPDATE docscrawl_schema SET version = 4")
    conn.commit()
    conn.close()
    with StateStore.open(tmp_path) as store:
        assert store.schema_version == SCHEMA_VERSION == 5
        for url, expected in ((URL, ids), (other, [*ids, "sha256:short"])):
            row = store.get(url)
            assert row is not None and row.chunk_ids == expected
        assert point(store, tmp_path, chunks=2) == 0 and point(store, tmp_path, chunks=3) == 1
        page(store, chunk_ids=ids)  # written again: as digests
        assert point(store, tmp_path, chunks=4) == 0 and point(store, tmp_path, chunks=3) == 1
        row = store.get(URL)
        assert row is not None and row.chunk_ids == ids
        point(store, tmp_path, url=other, chunks=4)
        row = store.get(other)
        assert row is not None and row.lines is not None


def test_move_keeps_the_row_and_its_aliases(tmp_path: Path) -> None:
    new = "https://docs.example.test/guide/index.html"
    with StateStore.open(tmp_path) as store:
        page(store, observed_urls=[URL + "?a=1"])
        point(store, tmp_path)
        store.move(URL, new, "r2")
        assert store.canonical_for(URL) == new and store.canonical_for(URL + "?a=1") == new
        row = store.get(new)
        assert row is not None and row.content_hash == "sha256:c1"
        assert row.last_seen_run == "r2" and row.lines is None  # looked up under `new`
        assert row.discovery_links == [(URL + "genindex.html", "primary_navigation", 0)]
        store.move("https://docs.example.test/unknown/", new, "r2")  # nothing to move
        assert store.get(new) is not None


def test_upsert_replaces_and_aliases_follow_the_latest_canonical(tmp_path: Path) -> None:
    other = "https://docs.example.test/guide/v2/"
    with StateStore.open(tmp_path) as store:
        page(store)
        page(store, url=other, observed_urls=[URL + "index.html"], content_hash="sha256:c2")
        assert store.canonical_for(URL + "index.html") == other
        page(store, content_hash="sha256:c3", chunk_ids=["sha256:z"], run="r2")
        row = store.get(URL)
        assert row is not None and row.content_hash == "sha256:c3"
        assert row.chunk_ids == ["sha256:z"] and row.last_seen_run == "r2"
        assert store.count() == 2


@pytest.mark.parametrize(
    ("etag", "modified", "expected"),
    [
        (None, None, ('"abc"', "Wed, 01 May 2024 10:00:00 GMT")),  # 304 without validators
        ('"new"', None, ('"new"', "Wed, 01 May 2024 10:00:00 GMT")),
        ('"new"', "Thu, 02 May 2024 10:00:00 GMT", ('"new"', "Thu, 02 May 2024 10:00:00 GMT")),
    ],
)
def test_mark_seen_keeps_or_updates_validators(
    tmp_path: Path, etag: str | None, modified: str | None, expected: tuple[str, str]
) -> None:
    with StateStore.open(tmp_path) as store:
        page(store)
        assert store.mark_seen(URL, "r2", etag=etag, last_modified=modified,
                               observed_urls=[URL + "?x=1"])
        row = store.get(URL + "?x=1")
        assert row is not None and row.last_seen_run == "r2"
        assert (row.etag, row.last_modified) == expected
        assert row.content_hash == "sha256:c1"  # nothing else touched
        assert row.body_hash == "sha256:body"
        assert not store.mark_seen("https://docs.example.test/unknown/", "r2")


def test_unseen_and_forget(tmp_path: Path) -> None:
    urls = [f"https://docs.example.test/p{i}/" for i in range(5)]
    with StateStore.open(tmp_path) as store:
        for url in urls:
            page(store, url=url, observed_urls=[url + "index.html"])
        page(store, url=urls[1], run="r2")
        store.mark_seen(urls[3], "r2")
        assert store.unseen_canonicals("r2") == [urls[0], urls[2], urls[4]]
        assert [r.content_hash for r in store.unseen("r2")] == ["sha256:c1"] * 3
        assert store.forget([urls[0], urls[2], "https://docs.example.test/none/"]) == 2
        assert store.unseen_canonicals("r2") == [urls[4]]
        assert store.get(urls[0] + "index.html") is None


def test_runs_begin_resume_finish(tmp_path: Path) -> None:
    with StateStore.open(tmp_path) as store:
        run = store.begin_run()
        assert run.finished_at is None and run.complete is None
        assert store.begin_run(run.run_id) == run  # resumed after a kill: same run
        done = store.finish_run(run.run_id, complete=False)
        assert done.complete is False and done.finished_at is not None
        with pytest.raises(StateError, match="already finished"):
            store.begin_run(run.run_id)
        assert store.begin_run("my-run").run_id == "my-run"
        assert store.finish_run("my-run", complete=True).complete is True
        assert store.begin_run().run_id != run.run_id
        with pytest.raises(StateError, match="unknown run"):
            store.finish_run("nope", complete=True)


# ---- refusing what is not ours ----------------------------------------------------------


def _garbage(path: Path) -> None:
    path.write_bytes(b"this is not a database\n" * 100)


def _foreign(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO users VALUES (1, 'ann')")
    conn.commit()
    conn.close()


def _ours_plus_foreign_table(path: Path) -> None:
    StateStore.open(path.parent).close()
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER)")
    conn.commit()
    conn.close()


def _other_application(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 1234")
    conn.execute("CREATE TABLE pages (canonical_url TEXT)")
    conn.commit()
    conn.close()


def _newer_version(path: Path) -> None:
    StateStore.open(path.parent).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE docscrawl_schema SET version = ?", (SCHEMA_VERSION + 1,))
    conn.commit()
    conn.close()


def _damaged_pages(path: Path) -> None:
    with StateStore.open(path.parent) as store:
        for i in range(300):
            page(store, url=f"https://docs.example.test/p{i}/", etag="x" * 500)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    data = bytearray(path.read_bytes())
    page_size = 4096
    for start in range(page_size * 3, len(data) - page_size, page_size * 5):
        data[start : start + 64] = b"\xff" * 64  # clobber b-tree page headers
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_garbage, "not a SQLite database"),
        (_foreign, "not a docscrawl state database (tables: users)"),
        (_ours_plus_foreign_table, "not a docscrawl state database (tables: invoices)"),
        (_other_application, "belongs to another application"),
        (_newer_version, "newer than this docscrawl"),
        (_damaged_pages, "is corrupt ("),
    ],
)
def test_refuses_and_never_overwrites(tmp_path: Path, make: Any, message: str) -> None:
    path = tmp_path / DB_NAME
    make(path)
    before = digest(path)
    with pytest.raises(StateError, match=re.escape(message)) as caught:
        StateStore.open(tmp_path)
    assert "-a state=" in str(caught.value)
    assert digest(path) == before
    assert not (tmp_path / (DB_NAME + "-wal")).exists()


def test_state_path_that_is_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / DB_NAME).mkdir()
    with pytest.raises(StateError, match="is a directory"):
        StateStore.open(tmp_path)


# ---- migration --------------------------------------------------------------------------


def _version_0(path: Path, *, extra_column: str = "") -> None:
    """The prototype layout (schema 0): no records, no run marks, no aliases, no runs."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE docscrawl_schema (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO docscrawl_schema VALUES (0)")
    conn.execute(
        "CREATE TABLE pages (canonical_url TEXT PRIMARY KEY, etag TEXT, last_modified TEXT,"
        f" content_hash TEXT, chunk_ids TEXT{extra_column})"
    )
    conn.execute("INSERT INTO pages VALUES (?, ?, ?, ?, ?" + (", NULL" if extra_column else "")
                 + ")", (URL, '"e0"', None, "sha256:old", '["sha256:k"]'))
    conn.execute("INSERT INTO pages (canonical_url) VALUES ('https://docs.example.test/x/')")
    conn.commit()
    conn.close()


def test_version_0_is_migrated(tmp_path: Path) -> None:
    _version_0(tmp_path / DB_NAME)
    with StateStore.open(tmp_path) as store:
        assert store.schema_version == SCHEMA_VERSION
        row = store.get(URL)
        assert row is not None
        assert (row.etag, row.content_hash, row.chunk_ids) == ('"e0"', "sha256:old", ["sha256:k"])
        assert not row.can_carry_over  # no stored record: extract in full once
        assert row.body_hash is None
        other = store.get("https://docs.example.test/x/")
        assert other is not None and other.chunk_ids == []
        page(store)  # v1 operations work on the migrated file
        assert store.begin_run("r9").run_id == "r9"
    with StateStore.open(tmp_path) as store:  # and it is now a current database
        assert store.schema_version == SCHEMA_VERSION


def test_version_1_rows_are_kept_but_extracted_once_more(tmp_path: Path) -> None:
    """Schema 1 stored no structure record: its pages keep their ids and validators but
    are not carried over (the next crawl extracts them and stores the structure)."""
    with StateStore.open(tmp_path) as store:
        page(store)
    to_schema(tmp_path / DB_NAME, 1, {URL: ('{"id":"p"}', '{"id":"a"}\n', "")})
    with StateStore.open(tmp_path) as store:
        assert store.schema_version == SCHEMA_VERSION
        row = store.get(URL)
        assert row is not None and row.content_hash == "sha256:c1"
        assert row.page_record_json is not None and row.structure_record_json is None
        assert not row.can_carry_over
        page(store)
        point(store, tmp_path)
        row = store.get(URL)
        assert row is not None and row.can_carry_over


def test_version_2_rows_are_kept_but_extracted_once_more(tmp_path: Path) -> None:
    """Schema 2 stored no discovery links (a carried-over page followed only its record's
    anchors, not its head links): its pages are extracted once more, then carried over."""
    with StateStore.open(tmp_path) as store:
        page(store)
    to_schema(tmp_path / DB_NAME, 2, {URL: ('{"id":"p"}', '{"id":"a"}\n', '{"page_id":"p"}')})
    with StateStore.open(tmp_path) as store:
        assert store.schema_version == SCHEMA_VERSION
        row = store.get(URL)
        assert row is not None and row.structure_record_json is not None
        assert row.discovery_links is None and not row.can_carry_over
        store.mark_seen(URL, "r2", discovery_links=[(URL + "a.html", "sidebar", 0)])
        row = store.get(URL)
        assert row is not None and row.can_carry_over
        assert row.discovery_links == [(URL + "a.html", "sidebar", 0)]


@pytest.mark.parametrize(
    "chunks",
    [[], [{"text": "line one\nline two", "label": "Ünïcode > 密钥"}], [{"a": 1}, {"b": [2]}]],
)
def test_version_3_copies_are_read_until_the_output_is_indexed(
        tmp_path: Path, chunks: list[Any]) -> None:
    """Schema 3 kept a copy of every line written: a migrated row is carried over from
    it (lines as they were written), until a published run is indexed."""
    record = '{"id":"sha256:p","canonical_url":"' + URL + '","title":"Ünïcode"}'
    chunk_lines = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in chunks)
    with StateStore.open(tmp_path) as store:
        page(store, chunk_ids=[f"sha256:{n}" for n in range(len(chunks))])
    to_schema(tmp_path / DB_NAME, 3, {URL: (record, chunk_lines, '{"page_id":"sha256:p"}')})
    with StateStore.open(tmp_path) as store:
        assert store.schema_version == SCHEMA_VERSION and store.copies() == 1
        assert sqlite3.connect(tmp_path / DB_NAME).execute(
            "SELECT typeof(discovery_links) FROM pages").fetchone() == ("blob",)  # packed
        row = store.get(URL)
        assert row is not None and row.can_carry_over and row.lines is None
        assert row.discovery_links == [(URL + "genindex.html", "primary_navigation", 0)]
        lines = copied_lines(row)
        assert lines is not None
        assert (lines.page, lines.chunks) == (record + "\n", chunk_lines)
        assert lines.structure == '{"page_id":"sha256:p"}\n'
        assert lines.chunk_count == len(chunks)
        assert point(store, tmp_path, chunks=len(chunks)) == 1
        assert store.copies() == 0  # the published output holds them now
        row = store.get(URL)
        assert row is not None and row.lines is not None and copied_lines(row) is None


def test_failed_migration_is_refused_with_instructions_and_rolled_back(tmp_path: Path) -> None:
    path = tmp_path / DB_NAME
    _version_0(path, extra_column=", page_record TEXT")  # clashes with the migration
    with pytest.raises(StateError, match="could not be migrated from schema 0 to 5") as caught:
        StateStore.open(tmp_path)
    assert "delete it for a full re-crawl" in str(caught.value)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT version FROM docscrawl_schema").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM pages").fetchone()[0] == 2
    conn.close()


def test_unknown_old_version_is_refused_with_instructions(tmp_path: Path) -> None:
    path = tmp_path / DB_NAME
    _version_0(path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE docscrawl_schema SET version = -1")
    conn.commit()
    conn.close()
    with pytest.raises(StateError, match=r"cannot be migrated: delete .* -a state=DIR"):
        StateStore.open(tmp_path)


@pytest.mark.parametrize(("given", "kept"), [(None, "sha256:body"), ("sha256:b2", "sha256:b2")])
def test_mark_seen_body_hash(tmp_path: Path, given: str | None, kept: str) -> None:
    with StateStore.open(tmp_path) as store:
        page(store)
        store.mark_seen(URL, "r2", body_hash=given)
        row = store.get(URL)
        assert row is not None and row.body_hash == kept
