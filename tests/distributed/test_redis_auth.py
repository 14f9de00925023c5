"""Distributed crawls against a Redis that wants a password, and one that speaks TLS only,
with real `scrapy crawl` workers and real redis-servers: the crawl works, a wrong password
stops it at start with one line, and the password is in no log line, output file or
status output (`redis://:***@host`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from docscrawl.demo.server import FixtureServer, StaticSite
from tests.conftest import ROOT
from tests.distributed.conftest import REDIS_SERVER, RedisServer

pytestmark = pytest.mark.e2e
PASSWORD = "s3cret-" + uuid.uuid4().hex[:12]
WORKER_PASSWORD = "w0rker-" + uuid.uuid4().hex[:12]
# The ACL user docs/operations.md tells to create: the crawl's keys, nothing else.
ACL_RULES = ["on", f">{WORKER_PASSWORD}", "resetkeys", "~docscrawl:*", "resetchannels",
             "-@all", "+@connection", "+@transaction", "+@scripting", "+@read", "+@write",
             "+time", "-@dangerous"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureServer]:
    root = tmp_path_factory.mktemp("auth-site")
    (root / "docs").mkdir()
    for n in range(3):
        links = "".join(f"<a href='p{k}.html'>page {k}</a> " for k in range(3))
        (root / "docs" / f"p{n}.html").write_text(
            f"<html><head><title>Page {n}</title></head><body><main><h1>Page {n}</h1>"
            f"<p>{'Words of this page. ' * 15}</p>{links}</main></body></html>",
            encoding="utf-8")
    (root / "docs" / "index.html").write_text(
        "<html><head><title>Index</title></head><body><main><h1>Index</h1><p>"
        + "Start here. " * 15 + "</p><a href='p0.html'>start</a></main></body></html>",
        encoding="utf-8")
    with StaticSite(root) as server:
        yield server


def start_redis(workdir: Path, **options: object) -> Iterator[RedisServer]:
    if not Path(REDIS_SERVER).exists():
        pytest.skip("redis-server is not installed (make system-deps)")
    server = RedisServer(workdir, **options)  # type: ignore[arg-type]
    try:
        server.wait_ready()
    except RuntimeError:
        server.stop()
        if options.get("tls") is not None:
            pytest.skip("this redis-server cannot serve TLS: "
                        + server.log_path.read_text(encoding="utf-8")[-300:])
        raise
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def password_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    yield from start_redis(tmp_path_factory.mktemp("redis-pw"), password=PASSWORD)


@pytest.fixture(scope="module")
def tls_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    certs = tmp_path_factory.mktemp("tls")
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(certs / "key.pem"), "-out", str(certs / "cert.pem"),
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    yield from start_redis(tmp_path_factory.mktemp("redis-tls"), password=PASSWORD, tls=certs)


def crawl(site: FixtureServer, out: Path, *, setting_url: str | None = None,
          env_url: str | None = None, key: str = "") -> subprocess.CompletedProcess[str]:
    """One worker (on its own crawl key by default), at INFO: Scrapy logs its settings."""
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={site.url}/docs/",
               "-a", f"out={out}", "-s",
               f"DOCSCRAWL_REDIS_CRAWL_KEY={key or 'auth-' + uuid.uuid4().hex[:8]}",
               "-s", "DOCSCRAWL_REDIS_QUIET=1", "-s", "LOG_LEVEL=INFO"]
    if setting_url is not None:
        command += ["-s", f"DOCSCRAWL_REDIS_URL={setting_url}"]
    env = {k: v for k, v in os.environ.items() if k != "DOCSCRAWL_REDIS_URL"}
    if env_url is not None:
        env["DOCSCRAWL_REDIS_URL"] = env_url
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=180,
                          env=env)


def status(redis_url: str, crawl_key: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DOCSCRAWL_REDIS_URL": redis_url}  # no --redis-url on the line
    return subprocess.run([sys.executable, "-m", "docscrawl.distributed", "status",
                           "--crawl-key", crawl_key], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, env=env)


def assert_no_secret(secret: str, result: subprocess.CompletedProcess[str], out: Path) -> None:
    assert secret not in result.stdout + result.stderr
    for file in out.rglob("*"):
        if file.is_file() and file.suffix in (".json", ".jsonl"):
            assert secret not in file.read_text(encoding="utf-8"), file


def assert_crawled(result: subprocess.CompletedProcess[str], out: Path) -> dict:
    assert result.returncode == 0, result.stderr[-3000:]
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["status"] == "finished"
    assert run["pages_written"] == 4
    return run


def test_a_password_protected_redis_crawl_works_and_never_shows_the_password(
        password_redis: RedisServer, site: FixtureServer, tmp_path: Path) -> None:
    out, key = tmp_path / "part-1", f"auth-{uuid.uuid4().hex[:8]}"
    result = crawl(site, out, setting_url=password_redis.url, key=key)
    assert_crawled(result, out)
    assert f"Redis redis://:***@127.0.0.1:{password_redis.port}/0" in result.stderr
    assert_no_secret(PASSWORD, result, out)
    shown = status(password_redis.url, key)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["finished"] is True
    assert PASSWORD not in shown.stdout + shown.stderr


@pytest.mark.parametrize("url", ["redis://:wrong-{pw}@127.0.0.1:{port}/0",
                                 "redis://127.0.0.1:{port}/0"], ids=["wrong", "none"])
def test_a_wrong_password_stops_the_crawl_at_start_in_one_line(
        password_redis: RedisServer, site: FixtureServer, tmp_path: Path, url: str) -> None:
    url = url.format(pw=PASSWORD, port=password_redis.port)
    out = tmp_path / "part-1"
    result = crawl(site, out, setting_url=url)
    assert result.returncode == 2
    err = result.stderr.strip()
    assert "\n" not in err, err
    assert err.startswith("docscrawl: error: setting DOCSCRAWL_REDIS_URL: cannot use Redis at "
                          f"redis://{':***@' if ':wrong' in url else ''}127.0.0.1:"), err
    assert "AuthenticationError" in err
    assert PASSWORD not in err and not out.exists()
    shown = status(url, "any")
    assert shown.returncode == 1 and "\n" not in shown.stderr.strip()
    assert PASSWORD not in shown.stderr


def test_a_tls_redis_with_an_acl_user_crawl_works(tls_redis: RedisServer, site: FixtureServer,
                                                  tmp_path: Path) -> None:
    admin = Redis.from_url(tls_redis.url)
    try:
        admin.acl_setuser("docscrawl", reset=True)  # then the documented rules, verbatim
        admin.execute_command("ACL", "SETUSER", "docscrawl", *ACL_RULES)
    finally:
        admin.close()
    worker_url = tls_redis.url.replace(f":{PASSWORD}@", f"docscrawl:{WORKER_PASSWORD}@")
    assert worker_url.startswith("rediss://docscrawl:") and "ssl_ca_certs=" in worker_url
    out = tmp_path / "part-1"
    result = crawl(site, out, env_url=worker_url)  # the password stays off the command line
    assert_crawled(result, out)
    assert f"Redis rediss://docscrawl:***@127.0.0.1:{tls_redis.port}/0" in result.stderr
    assert_no_secret(WORKER_PASSWORD, result, out)
    plain = crawl(site, tmp_path / "part-2",
                  setting_url=worker_url.replace("rediss://", "redis://").split("?")[0])
    assert plain.returncode == 2 and "\n" not in plain.stderr.strip()
    assert WORKER_PASSWORD not in plain.stderr
