"""End to end: `scrapy crawl docs` over the demo site, served on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import NotRequired, get_origin, get_type_hints

import pytest

from docscrawl.chunking.chunker import ChunkMetadata, ChunkRecord
from docscrawl.crawl.crawllog import CrawlEvent
from docscrawl.demo.run import DEMO_MAX_BYTES
from docscrawl.demo.server import FixtureServer
from docscrawl.export.records import PageRecord, StructureRecord
from tests.conftest import CrawlOutput, assert_log_invariants, crawl, read_jsonl

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def demo(demo_site: FixtureServer, tmp_path_factory: pytest.TempPathFactory) -> CrawlOutput:
    out = tmp_path_factory.mktemp("demo") / "out"
    start = len(demo_site.requests)
    # as `make demo` crawls it (docscrawl.demo.run)
    output = crawl(f"{demo_site.url}/docs/", out,
                   settings={"DOWNLOAD_MAXSIZE": str(DEMO_MAX_BYTES)})
    output.requests = demo_site.requests[start:]  # type: ignore[attr-defined]
    return output


def test_every_discovered_url_ends_once_and_contract_holds(demo: CrawlOutput) -> None:
    assert_log_invariants(demo)
    assert demo.run["status"] == "finished"
    assert demo.run["complete"] is True


def test_pending_requests_wait_in_disk_queues(demo: CrawlOutput) -> None:
    stats = demo.result.stderr
    assert "'scheduler/enqueued/disk'" in stats
    assert "'scheduler/enqueued/memory'" not in stats


def test_robots_disallowed_url_is_skipped_with_its_rule_and_never_fetched(
    demo: CrawlOutput,
) -> None:
    event = demo.terminal("/docs/private/secret.html")
    assert (event["event"], event["reason"], event["rule"]) == (
        "skipped", "robots", "Disallow: /docs/private/")
    fetched_paths = [path for _, path, _, _ in demo.requests]  # type: ignore[attr-defined]
    assert "/docs/private/secret.html" not in fetched_paths
    assert demo.terminal("/docs/private/public.html")["event"] == "extracted"
    agents = {agent for _, _, agent, _ in demo.requests}  # type: ignore[attr-defined]
    assert all(agent.startswith("docscrawl/") for agent in agents)


def test_sitemap_index_with_gzip_child_and_lastmod(demo: CrawlOutput) -> None:
    orphan = demo.page("/docs/guide/orphan.html")
    assert orphan["discovery"][0]["reason"] == "robots_sitemap"
    assert orphan["discovery"][0]["from"].endswith("/sitemap-guide.xml")
    assert orphan["sitemap_lastmod"] == "2026-10-02"
    client = demo.page("/docs/api/client.html")
    reasons = {(d["reason"], (d["from"] or "").rsplit("/", 1)[-1]) for d in client["discovery"]}
    assert ("robots_sitemap", "sitemap-api.xml.gz") in reasons
    assert client["sitemap_lastmod"] == "2026-11-22"


def test_llms_txt_links_are_discovered(demo: CrawlOutput) -> None:
    extra = demo.page("/docs/guide/extra.html")
    assert [d["reason"] for d in extra["discovery"]] == ["llms_txt"]


def test_links_are_labelled_by_region(demo: CrawlOutput) -> None:
    install = demo.page("/docs/guide/install.html")
    reasons = {d["reason"] for d in install["discovery"]}
    assert {"sidebar", "pagination", "robots_sitemap", "redirect"} <= reasons


def test_aliases_redirects_and_latest_become_one_page(demo: CrawlOutput) -> None:
    guide = demo.page("/docs/guide/")
    assert any(u.endswith("/docs/guide/index.html") for u in guide["observed_urls"])
    install = demo.page("/docs/guide/install.html")
    observed = install["observed_urls"]
    assert any(u.endswith("/docs/old-install.html") for u in observed)
    assert any(u.endswith("/docs/latest/guide/install.html") for u in observed)
    # Whichever was fetched first holds the content; the canonical is the preferred URL.
    assert install["canonical_url"].endswith("/docs/guide/install.html")
    pair = [demo.terminal("/docs/latest/guide/install.html"),
            demo.terminal("/docs/guide/install.html")]
    assert sorted(e["event"] for e in pair) == ["duplicate", "extracted"]
    alias = next(e for e in pair if e["event"] == "duplicate")
    assert alias["duplicate_of"] == install["canonical_url"]
    extracted = next(e for e in pair if e["event"] == "extracted")
    assert extracted["page_id"] == install["id"]
    redirect = demo.terminal("/docs/old-install.html")
    assert redirect["event"] == "duplicate" and redirect["status"] == 301
    canonicals = [p["canonical_url"] for p in demo.pages]
    assert len(canonicals) == len(set(canonicals))


def test_redirected_page_keeps_its_chain(demo: CrawlOutput) -> None:
    install = demo.page("/docs/guide/install.html")
    # The sidebar link reached it directly; the redirect added an alias and a reason.
    assert {"reason": "redirect", "from": install["canonical_url"].replace(
        "/guide/install.html", "/old-install.html")} in install["discovery"]


def test_other_versions_are_never_merged(demo: CrawlOutput) -> None:
    old = demo.page("/docs/3.6/guide/install.html")
    current = demo.page("/docs/guide/install.html")
    assert old["content_hash"] == current["content_hash"]
    assert old["id"] != current["id"]


def test_tracking_parameters_are_duplicate_urls(demo: CrawlOutput) -> None:
    tracked = demo.terminal("/docs/guide/configure.html?utm_source=sidebar&utm_medium=nav")
    plain = demo.terminal("/docs/guide/configure.html")
    duplicate = [e for e in (tracked, plain) if e["event"] == "skipped"]
    assert len(duplicate) == 1
    assert duplicate[0]["reason"] == "duplicate_url"
    assert duplicate[0]["rule"].endswith("/docs/guide/configure.html")
    configure = demo.page("/docs/guide/configure.html")
    assert any("utm_source" in u for u in configure["observed_urls"])
    assert configure["fetched_url"].endswith("/docs/guide/configure.html")


def test_file_canonical_is_ignored_with_a_warning(demo: CrawlOutput) -> None:
    configure = demo.page("/docs/guide/configure.html")
    assert configure["canonical_url"].startswith("http://127.0.0.1")
    assert any(w["code"] == "canonical_ignored" for w in configure["warnings"])


@pytest.mark.parametrize(("suffix", "event", "reason"), [
    ("/blog/post.html", "skipped", "out_of_scope"),
    ("/docs/manual.pdf", "skipped", "non_html"),
    ("/docs/download", "skipped", "non_html"),
    ("/docs/huge.html", "skipped", "too_large"),
    ("/docs/moved/", "skipped", "offsite_redirect"),
    ("/docs/broken.html", "failed", "http_404"),
])
def test_policy_outcomes(demo: CrawlOutput, suffix: str, event: str, reason: str) -> None:
    outcome = demo.terminal(suffix)
    assert (outcome["event"], outcome["reason"]) == (event, reason)
    if event == "skipped":
        assert outcome["rule"]


def test_pages_carry_identity_fetch_and_markdown(demo: CrawlOutput) -> None:
    install = demo.page("/docs/guide/install.html")
    # The record holds whichever alias was fetched first: /docs/ or /docs/latest/.
    assert install["title"] in {"Installing Acme — Acme Docs 2.0 documentation",
                                "Installing Acme — Acme Docs latest documentation"}
    assert install["final_url"] in install["observed_urls"]
    assert install["http"]["status"] == 200
    assert install["fetch_mode"] == "http"
    assert install["markdown"].startswith("# Installing Acme\n")
    assert "$ python3 -m venv .venv\n$ .venv/bin/pip install acme\n" in install["markdown"]
    assert "View page source" not in install["markdown"]
    assert install["content_hash"].startswith("sha256:")
    assert install["id"].startswith("sha256:")


def test_run_json_counts_events_and_skip_reasons(demo: CrawlOutput) -> None:
    counts = demo.run["counts"]
    assert counts["events"]["extracted"] == len(demo.pages)
    assert counts["skip_reasons"]["robots"] >= 1
    logged = sum(1 for e in demo.log if e["event"] == "skipped")
    assert sum(counts["skip_reasons"].values()) == logged


def test_progress_lines_are_logged(demo: CrawlOutput) -> None:
    assert "docscrawl progress:" in demo.result.stderr


def test_output_lands_in_out_dir(demo: CrawlOutput, tmp_path: Path) -> None:
    for name in ("pages.jsonl", "chunks.jsonl", "structure.jsonl", "crawl_log.jsonl",
                 "run.json"):
        assert (demo.out / name).is_file()


def test_meta_refresh_is_a_redirect(demo: CrawlOutput) -> None:
    event = demo.terminal("/docs/guide/setup.html")
    assert (event["event"], event["reason"]) == ("duplicate", "meta_refresh")
    install = demo.page("/docs/guide/install.html")
    assert any(u.endswith("/docs/guide/setup.html") for u in install["observed_urls"])



def _keys(record_type: type) -> tuple[set[str], set[str]]:
    """(required, optional) fields of a TypedDict; `NotRequired[...]` read from its type
    hints (under `from __future__ import annotations` Python 3.11 counts them required)."""
    hints = get_type_hints(record_type, include_extras=True)
    optional = {name for name, hint in hints.items() if get_origin(hint) is NotRequired}
    optional |= set(record_type.__optional_keys__)  # type: ignore[attr-defined]
    return set(hints) - optional, optional


@pytest.mark.parametrize(("name", "record_type"), [
    ("pages.jsonl", PageRecord), ("structure.jsonl", StructureRecord),
    ("chunks.jsonl", ChunkRecord), ("crawl_log.jsonl", CrawlEvent),
])
def test_written_lines_have_the_fields_their_type_names(
    demo: CrawlOutput, name: str, record_type: type,
) -> None:
    """The record types (what mypy checks the code against) describe the real output: every
    field a line holds is named, every required one is there."""
    required, optional = _keys(record_type)
    lines = read_jsonl(demo.out / name)
    assert lines
    for line in lines:
        assert required <= line.keys() <= required | optional, (
            name, sorted(required - line.keys()), sorted(line.keys() - required - optional))


def test_written_chunk_metadata_has_the_fields_its_type_names(demo: CrawlOutput) -> None:
    required, optional = _keys(ChunkMetadata)
    for chunk in read_jsonl(demo.out / "chunks.jsonl"):
        meta = chunk["metadata"]
        assert required <= meta.keys() <= required | optional, (
            sorted(required - meta.keys()), sorted(meta.keys() - required - optional))
