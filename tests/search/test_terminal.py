"""Crawled text reaches the terminal shown, never obeyed: a page whose title, heading and
text carry ESC sequences (window title, clear screen, colour), a one-byte CSI (0x9b) and
a bidi override is crawled from 127.0.0.1, then every command that prints crawled text
runs on the output."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from docscrawl.demo.server import StaticSite
from docscrawl.terminal import for_terminal, json_text
from tests.conftest import ROOT, SITES, crawl

pytestmark = pytest.mark.e2e

HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b[31m\u202eemca\u202c\x9b1m"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def docscrawl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "docscrawl.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """(output, seed) of a crawl of the demo site whose configure page is hostile."""
    base = tmp_path_factory.mktemp("hostile")
    site = base / "site"
    shutil.copytree(SITES / "demo", site)
    page = site / "docs" / "guide" / "configure.html"
    html = page.read_text(encoding="utf-8")
    html = html.replace("<title>Configuring Acme", f"<title>Configuring Acme {HOSTILE}")
    html = html.replace("<h1>Configuring Acme<a", f"<h1>Configuring Acme {HOSTILE}<a")
    html = html.replace("from the working directory.</p>",
                        f"from the working directory.\r{HOSTILE}\x1b[0m</p>")
    page.write_text(html, encoding="utf-8")
    with StaticSite(site) as server:
        seed = f"{server.url}/docs/"
        crawl(seed, base / "out")
        yield base / "out", seed


def test_the_crawl_keeps_the_characters(hostile: tuple[Path, str]) -> None:
    """The output holds the page's text as it was (the contract's data is not altered):
    neutralising is the printer's job."""
    out, _ = hostile
    titles = [json.loads(line)["title"] for line in (out / "pages.jsonl").open()]
    assert any(HOSTILE in (title or "") for title in titles)


def test_search_shows_escapes_instead_of_obeying_them(hostile: tuple[Path, str]) -> None:
    out, seed = hostile
    human = docscrawl("search", str(out), "configuring acme", "-k", "2")
    assert human.returncode == 0, human.stderr
    assert "1. Configuring Acme" in human.stdout
    assert not RAW.search(human.stdout), repr(human.stdout[:400])
    assert "\\x1b]0;owned\\x07\\x1b[2J\\x1b[31m\\u202eemca\\u202c\\x9b1m" in human.stdout
    as_json = docscrawl("search", str(out), "configuring acme", "-k", "2", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert not RAW.search(as_json.stdout)
    first = json.loads(as_json.stdout.splitlines()[0])
    assert first["url"] == f"{seed}guide/configure.html#configuring-acme"
    assert HOSTILE in first["title"] and HOSTILE in first["text"]  # the same text, escaped


def test_every_command_printing_crawled_text_is_safe(hostile: tuple[Path, str]) -> None:
    out, seed = hostile
    runs = [docscrawl("summary", str(out)), docscrawl("log", str(out)),
            docscrawl("log", str(out), "--json"), docscrawl("check", str(out)),
            docscrawl("check", str(out), "--json"),
            docscrawl("why", str(out), f"{seed}guide/configure.html"),
            docscrawl("why", str(out), f"{seed}guide/configure.html", "--json")]
    for run in runs:
        assert run.returncode in (0, 1), run.stderr
        assert run.stdout and not RAW.search(run.stdout), run.args
    why = json.loads(runs[-1].stdout)
    assert any(HOSTILE in (page["title"] or "") for page in why["pages"])


@pytest.mark.parametrize(("text", "shown"), [
    ("plain\ttext\nnext line", "plain\ttext\nnext line"),
    ("\x1b[31mred", "\\x1b[31mred"),
    ("over\rwrite", "over\\x0dwrite"),
    ("csi\x9b2J del\x7f", "csi\\x9b2J del\\x7f"),
    ("\u202eevil\u202c \u2066iso\u2069", "\\u202eevil\\u202c \\u2066iso\\u2069"),
    ("Straße — ünïcode ✓ 日本", "Straße — ünïcode ✓ 日本"),
])
def test_for_terminal(text: str, shown: str) -> None:
    assert for_terminal(text) == shown


def test_json_text_escapes_and_reads_back() -> None:
    data = {"title": "a\x1b[2Jb\x9bc\u202ed é", "n": 1}
    text = json_text(data, indent=2)
    assert not RAW.search(text)
    assert "é" in text and json.loads(text) == data
