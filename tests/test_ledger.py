"""The crawl ledger: sets and content groups in a scratch SQLite database."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from docscrawl.crawl.ledger import LEDGER_PREFIX, ContentGroup, Ledger


def test_set_and_groups_round_trip(tmp_path: Path) -> None:
    ledger = Ledger.open(tmp_path / "ledger")
    closed = ledger.url_set("closed_urls")
    assert "https://d.example/a" not in closed
    closed.add("https://d.example/a")
    closed.add("https://d.example/a")
    closed |= ["https://d.example/b", "https://d.example/c"]  # one statement
    closed.discard("https://d.example/c")
    assert "https://d.example/a" in closed and "https://d.example/c" not in closed
    assert len(closed) == 2 and sorted(closed) == ["https://d.example/a", "https://d.example/b"]

    groups = ledger.content_groups()
    assert groups.get((None, "sha256:1")) is None
    groups.put((None, "sha256:1"), ContentGroup("https://d.example/a", declared=False))
    groups.put(("3.6", "sha256:1"), ContentGroup("https://d.example/3.6/a", declared=True))
    groups.setdefault((None, "sha256:1"), ContentGroup("https://d.example/other", True))
    assert groups.get((None, "sha256:1")) == ContentGroup("https://d.example/a", False)
    assert groups.get(("3.6", "sha256:1")) == ContentGroup("https://d.example/3.6/a", True)
    groups.put((None, "sha256:1"), ContentGroup("https://d.example/b", declared=True))
    assert groups.get((None, "sha256:1")) == ContentGroup("https://d.example/b", True)
    assert len(groups) == 2
    ledger.close()
    assert (tmp_path / "ledger" / "ledger.sqlite3").exists()  # a named directory is kept


def test_temporary_ledger_is_named_after_the_process_and_deleted(monkeypatch,
                                                                tmp_path: Path) -> None:
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    ledger = Ledger.open()
    assert ledger.directory.parent == tmp_path
    assert ledger.directory.name.startswith(f"{LEDGER_PREFIX}{os.getpid()}-")
    ledger.url_set("reported_pages").add("https://d.example/a")
    ledger.close()
    assert not ledger.directory.exists()


def test_table_names_are_checked(tmp_path: Path) -> None:
    ledger = Ledger.open(tmp_path)
    with pytest.raises(ValueError):
        ledger.url_set("x; DROP TABLE y")
    ledger.close()


def test_json_map_holds_json_values_by_key() -> None:
    ledger = Ledger.open()
    try:
        grown = ledger.json_map("grown_records")
        grown["https://a/"] = {"observed_urls": ["https://a/", "https://a/index.html"]}
        grown["https://b/"] = {"discovery": [{"reason": "nav", "from": None}]}
        assert grown["https://a/"]["observed_urls"][1] == "https://a/index.html"
        assert grown.get("https://c/") is None and "https://b/" in grown
        assert sorted(grown) == ["https://a/", "https://b/"] and len(grown) == 2
        del grown["https://a/"]
        with pytest.raises(KeyError):
            del grown["https://a/"]
        grown.clear()
        assert len(grown) == 0
    finally:
        ledger.close()


def test_late_ways_found_come_back_in_batch_order_and_go() -> None:
    ledger = Ledger.open()
    tracks = ledger.track_table()
    a, b = "https://d.example/a", "https://d.example/b"
    tracks.add_late([(a, 2, [("link", "https://d.example/x"), ("sidebar", None)]),
                     (b, 3, [("link", a)])])
    tracks.add_late([(a, 1, [("sitemap", None)]), (a, 7, [("link", b)])])
    assert list(tracks.late_for(a)) == [("sitemap", None), ("link", "https://d.example/x"),
                                        ("sidebar", None), ("link", b)]
    assert sorted(tracks.late_keys(10)) == [a, b]
    tracks.drop_late(a)
    assert list(tracks.late_for(a)) == [] and tracks.late_keys(10) == [b]
    ledger.close()
