"""Scrapyd: deploy with scrapyd-deploy, schedule the demo site twice, read the outputs.

Everything is real: scrapyd on a free 127.0.0.1 port from a temporary home directory
(deploy/scrapyd.conf), the egg built by scrapyd-deploy from scrapy.cfg's `env` target,
crawls scheduled through schedule.json against the demo site served on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

import pytest

from docscrawl.demo.server import FixtureServer
from tests.conftest import ROOT, read_jsonl
from tests.ops.conftest import BIN, DEPLOY, Scrapyd, get_json
from tests.support.authserver import (
    API_KEY,
    PASSWORD,
    SECRETS,
    USER,
    running_auth_server,
    secret_hits,
)
from tests.support.crawlcompare import generated_site

pytestmark = pytest.mark.e2e


def post(url: str, fields: list[tuple[str, str]]) -> dict[str, Any]:
    body = urllib.parse.urlencode(fields).encode()
    with urllib.request.urlopen(url, data=body, timeout=10) as response:
        return json.loads(response.read().decode("utf-8"))


def scrapyd_deploy(scrapyd: Scrapyd, project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "scrapyd-deploy"), "env", *args], cwd=project,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SCRAPYD_URL": scrapyd.url})


def ops(scrapyd: Scrapyd, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(DEPLOY / "scrapyd_ops.py"), "--url", scrapyd.url,
                           *args], cwd=ROOT, capture_output=True, text=True, timeout=180)


def wait_finished(scrapyd: Scrapyd, jobid: str, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = get_json(f"{scrapyd.url}/listjobs.json?project=docscrawl")
        for job in jobs["finished"]:
            if job["id"] == jobid:
                return job
        time.sleep(0.5)
    raise AssertionError(f"job {jobid} did not finish: {jobs}")


@pytest.fixture(scope="module")
def deployed(scrapyd: Scrapyd, project_copy: Path) -> dict[str, Any]:
    result = scrapyd_deploy(scrapyd, project_copy, "-v", "test-1")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout.strip().splitlines()[-1])  # addversion.json's answer
    assert answer["status"] == "ok", answer
    return answer


def schedule_twice(scrapyd: Scrapyd, site: str, root: Path, prefix: str,
                   *settings: str) -> dict[str, Any]:
    """Schedule two crawls of `site` one after the other; their jobs, run.json and logs."""
    out = root / f"127.0.0.1_{site.split(':')[2].split('/')[0]}"
    runs = []
    for jobid in (f"{prefix}-1", f"{prefix}-2"):
        answer = post(f"{scrapyd.url}/schedule.json", [
            ("project", "docscrawl"), ("spider", "docs"), ("jobid", jobid), ("site", site),
            ("setting", f"DOCSCRAWL_OUTPUT_ROOT={root}"),
            ("setting", "DOWNLOAD_MAXSIZE=100000"), ("setting", "DOCSCRAWL_PROGRESS_INTERVAL=1"),
            *(("setting", setting) for setting in settings)])
        assert answer == {"status": "ok", "jobid": jobid, "node_name": answer["node_name"]}
        job = wait_finished(scrapyd, jobid)
        runs.append({"job": job, "run": json.loads((out / "run.json").read_text()),
                     "log": read_jsonl(out / "crawl_log.jsonl")})
    return {"root": root, "out": out, "runs": runs}


@pytest.fixture(scope="module")
def two_runs(scrapyd: Scrapyd, deployed: dict[str, Any], demo_site: FixtureServer,
             tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    # One request at a time: both runs fetch the aliases of a page in the same order.
    # (With concurrency, see test_second_run_unchanged_with_concurrent_fetches.)
    return schedule_twice(scrapyd, f"{demo_site.url}/docs/",
                          tmp_path_factory.mktemp("output-root"), "nightly",
                          "CONCURRENT_REQUESTS=1")


def assert_second_run_unchanged(runs: list[dict[str, Any]]) -> None:
    """Run 2 reports every page of run 1 `unchanged` and extracts nothing."""
    second = runs[1]["log"]
    unchanged = [e for e in second if e["event"] == "unchanged"]
    assert unchanged, "run 2 logged no `unchanged` events"
    extracted = [e for e in second if e["event"] == "extracted"]
    assert not extracted, f"run 2 re-extracted unchanged pages: {extracted[:3]}"
    # every page of run 1 is reported unchanged (possibly reached through another alias)
    first_pages = {e["canonical_url"] for e in runs[0]["log"] if e["event"] == "extracted"}
    assert first_pages == {e.get("canonical_url") for e in unchanged}
    assert runs[1]["run"]["pages_written"] == len(first_pages)


def test_deploy_answer_lists_the_docs_spider(scrapyd: Scrapyd, deployed: dict) -> None:
    assert deployed["spiders"] == 1
    assert get_json(f"{scrapyd.url}/listspiders.json?project=docscrawl")["spiders"] == ["docs"]
    assert "test-1" in get_json(f"{scrapyd.url}/listversions.json?project=docscrawl")["versions"]


def test_both_scheduled_runs_finish_and_write_under_the_output_root(
    scrapyd: Scrapyd, two_runs: dict[str, Any],
) -> None:
    first, second = two_runs["runs"]
    for run in (first, second):
        assert run["run"]["status"] == "finished"
        assert run["run"]["complete"] is True
        assert run["run"]["pages_written"] >= 9
        assert Path(run["run"]["output"]["pages.jsonl"]).parent == two_runs["out"]
        log_file = scrapyd.home / "logs" / "docscrawl" / "docs" / f"{run['job']['id']}.log"
        assert log_file.is_file()
        assert "docscrawl progress" in log_file.read_text() or run["run"]["elapsed_s"] < 1
    assert second["run"]["started_at"] > first["run"]["finished_at"]
    assert not (scrapyd.home / "output").exists(), "output must not land in scrapyd's home"
    assert [p.name for p in two_runs["root"].iterdir()] == [two_runs["out"].name]


def test_second_run_reports_its_pages_unchanged(two_runs: dict[str, Any]) -> None:
    assert_second_run_unchanged(two_runs["runs"])


def test_second_run_unchanged_with_concurrent_fetches(
    scrapyd: Scrapyd, deployed: dict[str, Any], demo_site: FixtureServer, tmp_path: Path,
) -> None:
    runs = schedule_twice(scrapyd, f"{demo_site.url}/docs/", tmp_path, "concurrent")
    assert_second_run_unchanged(runs["runs"])


def test_extraction_workers_run_the_deployed_egg(
    scrapyd: Scrapyd, deployed: dict[str, Any], tmp_path: Path,
) -> None:
    """`DOCSCRAWL_EXTRACT_WORKERS=1` under Scrapyd: the worker imports the deployed egg the
    job runs, not the virtualenv's docscrawl, which `python -m docscrawl...` would find
    (`crawl.pool.boot_code`). A generated 80-page site: workers take pages once the
    template table has learned from its warm-up sample."""
    pages = 80
    with generated_site(tmp_path / "site", pages, seed=8) as server:
        answer = post(f"{scrapyd.url}/schedule.json", [
            ("project", "docscrawl"), ("spider", "docs"), ("jobid", "pooled"),
            ("site", f"{server.url}/"), ("setting", f"DOCSCRAWL_OUTPUT_ROOT={tmp_path}"),
            ("setting", "DOCSCRAWL_EXTRACT_WORKERS=1")])
        assert answer["status"] == "ok", answer
        wait_finished(scrapyd, "pooled")
    out = next(tmp_path.glob("127.0.0.1_*"))
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["status"] == "finished" and run["pages_written"] == pages
    log = (scrapyd.home / "logs" / "docscrawl" / "docs" / "pooled.log").read_text()
    started = [line for line in log.splitlines() if "extraction worker" in line]
    assert started and started[0].endswith(".egg)"), started
    in_workers = re.search(r"'docscrawl/pages_in_workers': (\d+)", log)
    assert in_workers and int(in_workers[1]) > 0


def test_docscrawl_commands_read_the_scrapyd_output(two_runs: dict[str, Any]) -> None:
    result = subprocess.run([str(BIN / "docscrawl"), "log", str(two_runs["out"])],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "rule Disallow: /docs/private/" in result.stdout


def test_helper_schedules_waits_and_reports(
    scrapyd: Scrapyd, deployed: dict, demo_site: FixtureServer, tmp_path: Path,
) -> None:
    result = ops(scrapyd, "schedule", "--site", f"{demo_site.url}/docs/", "--root",
                 str(tmp_path), "--setting", "DOWNLOAD_MAXSIZE=100000", "--jobid", "helper-1",
                 "--wait", "--timeout", "90")
    assert result.returncode == 0, result.stderr
    assert "scheduled job helper-1" in result.stdout
    assert "job helper-1: finished (finished), complete=True" in result.stdout
    bad = ops(scrapyd, "schedule", "--site", f"{demo_site.url}/docs/", "--root",
              str(tmp_path), "--arg", "max_pages=0", "--jobid", "helper-2", "--wait",
              "--timeout", "90")
    assert bad.returncode == 1
    assert "did not write" in bad.stderr and bad.stderr.count("\n") == 1
    # Scrapyd kept no log for a job stopped by a bad argument: the helper says where its
    # error is instead of pointing at a log that does not exist
    assert "log_url is null" in bad.stderr and "job='helper-2'" in bad.stderr
    assert "docscrawl: error: argument max_pages" in (scrapyd.home / "scrapyd.log").read_text()
    relative = ops(scrapyd, "schedule", "--site", f"{demo_site.url}/docs/", "--root", "out")
    assert relative.returncode == 1 and "absolute path" in relative.stderr


def test_failed_deploy_exits_0_but_says_error_and_helper_fails(
    scrapyd: Scrapyd, deployed: dict, project_copy: Path, tmp_path: Path,
) -> None:
    egg = tmp_path / "broken.egg"
    with zipfile.ZipFile(egg, "w") as archive:  # settings module that does not exist
        archive.writestr("EGG-INFO/PKG-INFO", "Metadata-Version: 1.0\nName: broken\nVersion: 1\n")
        archive.writestr("EGG-INFO/entry_points.txt", "[scrapy]\nsettings = nosuch.settings\n")
    result = scrapyd_deploy(scrapyd, project_copy, "-v", "broken-1", "--egg", str(egg))
    assert result.returncode == 0  # the pitfall the README warns about
    answer = json.loads(result.stdout.strip().splitlines()[-1])
    assert answer["status"] == "error" and "nosuch" in answer["message"]
    versions = get_json(f"{scrapyd.url}/listversions.json?project=docscrawl")["versions"]
    assert "broken-1" in versions  # ... and Scrapyd kept the broken egg
    post(f"{scrapyd.url}/delversion.json", [("project", "docscrawl"), ("version", "broken-1")])

    helper = ops(scrapyd, "deploy", "--version", "broken-2", "--egg", str(egg))
    assert helper.returncode == 1
    assert "Scrapyd refused version broken-2" in helper.stderr
    assert "deleted" in helper.stderr and "nosuch" in helper.stderr
    versions = get_json(f"{scrapyd.url}/listversions.json?project=docscrawl")["versions"]
    assert "broken-2" not in versions and versions[-1] == "test-1"


def test_helper_runs_outside_the_virtualenv(
    scrapyd: Scrapyd, deployed: dict, demo_site: FixtureServer, tmp_path: Path,
) -> None:
    """The system Python, isolated (no venv, no PYTHONPATH, a bare PATH), schedules, waits
    and reads run.json: the helper needs the standard library only."""
    python = Path(sys.base_prefix) / "bin" / "python3"
    env = {"PATH": "/usr/bin:/bin"}
    bare = subprocess.run([str(python), "-I", "-c", "import cssselect"], env=env,
                          capture_output=True, text=True)
    if bare.returncode == 0:
        pytest.skip(f"{python} has docscrawl's dependencies: not a bare interpreter")
    result = subprocess.run(
        [str(python), "-I", str(DEPLOY / "scrapyd_ops.py"), "--url", scrapyd.url, "schedule",
         "--site", f"{demo_site.url}/docs/", "--root", str(tmp_path), "--setting",
         "DOWNLOAD_MAXSIZE=100000", "--jobid", "bare-1", "--wait", "--timeout", "90"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    assert "job bare-1: finished (finished), complete=True" in result.stdout


def test_secrets_in_files_stay_out_of_scrapyd(
    scrapyd: Scrapyd, deployed: dict, tmp_path: Path,
) -> None:
    """A job given its credentials as files: the site gets them, and neither Scrapyd's
    answers (`listjobs.json`), its log, the job's log nor the crawl's files hold them."""
    secrets = tmp_path / "secrets"
    secrets.mkdir(mode=0o700)
    (secrets / "pass").write_text(f"{PASSWORD}\n", encoding="utf-8")
    (secrets / "header").write_text(f"X-Api-Key: {API_KEY}\n", encoding="utf-8")
    root, jobdir = tmp_path / "out", tmp_path / "job"
    with running_auth_server() as server:
        server.release.set()  # nothing held: this test pauses nothing
        answer = post(f"{scrapyd.url}/schedule.json", [
            ("project", "docscrawl"), ("spider", "docs"), ("jobid", "secret-1"),
            ("site", f"{server.url}/docs/"), ("render", "never"), ("http_user", USER),
            ("http_pass_file", str(secrets / "pass")),
            ("auth_header_file", str(secrets / "header")),
            ("setting", f"DOCSCRAWL_OUTPUT_ROOT={root}"), ("setting", f"JOBDIR={jobdir}")])
        assert answer["status"] == "ok", answer
        wait_finished(scrapyd, "secret-1")
        requests = list(server.requests)
    run = json.loads(next(root.glob("*/run.json")).read_text(encoding="utf-8"))
    assert run["status"] == "finished" and run["pages_written"] == 3, run
    assert requests and all(ok for _, ok in requests), requests
    with urllib.request.urlopen(f"{scrapyd.url}/listjobs.json?project=docscrawl") as jobs:
        listed = jobs.read().decode("utf-8")
    assert "secret-1" in listed
    logs = (scrapyd.home / "scrapyd.log").read_text() + (
        scrapyd.home / "logs" / "docscrawl" / "docs" / "secret-1.log").read_text()
    assert str(secrets / "pass") in logs  # Scrapyd logs the arguments: the path, not the secret
    assert not [s for s in SECRETS if s in listed + logs]
    assert secret_hits(root, jobdir) == []
