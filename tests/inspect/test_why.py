"""`docscrawl why OUT URL` (or URL OUT): the history of one URL, or why it was never
discovered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docscrawl.inspect.output import OutputDir
from docscrawl.inspect.why import output_and_url, url_history
from tests.inspect.conftest import docscrawl, event, page

pytestmark = pytest.mark.e2e


def test_extracted_page_history_names_discovery_page_and_chunks(
    demo_out: Path, demo_origin: str,
) -> None:
    url = f"{demo_origin}/docs/api/client.html"
    result = docscrawl("why", url, str(demo_out), "--json")
    assert result.returncode == 0, result.stderr
    history = json.loads(result.stdout)
    assert history["discovered"] is True
    first = history["discovery"][0]
    assert first["reason"] in {"llms_txt", "sidebar", "in_page", "robots_sitemap"}
    kinds = [e["event"] for e in history["events"] if e["url"] == url]
    assert kinds[0] == "discovered" and "fetched" in kinds and kinds[-1] == "extracted"
    assert history["outcome"]["event"] == "extracted"
    [record] = history["pages"]
    assert record["canonical_url"] == url
    assert history["outcome"]["page_id"] == record["id"]
    pages = [json.loads(line) for line in (demo_out / "pages.jsonl").open()]
    assert record["id"] in {p["id"] for p in pages}
    chunks = [json.loads(line) for line in (demo_out / "chunks.jsonl").open()]
    assert history["chunk_count"] == sum(1 for c in chunks if c["page_id"] == record["id"])
    assert history["linked_from"], "sidebar links to the page are listed"
    text = docscrawl("why", url, str(demo_out)).stdout
    assert "outcome: extracted" in text and f"page {record['id']}" in text


def test_either_argument_order(demo_out: Path, demo_origin: str) -> None:
    """The README's `docscrawl why OUT URL` and the older `URL OUT` say the same."""
    url = f"{demo_origin}/docs/api/client.html"
    out_first = docscrawl("why", str(demo_out), url, "--json")
    url_first = docscrawl("why", url, str(demo_out), "--json")
    assert out_first.returncode == 0, out_first.stderr
    assert json.loads(out_first.stdout) == json.loads(url_first.stdout)
    assert json.loads(out_first.stdout)["outcome"]["event"] == "extracted"
    assert "why [-h] [--nearest N] [--json] OUT URL" in docscrawl("why", "--help").stdout


def test_which_argument_is_the_output(tmp_path: Path) -> None:
    crawl_dir, other = tmp_path / "out", tmp_path / "docs"
    crawl_dir.mkdir()
    other.mkdir()
    (crawl_dir / "run.json").write_text("{}")
    url = "https://docs.example.com/guide/"
    assert output_and_url(str(crawl_dir), url) == (crawl_dir, url)
    assert output_and_url(url, str(crawl_dir)) == (crawl_dir, url)
    # a relative URL that is also a directory here: the one holding run.json is the output
    assert output_and_url(str(other), str(crawl_dir)) == (crawl_dir, str(other))
    # neither exists: the one with a scheme is the URL, else OUT URL
    missing = tmp_path / "missing"
    assert output_and_url(url, str(missing)) == (missing, url)
    assert output_and_url(str(missing), "guide/x.html") == (missing, "guide/x.html")


def test_alias_spellings_and_the_region_of_discovery(demo_out: Path, demo_origin: str) -> None:
    url = f"{demo_origin}/docs/guide/configure.html"
    text = docscrawl("why", url, str(demo_out)).stdout
    assert "also seen as:" in text and "utm_source=sidebar" in text
    assert "in region sidebar_navigation" in text
    assert "outcome: skipped (duplicate_url)" in text
    assert "outcome of" in text and ": extracted" in text


def test_robots_refused_url_history(demo_out: Path, demo_origin: str) -> None:
    text = docscrawl("why", f"{demo_origin}/docs/private/secret.html", str(demo_out)).stdout
    assert "outcome: skipped (robots) rule 'Disallow: /docs/private/'" in text


def test_never_discovered_url_gets_rules_and_nearest_urls(
    demo_out: Path, demo_origin: str,
) -> None:
    result = docscrawl("why", f"{demo_origin}/docs/private/other.html", str(demo_out))
    assert result.returncode == 0
    text = result.stdout
    assert "never discovered in this crawl" in text
    assert "robots           REFUSED (robots)  Disallow: /docs/private/" in text
    assert "scope            allowed" in text
    nearest = text.split("nearest discovered URLs:")[1].split()
    assert nearest[0].endswith("/docs/private/secret.html") or nearest[0].endswith(
        "/docs/private/public.html")
    text = docscrawl("why", f"{demo_origin}/blog/other.html", str(demo_out)).stdout
    assert f"REFUSED (out_of_scope)  scope: {demo_origin}/docs/" in text
    text = docscrawl("why", f"{demo_origin}/docs/file.zip", str(demo_out)).stdout
    assert "non_html         REFUSED (non_html)  file extension .zip" in text


def test_rules_replay_deny_and_allow_from_run_json(make_output) -> None:
    out = make_output(
        log=[event("http://docs.example/v2/a.html", "discovered",
                   discovery={"reason": "seed", "from": None})],
        run={"arguments": {"site": "http://docs.example/v2/", "allow": [],
                           "deny": [r"/v2/internal/"]}})
    history = url_history(OutputDir(out), "http://docs.example/v2/internal/x.html")
    scope = next(rule for rule in history["rules"] if rule["check"] == "scope")
    assert (scope["allowed"], scope["reason"], scope["rule"]) == (
        False, "denied_by_rule", "/v2/internal/")
    robots = next(rule for rule in history["rules"] if rule["check"] == "robots")
    assert robots["allowed"] is None  # robots.txt never fetched for that origin


def test_unreachable_robots_refuses_everything(make_output) -> None:
    site = "http://docs.example/v2/"
    out = make_output(log=[
        event(site, "discovered", discovery={"reason": "seed", "from": None}),
        event("http://docs.example/robots.txt", "fetched", status=503, parser="robots"),
        event("http://docs.example/robots.txt", "failed", reason="robots_unreachable",
              status=503),
    ])
    history = url_history(OutputDir(out), "http://docs.example/v2/new.html")
    robots = next(rule for rule in history["rules"] if rule["check"] == "robots")
    assert robots["allowed"] is False and "unreachable" in robots["rule"]


def test_page_found_through_redirect_lists_its_page(make_output) -> None:
    old, new = "http://docs.example/v2/old.html", "http://docs.example/v2/new.html"
    record = page(new, observed_urls=[new, old])
    out = make_output(pages=[record], log=[
        event(old, "discovered", discovery={"reason": "in_page", "from": "http://docs.example/v2/"}),
        event(old, "duplicate", reason="redirect", duplicate_of=new, status=301),
        event(new, "extracted", status=200, page_id=record["id"], canonical_url=new),
    ], chunks=[{"id": "sha256:c1", "page_id": record["id"], "text": "t", "markdown": "t",
                "metadata": {}}])
    history = url_history(OutputDir(out), old)
    assert history["outcome"]["event"] == "duplicate"
    assert [p["id"] for p in history["pages"]] == [record["id"]]
    assert history["chunk_ids"] == ["sha256:c1"]
    assert history["discovery"][0]["from"] == "http://docs.example/v2/"
