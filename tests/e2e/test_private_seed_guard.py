"""A crawl of a site on 127.0.0.1 may reach loopback and private hosts, never the cloud
metadata service or other link-local addresses (in any IPv6 disguise), unless
DOCSCRAWL_ALLOW_LINK_LOCAL asks for them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from tests.conftest import assert_log_invariants, crawl

pytestmark = pytest.mark.e2e

METADATA_LINKS = (
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://[2002:a9fe:a9fe::]/latest/meta-data/",  # 6to4 of 169.254.169.254
    "http://[64:ff9b::a9fe:a9fe]/latest/meta-data/",  # NAT64 of it
)
LINK_LOCAL = "http://[fe80::1]/admin/"
# Nothing is ever fetched from these: one attempt, quickly given up, if the guard let one by.
QUICK = {"DOWNLOAD_TIMEOUT": "3", "RETRY_TIMES": "0"}


def make_site(root: Path) -> Path:
    (root / "docs").mkdir(parents=True)
    links = "".join(f"<li><a href='{url}'>{url}</a></li>"
                    for url in (*METADATA_LINKS, LINK_LOCAL))
    (root / "docs" / "index.html").write_text(
        "<!DOCTYPE html><html lang='en'><head><title>Intranet docs</title></head><body><main>"
        "<h1>Intranet docs</h1><p>An internal documentation site, served on loopback, whose "
        "page links to the cloud metadata service and to a link-local host.</p>"
        f"<ul>{links}<li><a href='http://localhost:PORT/docs/ok.html'>the same server under "
        "another name</a></li><li><a href='to-metadata'>a redirect</a></li></ul>"
        "</main></body></html>", encoding="utf-8")
    (root / "docs" / "ok.html").write_text(
        "<!DOCTYPE html><html lang='en'><head><title>OK</title></head><body><main><h1>OK</h1>"
        f"<p>{'An ordinary page of the intranet site. ' * 10}</p></main></body></html>",
        encoding="utf-8")
    return root


def allow_everything_linked(port: int) -> str:
    """Scope rules admitting every host the page links to: the guard alone decides."""
    hosts = [f"127.0.0.1:{port}", f"localhost:{port}", "169.254.169.254", "[fd00:ec2::254]",
             "[2002:a9fe:a9fe::]", "[64:ff9b::a9fe:a9fe]", "[fe80::1]"]
    return "allow=" + ",".join(f"^http://{re.escape(host)}/" for host in hosts)


def test_a_loopback_seed_never_reaches_the_metadata_service(tmp_path: Path) -> None:
    site = make_site(tmp_path / "site")
    routes = {"/docs/to-metadata": {"status": 302,
                                    "location": "http://169.254.169.254/latest/api/token"}}
    with StaticSite(site, routes=routes) as server:
        port = server.server_address[1]
        index = site / "docs" / "index.html"
        index.write_text(index.read_text().replace("PORT", str(port)), encoding="utf-8")
        output = crawl(f"{server.url}/docs/", tmp_path / "out", allow_everything_linked(port),
                       settings=QUICK)
    for url in (*METADATA_LINKS, LINK_LOCAL):
        event = output.terminal(url)
        assert (event["event"], event["reason"]) == ("skipped", "private_address"), event
        assert event["rule"].endswith("DOCSCRAWL_ALLOW_LINK_LOCAL=1 admits it"), event
    assert "cloud metadata (6to4 of 169.254.169.254)" in output.terminal(
        METADATA_LINKS[2])["rule"]
    redirect = output.terminal("/docs/to-metadata")
    assert (redirect["event"], redirect["reason"]) == ("skipped", "private_address"), redirect
    # the same server under its loopback name is still crawled
    assert output.terminal(f"http://localhost:{port}/docs/ok.html")["event"] in (
        "extracted", "duplicate")
    assert not [e for e in output.log if e["event"] == "fetched"
                and not e["url"].startswith((server.url, f"http://localhost:{port}/"))]
    assert_log_invariants(output)


def test_allow_link_local_lets_a_loopback_seed_try_a_link_local_host(tmp_path: Path) -> None:
    site = make_site(tmp_path / "site")
    with StaticSite(site) as server:
        port = server.server_address[1]
        output = crawl(f"{server.url}/docs/", tmp_path / "out", allow_everything_linked(port),
                       r"deny=169\.254|fd00|2002|64:ff9b|to-metadata|localhost",
                       settings={**QUICK, "DOCSCRAWL_ALLOW_LINK_LOCAL": "1"})
    event = output.terminal(LINK_LOCAL)
    assert event["reason"] != "private_address", event
    robots = [e for e in output.log if e["url"] == "http://[fe80::1]/robots.txt"]
    assert robots and robots[-1]["event"] == "failed", robots  # tried: nothing answers there
