"""Run every hostile-input case of `tests.support.faultserver` and print outcome, reason,
peak memory and time per case, then the whole suite in one crawl.

    python benchmarks/fault_suite.py [--sitemap-urls 200000] [--out /tmp/docscrawl-faults]

Each case is its own `scrapy crawl docs -a site=<fault URL> -a max_depth=0` under
`/usr/bin/time -v` (peak RSS read from its report; `resource` when /usr/bin/time is
missing). Some cases need more than one page: the endless calendar is crawled without a
depth limit (it must stop within 500 requests); DNS rebinding runs in a private network
namespace (`tests/e2e/rebinding.py`; skipped where namespaces are not allowed), once for
Scrapy's connections and once for the browser's (a rendered page's script and iframe);
the redirect cases are crawled again by two workers sharing a crawl through a redis-server
of their own (skipped without `redis-server`), each URL ending as it does in one process.
The whole-suite crawl adds the hostile sitemaps (one of `--sitemap-urls` URLs, with
`max_pages=100`). Figures are printed and written to OUT/fault_suite.json; the whole
run's peak RSS must stay under 500 MB.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.distributed.conftest import REDIS_SERVER, RedisServer  # noqa: E402
from tests.e2e.rebinding import run_rebinding  # noqa: E402
from tests.support.faultserver import FAULTS, REDIRECT_FAULTS, RunningFaultServer  # noqa: E402

TERMINAL = {"extracted", "duplicate", "unchanged", "skipped", "failed"}
PEAK_LIMIT_MB = 500
CALENDAR_REQUEST_LIMIT = 500


def timed_crawl(site: str, out: Path, *args: str) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MB, exit status) of one crawl."""
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={site}",
               "-a", f"out={out}", "-s", "LOG_LEVEL=ERROR", "-s", "DOWNLOAD_TIMEOUT=5",
               "-s", "DOCSCRAWL_PROGRESS_INTERVAL=0"]
    for arg in args:
        command += ["-a", arg]
    gnu_time = shutil.which("time") or ("/usr/bin/time" if Path("/usr/bin/time").exists() else None)
    began = time.monotonic()
    if gnu_time:
        result = subprocess.run([gnu_time, "-v", *command], cwd=ROOT, capture_output=True,
                                text=True)
        match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", result.stderr)
        peak = int(match.group(1)) / 1024 if match else float("nan")
    else:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    return time.monotonic() - began, peak, result.returncode


def outcome(out: Path, url: str) -> tuple[str, str | None]:
    """The terminal event and reason logged for `url`."""
    for line in (out / "crawl_log.jsonl").open(encoding="utf-8"):
        event = json.loads(line)
        if event["url"] == url and event["event"] in TERMINAL:
            return event["event"], event["reason"]
    return "none", None


def special_cases(out: Path) -> list[dict[str, object]]:
    """The endless calendar without a depth limit, and DNS rebinding in a namespace."""
    rows: list[dict[str, object]] = []
    with RunningFaultServer() as server:
        wall, peak, status = timed_crawl(f"{server.url}/docs/cal/2026/1/", out / "calendar",
                                         rf"allow=^{server.url}/docs/cal/")
        requests = sum(1 for path in server.hits.elements() if path.startswith("/docs/cal/"))
    rules = {e["rule"] for e in map(json.loads, (out / "calendar" / "crawl_log.jsonl").open())
             if e["reason"] == "trap"}
    ok = bool(rules) and requests <= CALENDAR_REQUEST_LIMIT
    rows.append({"case": "/docs/cal/ (no depth limit)", "outcome": f"{requests} requests",
                 "reason": "; ".join(sorted(rules)), "ok": ok, "exit": status,
                 "peak_rss_mb": round(peak, 1), "wall_s": round(wall, 2)})
    print(f"{'ok ' if ok else 'BAD'} endless calendar: {requests} requests, rule {rules}",
          flush=True)
    began = time.monotonic()
    report = run_rebinding(out / "rebinding")
    if report is None:
        print("-   DNS rebinding: network namespaces not available, skipped", flush=True)
        return rows
    port = report["port"]
    secret = f"http://rebind.test:{port}/docs/secret"
    event, reason = outcome(out / "rebinding" / "crawl", secret)
    ok = (event, reason) == ("skipped", "private_address") and not report["private_requests"]
    rows.append({"case": "DNS rebinding", "outcome": event, "reason": reason, "ok": ok,
                 "private_requests": report["private_requests"], "exit": report["exit"],
                 "wall_s": round(time.monotonic() - began, 2)})
    print(f"{'ok ' if ok else 'BAD'} DNS rebinding: {event} {reason}, "
          f"{len(report['private_requests'])} requests reached the private address", flush=True)
    rows.append(browser_rebinding(out))
    return rows


def browser_rebinding(out: Path) -> dict[str, object]:
    """A rendered page whose script and iframe name hosts that rebind to 127.0.0.1."""
    began = time.monotonic()
    report = run_rebinding(out / "rebinding-browser", browser=True)
    assert report is not None  # namespaces worked a moment ago
    port = report["port"]
    event, reason = outcome(out / "rebinding-browser" / "crawl",
                            f"http://docs.test:{port}/docs/rebind-js")
    ok = event == "extracted" and not report["private_requests"]
    print(f"{'ok ' if ok else 'BAD'} DNS rebinding in the browser: page {event}, "
          f"{len(report['private_requests'])} requests reached the private address", flush=True)
    return {"case": "DNS rebinding (browser)", "outcome": event, "reason": reason, "ok": ok,
            "private_requests": report["private_requests"], "exit": report["exit"],
            "wall_s": round(time.monotonic() - began, 2)}


def distributed_redirects(out: Path) -> list[dict[str, object]]:
    """The redirect cases crawled by two workers through Redis, merged."""
    if not Path(REDIS_SERVER).exists():
        print("-   distributed redirects: redis-server not installed, skipped", flush=True)
        return []
    out.mkdir(parents=True, exist_ok=True)
    redis = RedisServer(out)
    redis.wait_ready()
    try:
        with RunningFaultServer() as server:
            began = time.monotonic()
            command = [sys.executable, "-m", "scrapy", "crawl", "docs",
                       "-a", f"site={server.url}/docs/redirects/",
                       "-a", f"allow=^{re.escape(server.url)}/docs/",
                       "-s", f"DOCSCRAWL_REDIS_URL={redis.url}",
                       "-s", "DOCSCRAWL_REDIS_CRAWL_KEY=fault-suite", "-s", "LOG_LEVEL=ERROR",
                       "-s", "DOCSCRAWL_REDIS_QUIET=2", "-s", "CONCURRENT_REQUESTS=2"]
            workers = [subprocess.Popen([*command, "-a", f"out={out / f'part-{n}'}"], cwd=ROOT)
                       for n in (1, 2)]
            statuses = [worker.wait(timeout=600) for worker in workers]
    finally:
        redis.stop()
    subprocess.run([sys.executable, "-m", "docscrawl.cli", "-q", "merge", str(out / "part-1"),
                    str(out / "part-2"), "-o", str(out / "merged")], cwd=ROOT, check=True)
    rows = []
    for fault in REDIRECT_FAULTS:
        event, reason = outcome(out / "merged", server.url + fault.path)
        ok = (event, reason) == (fault.event, fault.reason)
        rows.append({"case": f"{fault.path} (2 workers)", "outcome": event, "reason": reason,
                     "expected": [fault.event, fault.reason], "ok": ok,
                     "exit": max(statuses), "wall_s": round(time.monotonic() - began, 2)})
        print(f"{'ok ' if ok else 'BAD'} {fault.path + ' (2 workers)':36} {event:9} "
              f"{reason or '-':20}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sitemap-urls", type=int, default=200_000)
    parser.add_argument("--out", type=Path, default=Path("/tmp/docscrawl-faults"))
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    rows = []
    with RunningFaultServer() as server:
        for n, fault in enumerate(FAULTS):
            out = args.out / f"case{n}"
            wall, peak, status = timed_crawl(server.url + fault.path, out, "max_depth=0")
            event, reason = outcome(out, server.url + fault.path)
            ok = (event, reason) == (fault.event, fault.reason)
            rows.append({"case": fault.path, "note": fault.note, "outcome": event,
                         "reason": reason, "expected": [fault.event, fault.reason], "ok": ok,
                         "exit": status, "peak_rss_mb": round(peak, 1), "wall_s": round(wall, 2)})
            print(f"{'ok ' if ok else 'BAD'} {fault.path:36} {event:9} {reason or '-':20} "
                  f"{peak:7.1f} MB {wall:6.2f} s", flush=True)
    rows += special_cases(args.out)
    rows += distributed_redirects(args.out / "distributed")
    with RunningFaultServer(sitemap_urls=args.sitemap_urls) as server:
        wall, peak, status = timed_crawl(f"{server.url}/docs/", args.out / "whole",
                                         "max_pages=100")
    run = json.loads((args.out / "whole" / "run.json").read_text(encoding="utf-8"))
    passed = sum(row["ok"] for row in rows)
    print(f"cases: {passed} of {len(rows)} end in their expected outcome")
    whole = {"peak_rss_mb": round(peak, 1), "wall_s": round(wall, 1), "exit": status,
             "counts": run["counts"], "under_limit": peak < PEAK_LIMIT_MB}
    print(f"whole suite + sitemap of {args.sitemap_urls} URLs: {peak:.1f} MB peak, "
          f"{wall:.1f} s, limit {PEAK_LIMIT_MB} MB: {'ok' if peak < PEAK_LIMIT_MB else 'OVER'}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fault_suite.json").write_text(json.dumps({"cases": rows, "whole": whole},
                                                          indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
