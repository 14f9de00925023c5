"""Deploy docscrawl to Scrapyd and schedule crawls, failing loudly when something fails.

    python deploy/scrapyd_ops.py deploy [--version V]
    python deploy/scrapyd_ops.py schedule --site URL [--root DIR] [--arg NAME=VALUE ...]
                                          [--setting NAME=VALUE ...] [--jobid ID]
                                          [--wait] [--timeout SECONDS]
    python deploy/scrapyd_ops.py status JOBID

The Scrapyd URL is `--url`, else $SCRAPYD_URL, else http://127.0.0.1:6800; the output root
is `--root`, else $DOCSCRAWL_OUTPUT_ROOT (an absolute path: a job runs in Scrapyd's own
directory). Runs with any Python 3.11+ and the standard library alone (no need to activate
docscrawl's virtualenv); `deploy` also runs `scrapyd-deploy`, found next to the Python
running this script, in `<checkout>/.venv/bin` (where `make setup` installs it), or on PATH.

Why it exists: `scrapyd-deploy` exits 0 even when Scrapyd refuses the egg (its answer is
`{"status": "error", "message": ...}` on stdout), and `schedule.json` answers 200 with
`"status": "error"` too. This helper reads those answers and exits 1 with one line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

PROJECT = "docscrawl"
SPIDER = "docs"
ROOT = Path(__file__).resolve().parent.parent


class OpsError(Exception):
    """A failed step; the message is the one line printed."""


def call(url: str, endpoint: str, data: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """GET (or POST form `data`) one Scrapyd JSON endpoint; error answers raise OpsError."""
    target = f"{url.rstrip('/')}/{endpoint}"
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    try:
        with urllib.request.urlopen(target, data=body, timeout=30) as response:
            answer = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        raise OpsError(f"{endpoint}: HTTP {exc.code} from {target}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise OpsError(f"{endpoint}: cannot reach Scrapyd at {url} ({exc})") from None
    except ValueError:
        raise OpsError(f"{endpoint}: Scrapyd's answer is not JSON") from None
    if answer.get("status") != "ok":
        message = " ".join(str(answer.get("message", answer)).split())
        raise OpsError(f"{endpoint}: Scrapyd answered status={answer.get('status')}: "
                       f"{message[-400:]}")
    return answer


def deploy(url: str, version: str | None, *, egg: str | None = None,
           project_dir: Path = ROOT) -> dict[str, Any]:
    """`scrapyd-deploy env` (scrapy.cfg) and check the JSON answer it prints.

    A refused egg is still stored by Scrapyd and, being the newest version, would run the
    next scheduled job: it is deleted again (delversion.json) before raising.
    """
    version = version or time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    command = [find_scrapyd_deploy(), "env", "-v", version] + (["--egg", egg] if egg else [])
    result = subprocess.run(command, cwd=project_dir, capture_output=True, text=True,
                            env={**os.environ, "SCRAPYD_URL": url.rstrip("/")})
    answer = parse_deploy_output(result.stdout)
    if result.returncode != 0 or answer is None:
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise OpsError(f"deploy: scrapyd-deploy exited {result.returncode}: {last}")
    if answer.get("status") != "ok":
        message = " ".join(str(answer.get("message", "")).split())
        removed = remove_version(url, version)
        raise OpsError(f"deploy: Scrapyd refused version {version} (status="
                       f"{answer.get('status')}; {removed}): {message[-300:]}")
    return answer


def find_scrapyd_deploy() -> str:
    """scrapyd-deploy of docscrawl's virtualenv (it builds the egg with that Python)."""
    for candidate in (Path(sys.executable).parent / "scrapyd-deploy",
                      ROOT / ".venv" / "bin" / "scrapyd-deploy"):
        if candidate.exists():
            return str(candidate)
    found = shutil.which("scrapyd-deploy")
    if found is None:
        raise OpsError(f"deploy: scrapyd-deploy not found next to {sys.executable}, in "
                       f"{ROOT / '.venv' / 'bin'} or on PATH: run `make setup` in {ROOT}")
    return found


def remove_version(url: str, version: str) -> str:
    """Delete a stored version (raw or as Scrapyd sanitized it); says what happened."""
    try:
        stored = call(url, f"listversions.json?project={PROJECT}").get("versions", [])
        for name in (version, re.sub(r"[^A-Za-z0-9_-]", "_", version)):
            if name in stored:
                call(url, "delversion.json", [("project", PROJECT), ("version", name)])
                return "the refused version was deleted from Scrapyd"
    except OpsError as exc:
        return f"could not delete the refused version: {exc}"
    return "the refused version is not stored"


def parse_deploy_output(stdout: str) -> dict[str, Any] | None:
    """The JSON object scrapyd-deploy prints (Scrapyd's addversion.json answer), if any."""
    for line in reversed(stdout.strip().splitlines()):
        try:
            answer = json.loads(line)
        except ValueError:
            continue
        if isinstance(answer, dict):
            return answer
    return None


def schedule(url: str, site: str, root: str, *, args: list[str], settings: list[str],
             jobid: str | None) -> str:
    """POST schedule.json; returns the job id."""
    if not root or not Path(root).is_absolute():
        raise OpsError("schedule: the output root must be an absolute path "
                       "(--root or DOCSCRAWL_OUTPUT_ROOT)")
    data = [("project", PROJECT), ("spider", SPIDER), ("site", site),
            ("setting", f"DOCSCRAWL_OUTPUT_ROOT={root}")]
    data += [tuple(_pair(arg)) for arg in args]  # type: ignore[misc]
    data += [("setting", setting) for setting in settings]
    if jobid:
        data.append(("jobid", jobid))
    return str(call(url, "schedule.json", data)["jobid"])


def _pair(text: str) -> list[str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise OpsError(f"bad --arg {text!r}: want NAME=VALUE")
    return [name, value]


def wait(url: str, jobid: str, timeout: float) -> dict[str, Any]:
    """Poll status.json until the job is finished; returns its listjobs entry."""
    deadline = time.monotonic() + timeout
    while True:
        state = call(url, f"status.json?job={urllib.parse.quote(jobid)}").get("currstate")
        if state == "finished":
            break
        if state not in ("pending", "running"):
            raise OpsError(f"job {jobid}: Scrapyd does not know it (currstate={state})")
        if time.monotonic() > deadline:
            raise OpsError(f"job {jobid}: still {state} after {timeout:.0f} s")
        time.sleep(1.0)
    jobs = call(url, f"listjobs.json?project={PROJECT}")
    for job in jobs.get("finished", []):
        if job.get("id") == jobid:
            return job
    return {"id": jobid}


def output_dir(root: str, site: str) -> Path:
    """Where a crawl of `site` writes under `root` (docscrawl's default `out`)."""
    sys.path.insert(0, str(ROOT))
    from docscrawl.hostlabel import default_host_label  # standard library only

    return Path(root) / default_host_label(site)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("SCRAPYD_URL", "http://127.0.0.1:6800"))
    commands = parser.add_subparsers(dest="command", required=True)
    dep = commands.add_parser("deploy", help="build the egg and upload it, checking the answer")
    dep.add_argument("--version", help="version label (default: UTC timestamp)")
    dep.add_argument("--egg", help="upload this egg instead of building one")
    sch = commands.add_parser("schedule", help="schedule a crawl of one site")
    sch.add_argument("--site", required=True)
    sch.add_argument("--root", default=os.environ.get("DOCSCRAWL_OUTPUT_ROOT", ""))
    sch.add_argument("--arg", action="append", default=[], help="spider argument NAME=VALUE")
    sch.add_argument("--setting", action="append", default=[], help="Scrapy setting NAME=VALUE")
    sch.add_argument("--jobid")
    sch.add_argument("--wait", action="store_true", help="wait for the job and check run.json")
    sch.add_argument("--timeout", type=float, default=6 * 3600)
    sta = commands.add_parser("status", help="state of one job")
    sta.add_argument("jobid")
    opts = parser.parse_args(argv)
    try:
        if opts.command == "deploy":
            answer = deploy(opts.url, opts.version, egg=opts.egg)
            print(f"deployed {PROJECT} version {answer.get('version')} to {opts.url} "
                  f"({answer.get('spiders')} spiders)")
        elif opts.command == "schedule":
            out = output_dir(opts.root, opts.site) if opts.root else None
            before = _mtime(out / "run.json") if out else None
            jobid = schedule(opts.url, opts.site, opts.root, args=opts.arg,
                             settings=opts.setting, jobid=opts.jobid)
            print(f"scheduled job {jobid} on {opts.url}", flush=True)
            if opts.wait and out is not None:
                job = wait(opts.url, jobid, opts.timeout)
                if _mtime(out / "run.json") == before:
                    raise OpsError(f"job {jobid} finished but did not write {out}/run.json: "
                                   + job_failure(opts.url, job))
                return report_run(opts.url, job, out)
        elif opts.command == "status":
            print(json.dumps(call(opts.url, f"status.json?job={opts.jobid}")))
    except OpsError as exc:
        print(f"scrapyd_ops: error: {exc}", file=sys.stderr)
        return 1
    return 0


def job_failure(url: str, job: dict[str, Any]) -> str:
    """Why a job ended without a crawl: the error line of its Scrapyd log, or, when Scrapyd
    kept no log for it (`log_url` null), where to look instead."""
    if not job.get("log_url"):
        return ("Scrapyd kept no job log (log_url is null; a bad argument stops the crawl "
                "before Scrapy's log opens): its error line is in Scrapyd's own log, e.g. "
                f"`grep -A3 \"job='{job.get('id')}'\" scrapyd.log` in Scrapyd's home")
    log_url = f"{url.rstrip('/')}{job['log_url']}"
    try:
        with urllib.request.urlopen(log_url, timeout=30) as response:
            lines = response.read().decode("utf-8", "replace").splitlines()
    except (urllib.error.URLError, OSError):
        return f"read its log at {log_url}"
    errors = [line for line in lines if "ERROR" in line or "error:" in line]
    reason = " ".join(errors[-1].split()) if errors else "no error line in it"
    return f"{reason[-300:]} (log {log_url})"


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def report_run(url: str, job: dict[str, Any], out: Path) -> int:
    """One line about the finished job's run.json; 1 unless the run finished."""
    log_url = f"{url.rstrip('/')}{job['log_url']}" if job.get("log_url") else "n/a"
    try:
        run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"scrapyd_ops: error: job {job['id']} finished but {out}/run.json is unreadable "
              f"({exc}); Scrapyd log: {log_url}", file=sys.stderr)
        return 1
    print(f"job {job['id']}: {run.get('status')} ({run.get('finish_reason')}), complete="
          f"{run.get('complete')}, {run.get('pages_written')} pages in {out}; log {log_url}")
    return 0 if run.get("status") == "finished" else 1


if __name__ == "__main__":
    sys.exit(main())
