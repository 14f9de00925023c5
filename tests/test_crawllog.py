"""The crawl log keeps one terminal event per discovered URL and counts reasons."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from docscrawl.crawl.crawllog import CrawlLog, RedactingFilter
from docscrawl.jsonl import JsonlWriter


def test_terminal_invariant_and_counts(tmp_path: Path) -> None:
    log = CrawlLog(JsonlWriter(tmp_path / "log.jsonl"))
    log.discovered("https://d.example/a", {"reason": "seed", "from": None})
    log.discovered("https://d.example/b", {"reason": "in_page", "from": "https://d.example/a"})
    assert log.record("https://d.example/a", "fetched", status=200)
    assert log.record("https://d.example/a", "extracted", status=200)
    assert not log.record("https://d.example/a", "failed", reason="http_500")
    log.record("https://d.example/b", "skipped", reason="robots", rule="Disallow: /b")
    log.discovered("https://d.example/c", {"reason": "in_page", "from": None})
    assert log.close_open("crawl_closed", "crawl ended first") == 1
    log.close()
    lines = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [e["event"] for e in lines] == ["discovered", "discovered", "fetched", "extracted",
                                          "skipped", "discovered", "failed"]
    summary = log.summary()
    assert summary["skip_reasons"] == {"robots": 1}
    assert summary["failure_reasons"] == {"crawl_closed": 1}
    assert summary["open_at_end"] == 0
    assert set(lines[0]) >= {"ts", "url", "event", "reason", "rule", "discovery", "status",
                             "redirect_chain", "fetch_mode", "parser", "duplicate_of",
                             "elapsed_ms", "bytes"}


def test_dumps_line_with_pre_encoded_values_is_the_same_line() -> None:
    from docscrawl.jsonl import dumps_line, dumps_value

    shared = [{"url": "https://d.example/ü", "text": 'say "hi"\n'}]
    record = {"id": "p", "links": shared, "n": 1.5, "none": None, "nested": {"a": [1]}}
    encoded = {"links": dumps_value(shared)}
    assert dumps_line(record, encoded) == dumps_line(record)
    assert json.loads(dumps_line(record, encoded)) == record


def test_dumps_value_writes_what_json_dumps_writes() -> None:
    """`dumps_value` keeps one C encoder for every call: the text is `json.dumps`' with the
    same options, for every kind of value a record holds, and NaN is still refused."""
    import enum

    from docscrawl.jsonl import dumps_value

    class Kind(enum.StrEnum):
        PAGE = "page"

    class Count(enum.IntEnum):
        ONE = 1

    values: list[Any] = [
        "plain", 'say "hi"\n\x00\u2028ü😀', Kind.PAGE, 0, -7, 2**70, Count.ONE, True, None,
        1.5, 1e-07, 9.265066237858661e-05, 1e16, -0.0, [], {}, (1, "a"),
        {"k": [{"a": None, "b": [1.25, "x", Kind.PAGE]}], 3: "int key", None: 1},
        [[["deep"]]] * 3,
    ]
    for value in values:
        assert dumps_value(value) == json.dumps(value, ensure_ascii=False, allow_nan=False,
                                                separators=(",", ":"))
    for bad in (float("nan"), [float("inf")], {"x": object()}):
        with pytest.raises((ValueError, TypeError)):
            dumps_value(bad)


def test_rewrite_parses_only_the_leading_fields_and_keeps_the_rest(tmp_path) -> None:
    from docscrawl.crawl.updaters import PAGE_LEADING_FIELDS, page_updater
    from docscrawl.jsonl import dumps_line, rewrite_jsonl

    lead = {"id": "sha256:a", "canonical_url": "https://d.example/a", "observed_urls": [],
            "discovery": [], "sitemap_lastmod": None}
    page = {**lead, "markdown": 'x "}\n', "links": [{"url": "https://d.example/b"}]}
    other = {"canonical_url": "https://d.example/c", "id": "sha256:c", "markdown": "y"}
    path = tmp_path / "pages.jsonl"
    path.write_text(dumps_line(page) + dumps_line(other) + '{"torn', encoding="utf-8")
    grown = {"https://d.example/a2": {"observed_urls": ["https://d.example/a?x"],
                                     "discovery": [{"reason": "sidebar", "from": None}],
                                     "sitemap_lastmod": "2026-01-01"},
             "https://d.example/c": {"observed_urls": ["https://d.example/c/"]}}
    rewrite_jsonl(path, page_updater(grown, {"https://d.example/a": "https://d.example/a2"}),
                  fields=PAGE_LEADING_FIELDS)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2  # the torn line is dropped
    first, second = (json.loads(line) for line in lines)
    assert first == {**page, **grown["https://d.example/a2"], "canonical_url":
                     "https://d.example/a2", "id": first["id"]}
    assert first["id"] != page["id"]
    assert second == {**other, "observed_urls": ["https://d.example/c/"]}  # parsed whole


def test_rewrite_of_fields_inside_the_line_is_the_whole_line_rewritten(tmp_path) -> None:
    """`fields` need not open the line: the site's version given to pages written before it
    was known (`version_updater`'s fields, in the middle of a page line) and to their
    chunks (`metadata`, last). The lines come out as parsing and encoding them whole gives;
    lines the transform leaves alone are copied as they are."""
    from docscrawl.crawl.updaters import VERSION_FIELDS, chunk_version_updater
    from docscrawl.jsonl import dumps_line, rewrite_jsonl

    def page(n: int) -> dict[str, Any]:
        return {"id": f"sha256:{n}", "canonical_url": f"https://d.example/{n}",
                "final_url": f"https://d.example/{n}?", "title": 'a "}\n', "version":
                {"value": None, "status": "unversioned"}, "markdown": '"version":{}',
                "links": [{"url": "https://d.example/", "version": 1}]}

    def set_version(record: dict[str, Any]) -> dict[str, Any]:
        if record["final_url"].endswith("1?"):
            record["version"] = {"value": "2.0", "status": "site", "evidence": ["ü"]}
        return record

    pages = [page(n) for n in range(3)]
    path = tmp_path / "pages.jsonl"
    unusual = '{"id": "sha256:x", "final_url": "https://d.example/1?", "version": null}\n'
    path.write_text("".join(map(dumps_line, pages)) + unusual + '{"torn', encoding="utf-8")
    rewrite_jsonl(path, set_version, fields=VERSION_FIELDS)  # the third field is missing
    expected = [set_version(page(n)) for n in range(3)]
    assert path.read_text(encoding="utf-8") == "".join(map(dumps_line, expected)) + dumps_line(
        {"id": "sha256:x", "final_url": "https://d.example/1?", "version": expected[1]["version"]})

    chunks = [{"id": f"c{n}", "text": "}", "metadata": {"canonical_url": f"https://d.example/{n}",
                                                        "version": None, "title": "t"}}
              for n in range(3)]
    path = tmp_path / "chunks.jsonl"
    path.write_text("".join(map(dumps_line, chunks)), encoding="utf-8")
    update = chunk_version_updater({"https://d.example/2": {"value": "2.0"}})
    rewrite_jsonl(path, update, fields=("metadata",))
    chunks[2]["metadata"]["version"] = "2.0"
    assert path.read_text(encoding="utf-8") == "".join(map(dumps_line, chunks))


def test_lines_and_log_messages_never_show_url_credentials(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    log = CrawlLog(JsonlWriter(tmp_path / "log.jsonl"))
    url = "https://d.example/a"
    log.discovered(url, {"reason": "in_page", "from": "https://u:pw1@d.example/"})
    log.record(url, "skipped", reason="offsite_redirect",
               rule="redirect to https://u:pw2@else.example/", redirect_chain=["https://u:pw3@d.example/b"],
               redirect_to="https://u:pw4@else.example/")
    log.close()
    text = (tmp_path / "log.jsonl").read_text()
    assert "pw" not in text and text.count("***@") == 4
    logger = logging.getLogger("docscrawl.test.redaction")
    caplog.handler.addFilter(RedactingFilter())
    with caplog.at_level(logging.INFO):
        logger.info("Crawled <GET %s>", "https://u:pw5@d.example/")
        logger.info("plain https://u:pw6@d.example/ message")
    assert [r.getMessage() for r in caplog.records] == [
        "Crawled <GET https://***@d.example/>", "plain https://***@d.example/ message"]


def test_updates_in_turn_in_one_pass_write_what_one_rewrite_after_the_other_writes(
        tmp_path: Path) -> None:
    """The end of the crawl rewrites pages.jsonl once for grown records and renames
    (`page_updater`) and the site's version for pages written before it was known
    (`version_updater`): the lines of the two rewrites one after the other, also for a
    renamed page given its new canonical's version and title, a line without a version,
    one not written compactly and a torn one."""
    from docscrawl.crawl.updaters import (
        PAGE_LEADING_FIELDS,
        VERSION_FIELDS,
        page_updater,
        rewrite_in_turn,
        version_updater,
    )
    from docscrawl.extract.site_versions import SiteVersions
    from docscrawl.jsonl import dumps_line, rewrite_jsonl

    site = "https://d.example/"

    def page(n: int, **extra: Any) -> dict[str, Any]:
        return {"id": f"sha256:{n}", "canonical_url": f"{site}{n}", "observed_urls": [],
                "discovery": [], "sitemap_lastmod": None, "final_url": f"{site}{n}",
                "title": f"Page {n}", "version": {"value": None, "status": "unversioned"},
                "markdown": '"version":{} }\n', "links": [{"url": site}], **extra}

    lines = [dumps_line(page(n)) for n in range(6)]
    lines[4] = dumps_line({k: v for k, v in page(4).items() if k != "version"})
    lines.append('{"id": "sha256:9", "canonical_url": "https://d.example/9", "final_url": '
                 '"https://d.example/9", "version": null}\n')
    lines.append('{"id":"sha256:10","canonical_url":"https://d.exa')
    renames = {f"{site}1": f"{site}1b"}
    relabels = {f"{site}1b": {"version": {"value": "7", "status": "page"}, "title": "B"}}
    grown = {f"{site}{n}": {"observed_urls": [f"{site}{n}/"], "discovery": [],
                            "sitemap_lastmod": "2026-12-01"} for n in (0, 2, 4)}
    cold = {f"{site}{n}" for n in (1, 2, 3, 4, 9)}
    versions = SiteVersions(site)
    versions.restore({"pages": 88, "counts": [["title", "3.11", 88, "page title"]],
                      "established": [["title", "3.11", "page title"]], "home": []})
    assert versions.evidence()
    results = []
    for one_pass in (False, True):
        path = tmp_path / f"pages{one_pass}.jsonl"
        path.write_text("".join(lines), encoding="utf-8")
        updated: dict[str, dict[str, Any]] = {}
        updates = [(page_updater(grown, renames, relabels), PAGE_LEADING_FIELDS),
                   (version_updater(versions, cold, updated), VERSION_FIELDS)]
        if one_pass:
            rewrite_in_turn(path, updates)
        else:
            for transform, fields in updates:
                rewrite_jsonl(path, transform, fields=fields)
        results.append((path.read_text(encoding="utf-8"), updated))
    assert results[0] == results[1]
    text, updated = results[1]
    assert set(updated) == {f"{site}{n}" for n in ("1b", 2, 3, 4, 9)}
    assert text.count('"status":"inferred"') == 5 and '"2026-12-01"' in text
    assert "sha256:10" not in text


def test_text_lines_are_the_lines_a_text_mode_file_gives(tmp_path: Path) -> None:
    """`jsonl.text_lines` (binary reads, the rewrites' and the link graph's passes) splits
    and translates newlines as `open(path, encoding="utf-8")` does: `\\r\\n` and a lone
    `\\r` too, a last line without a newline, non-ASCII text."""
    import random

    from docscrawl.jsonl import text_lines

    path = tmp_path / "lines.jsonl"
    pieces = ['{"a": 1}', "x", "\r", "\n", "\r\n", "é", "\n\n", "\r\r\n", "}"]
    rng = random.Random(5)
    for _ in range(500):
        path.write_bytes("".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
                         .encode())
        with path.open(encoding="utf-8") as handle:
            assert list(text_lines(path)) == list(handle)
