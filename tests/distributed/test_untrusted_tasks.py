"""Workers do not trust their queue: tasks written straight into the Redis stream (as the
frontier writes them, by XADD) are checked against the crawl's admission policy before any
fetch, and payloads that are no task are dropped, with a real `scrapy crawl` worker, a real
redis-server and real sites on 127.0.0.1:

- `site`: the crawl (robots.txt disallows /docs/private/; `deny` refuses /docs/denied/);
- `offsite`: another port, out of scope: it must receive no request at all;
- `sister`: another port let into scope by `allow`, whose robots.txt (never asked for by
  the crawl itself) disallows /docs/private/: a task there waits for that robots.txt.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from docscrawl.demo.server import StaticSite
from docscrawl.distributed import SharedFrontier
from docscrawl.distributed.streams import FIELD, MAX_TASK_CHARS
from tests.conftest import CONTRACT_CHECK, ROOT

pytestmark = pytest.mark.e2e
PAGE = ("<html><head><title>{0}</title></head><body><main><h1>{0}</h1><p>{1}</p>{2}</main>"
        "</body></html>")
LONG_PATH = "/docs/" + "a" * 2100 + ".html"  # over Scrapy's URLLENGTH_LIMIT (2083)
OVERSIZED = json.dumps({"url": "x" * MAX_TASK_CHARS})  # a "task" of over a megabyte


def write_page(root: Path, path: str, links: str = "") -> None:
    file = root / path.lstrip("/")
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(PAGE.format(path, "Some words of this page. " * 12, links), encoding="utf-8")


def make_site(root: Path, robots: str, pages: list[str]) -> Path:
    root.mkdir(parents=True)
    (root / "robots.txt").write_text(robots, encoding="utf-8")
    for path in pages:
        write_page(root, path)
    return root


def task(url: str, source: str, **fields: Any) -> dict[str, Any]:
    """A task as `task_from_track` writes it."""
    return {"url": url, "key": url, "depth": 1,
            "discovery": [{"reason": "in_page", "from": source}], "lastmod": None,
            "redirect_chain": [], "fetched_url": None, "observed": [url], **fields}


@dataclass
class Crawl:
    result: subprocess.CompletedProcess[str]
    out: Path
    site: list[str]
    offsite: list[str]
    sister: list[str]
    pending: int
    dead: list[dict[str, Any]]
    urls: dict[str, str]

    def skips(self, event: str = "skipped") -> dict[str, dict[str, Any]]:
        lines = (self.out / "crawl_log.jsonl").read_text(encoding="utf-8").splitlines()
        events = [json.loads(line) for line in lines]
        return {e["url"]: e for e in events if e["event"] == event}


def inject(shared: SharedFrontier, redis_url: str, urls: dict[str, str]) -> None:
    """Tasks a writer to Redis adds: valid JSON ones through the frontier's own XADD
    script (`push`), the rest with raw XADD into the same stream."""
    seed = urls["seed"]
    shared.push(task(urls["offsite"], seed))
    shared.push(task(urls["robots"], seed))
    shared.push(task(urls["denied"], seed))
    shared.push(task(urls["forged"], seed, key=urls["forged_key"]))  # requests the key
    shared.push(task(urls["long"], seed))
    shared.push(task(urls["sister_private"], seed))
    shared.push(task(urls["sister_ok"], seed))
    stream = shared.keys["tasks"]
    raw = Redis.from_url(redis_url)  # bytes: it may write what is not UTF-8
    try:
        raw.xadd(stream, {FIELD: json.dumps({"url": urls["malformed"], "depth": "deep"})})
        raw.xadd(stream, {FIELD: '{"url": "not json'})
        raw.xadd(stream, {"other": "no task field"})
        raw.xadd(stream, {FIELD: b"\xff\xfe{\x80"})
        raw.xadd(stream, {FIELD: OVERSIZED})
        raw.xadd(stream, {FIELD: json.dumps(["a", "list"])})
    finally:
        raw.close()


@pytest.fixture(scope="module")
def crawl(redis_server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crawl]:
    root = tmp_path_factory.mktemp("untrusted")
    site_root = make_site(root / "site", "User-agent: *\nDisallow: /docs/private/\n",
                          ["/docs/p1.html", "/docs/p2.html", "/docs/private/secret.html",
                           "/docs/denied/x.html", "/docs/forged.html", "/docs/p9.html"])
    write_page(site_root, "/docs/index.html", "<a href='p1.html'>one</a> <a href='p2.html'>two</a>")
    offsite_root = make_site(root / "offsite", "User-agent: *\nAllow: /\n", ["/docs/page.html"])
    sister_root = make_site(root / "sister", "User-agent: *\nDisallow: /docs/private/\n",
                            ["/docs/ok.html", "/docs/private/x.html"])
    key = f"untrusted-{uuid.uuid4().hex[:8]}"
    shared = SharedFrontier(redis_server.url, key)
    with (StaticSite(site_root) as site, StaticSite(offsite_root) as offsite,
          StaticSite(sister_root) as sister):
        urls = {"seed": f"{site.url}/docs/", "offsite": f"{offsite.url}/docs/page.html",
                "robots": f"{site.url}/docs/private/secret.html",
                "denied": f"{site.url}/docs/denied/x.html",
                "forged": f"{site.url}/docs/forged.html",
                "forged_key": f"{offsite.url}/docs/forged.html",
                "long": f"{site.url}{LONG_PATH}", "malformed": f"{site.url}/docs/p9.html",
                "sister_private": f"{sister.url}/docs/private/x.html",
                "sister_ok": f"{sister.url}/docs/ok.html"}
        inject(shared, redis_server.url, urls)
        allow = ",".join(rf"^http://127\.0\.0\.1:{server.server_address[1]}/docs/"
                         for server in (site, sister))
        out = root / "part-1"
        command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={urls['seed']}",
                   "-a", f"out={out}", "-a", f"allow={allow}", "-a", "deny=/docs/denied/",
                   "-s", f"DOCSCRAWL_REDIS_URL={redis_server.url}",
                   "-s", f"DOCSCRAWL_REDIS_CRAWL_KEY={key}", "-s", "DOCSCRAWL_REDIS_LEASE=120",
                   "-s", "DOCSCRAWL_REDIS_QUIET=1", "-s", "CONCURRENT_REQUESTS=4",
                   "-s", "LOG_LEVEL=WARNING"]
        try:
            result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                                    timeout=180)
            yield Crawl(result, out, site.paths, offsite.paths, sister.paths,
                        shared.pending(), shared.dead_tasks(), urls)
        finally:
            shared.reset()
            shared.close()


def test_the_crawl_completes_and_its_queue_is_empty(crawl: Crawl) -> None:
    assert crawl.result.returncode == 0, crawl.result.stderr[-3000:]
    run = json.loads((crawl.out / "run.json").read_text(encoding="utf-8"))
    assert run["status"] == "finished"
    assert (crawl.pending, crawl.dead) == (0, [])  # every injected entry was acknowledged
    fetched = {p for p in crawl.site if p.startswith("/docs/")}
    assert {"/docs/", "/docs/p1.html", "/docs/p2.html"} <= fetched


def test_no_refused_task_was_fetched(crawl: Crawl) -> None:
    assert crawl.offsite == []  # not even its robots.txt
    for path in ("/docs/private/secret.html", "/docs/denied/x.html", "/docs/p9.html",
                 LONG_PATH):
        assert path not in crawl.site
    assert "/robots.txt" in crawl.sister  # asked for once the task passed scope
    assert "/docs/private/x.html" not in crawl.sister
    assert "/docs/ok.html" in crawl.sister  # in scope, allowed: the task waited, then ran


def test_each_refusal_is_a_skip_with_its_reason(crawl: Crawl) -> None:
    skips, urls = crawl.skips(), crawl.urls
    reasons = {name: (skips[urls[name]]["reason"], skips[urls[name]]["rule"])
               for name in ("offsite", "robots", "denied", "forged", "long",
                            "sister_private")}
    assert reasons["offsite"][0] == "out_of_scope"
    assert reasons["robots"] == ("robots", "Disallow: /docs/private/")
    assert reasons["denied"] == ("denied_by_rule", "/docs/denied/")
    assert reasons["forged"][0] == "out_of_scope"  # its key, the URL requested, is off-site
    assert reasons["long"] == ("trap",
                               f"URLLENGTH_LIMIT=2083 ({len(urls['long'])} characters)")
    assert reasons["sister_private"] == ("robots", "Disallow: /docs/private/")
    # A payload that is no task is not a policy's skip (the contract's skip reasons are a
    # closed list, and contract_check refuses any other): it fails, unfetched.
    malformed = crawl.skips("failed")[urls["malformed"]]
    assert (malformed["reason"], malformed["rule"]) == (
        "untrusted_task", "malformed task: 'depth' is not a whole number from 0 to 1000000")
    if CONTRACT_CHECK.exists():
        check = subprocess.run([sys.executable, str(CONTRACT_CHECK), str(crawl.out)],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout


def test_payloads_that_are_no_task_are_dropped_with_a_logged_reason(crawl: Crawl) -> None:
    dropped = [line for line in crawl.result.stderr.splitlines()
               if "is malformed, dropped unfetched" in line]
    problems = sorted(line.rsplit(": ", 1)[1] for line in dropped)
    assert problems == sorted([
        "'depth' is not a whole number from 0 to 1000000", "not JSON", "no 'task' field",
        "not JSON", f"{len(OVERSIZED)} characters (at most {MAX_TASK_CHARS})",
        "not a JSON object"]), dropped
    assert "Traceback" not in crawl.result.stderr
