"""`-a extract=off`: an inventory crawl (discovery, policies and the crawl log only)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from docscrawl.demo.server import FixtureServer
from docscrawl.incremental.state import DB_NAME
from tests.conftest import CrawlOutput, crawl

pytestmark = pytest.mark.e2e

TERMINAL = {"extracted", "duplicate", "unchanged", "skipped", "failed"}


def _outcomes(output: CrawlOutput) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for event in output.log:
        if event["event"] != "discovered":
            found.setdefault(event["url"], []).append(event["event"])
    return found


def _discovery(output: CrawlOutput) -> dict[str, Any]:
    return {e["url"]: e["discovery"] for e in output.log if e["event"] == "discovered"}


def _state_pages(out: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(out / DB_NAME) as conn:
        return sorted(conn.execute("SELECT canonical_url, content_hash FROM pages"))


def test_inventory_crawl_finds_what_the_full_crawl_finds_and_leaves_its_state_alone(
    demo_site: FixtureServer, tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    full = crawl(f"{demo_site.url}/docs/", out)
    state_before = _state_pages(out)
    assert state_before

    inventory = crawl(f"{demo_site.url}/docs/", out, "extract=off")

    assert inventory.run["extract"] is False and inventory.run["arguments"]["extract"] == "off"
    assert inventory.pages == []
    assert (out / "chunks.jsonl").read_text(encoding="utf-8") == ""
    # Same URLs discovered (which page finds one first depends on response order), and
    # every one ends once: a fetched HTML page with its `fetched` event, everything else
    # as in a full crawl.
    assert set(_discovery(inventory)) == set(_discovery(full))
    assert all(d and d["reason"] for d in _discovery(inventory).values())
    full_outcomes, inventory_outcomes = _outcomes(full), _outcomes(inventory)
    for url in _discovery(inventory):
        events = inventory_outcomes[url]
        ends = [e for e in events if e in TERMINAL]
        assert len(ends) <= 1, (url, events)
        if not ends:
            assert events[-1] == "fetched", (url, events)
            assert full_outcomes[url][-1] in {"extracted", "duplicate"}, (url, full_outcomes[url])
        else:
            assert ends == [e for e in full_outcomes[url] if e in TERMINAL], (url, events)
    # The full crawl's state is untouched; the inventory kept its own.
    assert _state_pages(out) == state_before
    assert (out / "inventory-state").is_dir()
    again = crawl(f"{demo_site.url}/docs/", out)
    changes = [json.loads(line) for line in (out / "changes.jsonl").read_text().splitlines()]
    assert changes and {c["change"] for c in changes} == {"unchanged"}
    assert len(again.pages) == len(full.pages)
