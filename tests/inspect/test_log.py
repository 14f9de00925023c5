"""`docscrawl log`: aggregates, filters, JSON, and one-line errors on bad directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docscrawl.inspect.log import LogFilter, analyze_log, url_matches
from docscrawl.inspect.output import OutputDir, OutputError
from tests.inspect.conftest import docscrawl, event

pytestmark = pytest.mark.e2e


def test_log_shows_skip_rules_with_examples_failures_and_slowest(demo_out: Path) -> None:
    result = docscrawl("log", str(demo_out))
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "skip reasons" in text
    assert "rule Disallow: /docs/private/" in text
    assert "e.g. http://127.0.0.1:" in text and "/docs/private/secret.html" in text
    assert "http_404" in text and "/docs/broken.html" in text
    assert "slowest fetches" in text
    assert "rendered pages: 0" in text


def test_log_json_counts_match_run_json(demo_out: Path) -> None:
    result = docscrawl("log", str(demo_out), "--json")
    data = json.loads(result.stdout)
    run = json.loads((demo_out / "run.json").read_text())
    assert data["events"] == run["counts"]["events"]
    skips = {entry["reason"]: entry["count"] for entry in data["skips"]}
    assert skips == run["counts"]["skip_reasons"]
    robots = next(entry for entry in data["skips"] if entry["reason"] == "robots")
    assert robots["rules"][0]["rule"] == "Disallow: /docs/private/"
    assert robots["rules"][0]["examples"][0].endswith("/docs/private/secret.html")
    assert len(data["slowest"]) <= 10
    times = [item["elapsed_ms"] for item in data["slowest"]]
    assert times == sorted(times, reverse=True)


def test_log_filters_by_reason_event_and_url(demo_out: Path) -> None:
    data = json.loads(docscrawl("log", str(demo_out), "--reason", "robots", "--json").stdout)
    assert data["matches_total"] == 1
    assert data["matches"][0]["url"].endswith("/docs/private/secret.html")
    data = json.loads(docscrawl("log", str(demo_out), "--event", "failed", "--json").stdout)
    assert {m["event"] for m in data["matches"]} == {"failed"}
    assert data["events"] == {"failed": data["matches_total"]}
    data = json.loads(docscrawl("log", str(demo_out), "--url", "*/docs/guide/*",
                                "--event", "extracted", "--json").stdout)
    assert data["matches"] and all("/docs/guide/" in m["url"] for m in data["matches"])
    text = docscrawl("log", str(demo_out), "--url", "secret").stdout
    assert "matching events: 2" in text  # discovered, then skipped by robots
    assert "reason=robots" in text


def test_url_pattern_is_glob_or_substring() -> None:
    assert url_matches("*/api/*", "http://d/docs/api/x.html")
    assert not url_matches("*/api/", "http://d/docs/api/x.html")
    assert url_matches("api/x", "http://d/docs/api/x.html")


@pytest.mark.parametrize(("setup", "message"), [
    ("missing", "no such output directory"),
    ("no_run", "no run.json"),
    ("bad_run", "run.json: not valid JSON"),
    ("bad_line", "crawl_log.jsonl line 2: not a JSON object"),
    ("no_log", "no crawl_log.jsonl"),
])
def test_bad_output_directory_exits_2_with_one_line(
    tmp_path: Path, make_output, setup: str, message: str,
) -> None:
    out = tmp_path / "out"
    if setup == "no_run":
        out.mkdir()
    elif setup == "bad_run":
        out.mkdir()
        (out / "run.json").write_text("{not json")
    elif setup == "bad_line":
        make_output(log=[event("http://d/a", "discovered")])
        with (out / "crawl_log.jsonl").open("a") as handle:
            handle.write('{"ts": "x", "url"\n')
            handle.write(json.dumps(event("http://d/b", "discovered")) + "\n")
    elif setup == "no_log":
        make_output()
        (out / "crawl_log.jsonl").unlink()
    result = docscrawl("log", str(out))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("docscrawl: error: "), result.stderr
    assert message in lines[0]


def test_cut_short_last_line_is_ignored_with_a_note(make_output) -> None:
    out = make_output(log=[event("http://d/a", "discovered"), event("http://d/a", "skipped",
                                                                    reason="robots", rule="r")])
    with (out / "crawl_log.jsonl").open("a") as handle:
        handle.write('{"ts": "2026-01-01T00:00:01Z", "url": "http://d/b", "ev')  # killed here
    result = docscrawl("log", str(out), "--json")
    assert result.returncode == 0
    assert json.loads(result.stdout)["events"] == {"discovered": 1, "skipped": 1}
    assert "incomplete last line ignored" in result.stderr


def test_rendered_pages_listed_with_their_reason(make_output) -> None:
    out = make_output(log=[
        event("http://d/js", "discovered"),
        event("http://d/js", "fetched", status=200, elapsed_ms=5.0, fetch_mode="http"),
        event("http://d/js", "rendered", reason="sparse_text", status=200, elapsed_ms=900.0,
              fetch_mode="browser"),
        event("http://d/js", "extracted", status=200),
    ])
    data = analyze_log(OutputDir(out))
    assert data["rendered_total"] == 1
    assert data["rendered"][0]["reason"] == "sparse_text"
    assert [item["elapsed_ms"] for item in data["slowest"]] == [5.0]  # fetches only


def test_filters_apply_to_aggregates(make_output) -> None:
    out = make_output(log=[event("http://d/a", "skipped", reason="robots", rule="Disallow: /a"),
                           event("http://d/b", "skipped", reason="out_of_scope", rule="s")])
    data = analyze_log(OutputDir(out), LogFilter(reason="robots"))
    assert [entry["reason"] for entry in data["skips"]] == ["robots"]
    with pytest.raises(OutputError):
        OutputDir(out / "nope")


def test_progress_lines_go_to_stderr_for_long_reads(make_output) -> None:
    import io

    from docscrawl.inspect.output import Progress

    out = make_output(log=[event(f"http://d/{i}", "discovered") for i in range(1500)])
    stream = io.StringIO()
    progress = Progress(stream, interval=0.0)
    assert analyze_log(OutputDir(out, progress=progress))["urls_discovered"] == 1500
    lines = stream.getvalue().splitlines()
    assert lines and lines[0] == "docscrawl: crawl_log.jsonl: 500 lines read"
    quiet = io.StringIO()
    analyze_log(OutputDir(out, progress=Progress(quiet, enabled=False)))
    assert quiet.getvalue() == ""
