"""`docscrawl context` and MCP's `get_context`: the best sections in a token budget, cited,
with flags; through the real CLI on crawls of the demo site and a real MCP session."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from docscrawl.chunking.units import count_tokens
from docscrawl.demo.server import StaticSite
from docscrawl.search.context import (
    ContextError,
    Section,
    blocks,
    cut_at_block,
    facts,
    in_document_order,
)
from docscrawl.search.hits import Hit
from docscrawl.search.mcp import Library
from tests.conftest import ROOT, SITES, crawl
from tests.search.mcp_session import mcp_session

NONSENSE = "asdkjh qwpoeiru zxmcnv"
KEYS = {"url", "heading_path", "version", "retrieved_at", "citation", "score", "text"}


def docscrawl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "docscrawl.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def context_json(out: Path, *args: str) -> dict:
    done = docscrawl("context", str(out), "--json", *args)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1  # ONE object
    return json.loads(lines[0])


@pytest.fixture(scope="module")
def two_defaults(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A crawl of the demo site whose 3.6 version has its own Configure page, with the
    timeout's default 60 where 2.0 says 30 (table and acme.toml)."""
    base = tmp_path_factory.mktemp("twodefaults")
    site = base / "site"
    shutil.copytree(SITES / "demo", site)
    page = (site / "docs" / "guide" / "configure.html").read_text(encoding="utf-8")
    page = page.replace("2.0", "3.6").replace("<td><p>30</p></td>", "<td><p>60</p></td>")
    (site / "docs" / "3.6" / "guide" / "configure.html").write_text(
        page.replace("timeout = 30", "timeout = 60"), encoding="utf-8")
    with StaticSite(site) as server:
        crawl(f"{server.url}/docs/", base / "out")
    yield base / "out"


# ---- pure parts ---------------------------------------------------------------------

def test_blocks_keep_a_code_fence_whole_and_a_cut_ends_at_a_block() -> None:
    markdown = ("# Install\n\nFirst paragraph.\n\n```console\n$ pip install acme\n\n"
                "$ acme --version\n```\n\nLast paragraph.")
    assert blocks(markdown) == ["# Install", "First paragraph.",
                                "```console\n$ pip install acme\n\n$ acme --version\n```",
                                "Last paragraph."]
    part = cut_at_block(markdown, count_tokens("# Install\n\nFirst paragraph.") + 3)
    assert part == "# Install\n\nFirst paragraph."  # not into the fence
    assert cut_at_block(markdown, 1) is None
    assert cut_at_block(markdown, count_tokens("# Install")) is None  # a heading alone


def test_facts_are_stated_defaults_not_example_values() -> None:
    text = ("| Setting | Default | Meaning |\n| --- | --- | --- |\n| workers | 4 | W. |\n\n"
            "`class acme.Client(url, timeout=30, *, verify: bool = True)`\n\n"
            "## worker_concurrency\n\nDefault: Number of CPU cores.\n\n"
            "## task_time_limit\n\nDefault: `300` seconds.\n\n"
            "## Retrying tasks\n\nThe delay defaults to 5 seconds.\n\n"
            "Call `requests.get(url, verify=False)` to skip it.\n\n"
            "```python\nClient(timeout=5)\nretries = 2\n```\n")
    # Celery's and Scrapy's settings say "Default:" under the setting's heading; a call
    # in a sentence, a code block and a heading that is no identifier are examples
    assert facts(text) == {"workers": {"4"}, "timeout": {"30"}, "verify": {"true"},
                           "task_time_limit": {"300"}}


def test_sections_of_a_page_in_document_order_and_neighbours_merged() -> None:
    def section(index: int, score: float, page: str = "http://x/p.html") -> Section:
        record = {"markdown": f"part {index}",
                  "metadata": {"canonical_url": page, "chunk_index": index,
                               "anchor": f"a{index}"}}
        return Section(hit=Hit(score, record), text=f"part {index}", tokens=2, score=score,
                       chunk_indexes=[index])

    ordered = in_document_order([section(3, 0.9), section(7, 0.8, "http://x/q.html"),
                                 section(2, 0.7), section(5, 0.6)])
    assert [s.text for s in ordered] == ["part 2\n\npart 3", "part 5", "part 7"]
    assert ordered[0].chunk_indexes == [2, 3] and ordered[0].score == 0.9


# ---- the CLI --------------------------------------------------------------------------

def test_context_json_is_one_object_with_cited_sections(demo: tuple[Path, Path, str]) -> None:
    _, out, seed = demo
    found = context_json(out, "what is the default timeout")
    assert found["question"] == "what is the default timeout"
    assert found["version_used"] == "2.0"
    assert found["flags"] == []  # two pages agree on 30: no disagreement
    first = found["sections"][0]
    assert set(first) >= KEYS
    assert first["url"] == f"{seed}guide/configure.html#configuring-acme"
    assert first["citation"].startswith("Configuring Acme") and "version 2.0" in first["citation"]
    assert all(s["version"] == "2.0" for s in found["sections"])
    assert sum(count_tokens(s["text"]) for s in found["sections"]) <= found["budget"]


def test_budget_cuts_at_a_block_boundary_and_says_so(demo: tuple[Path, Path, str]) -> None:
    _, out, _ = demo
    found = context_json(out, "install acme on linux", "--budget", "60")
    first = found["sections"][0]
    assert first["url"].endswith("install.html#installing-acme")
    assert "cut at a block boundary" in first["cut"]
    assert first["text"].count("```") % 2 == 0  # no code block cut open
    assert first["text"].rstrip().endswith("```")
    assert sum(count_tokens(s["text"]) for s in found["sections"]) <= 60
    tiny = context_json(out, "install acme on linux", "--budget", "3")
    assert tiny["sections"] == []
    assert {f["flag"] for f in tiny["flags"]} == {"left_out"}


def test_sources_disagree_across_versions(two_defaults: Path) -> None:
    found = context_json(two_defaults, "what is the default timeout")
    assert found["version_used"] == "2.0"
    disagree = [f["note"] for f in found["flags"] if f["flag"] == "sources_disagree"]
    assert len(disagree) == 1
    assert "timeout is 30 in Configuring Acme" in disagree[0]
    assert "60 in Configuring Acme — Acme Docs 3.6" in disagree[0]
    only = context_json(two_defaults, "what is the default timeout", "--version", "3.6")
    assert only["version_used"] == "3.6" and only["flags"] == []
    assert "| timeout | 60 |" in only["sections"][0]["text"]


def test_not_covered_and_human_output_quoted(demo: tuple[Path, Path, str]) -> None:
    _, out, _ = demo
    weak = context_json(out, NONSENSE)
    assert [f["flag"] for f in weak["flags"]] == ["not_covered"]
    human = docscrawl("context", str(out), "what is the default timeout")
    assert human.returncode == 0
    first = human.stdout.splitlines()[0]
    assert "Version used: 2.0" in first and "of 2,000 tokens" in first
    assert "\n[1]\n<document " in human.stdout and 'citation="Configuring Acme' in human.stdout


def test_bad_input_is_one_clear_line(demo: tuple[Path, Path, str]) -> None:
    _, out, _ = demo
    for args, message in [
            (["  "], "docscrawl: error: the question is empty"),
            (["timeout", "--budget", "0"],
             "docscrawl: error: the budget must be a positive number of tokens (got 0)"),
            (["timeout", "--version", "9.9"],
             "docscrawl: error: version '9.9' is not in the index (versions: 2.0, 3.6)")]:
        done = docscrawl("context", str(out), *args)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.strip() == message
    empty = docscrawl("search", str(out), " \t ")  # search asks the same of its question
    assert (empty.returncode, empty.stdout) == (2, "")
    assert empty.stderr.strip() == "docscrawl: error: the question is empty"
    with pytest.raises(ContextError, match="the question is empty"):
        Library([out]).search("  ")  # the MCP tool's answer, before any index is read
    long = context_json(out, "how do I set the timeout " * 400)  # 10,000 characters
    assert long["flags"][0]["flag"] == "question_cut"
    assert "9,999 characters" in long["flags"][0]["note"]  # the last space dropped
    assert long["sections"]
    text = docscrawl("context", str(out), "how do I set the timeout " * 400)
    header = text.stdout.splitlines()[0]
    assert header.startswith("Context for 'how do I set the timeout") and " …'" in header
    assert len(header) < 500  # the 10,000 characters are not echoed back


def test_a_corrupt_index_is_rebuilt(demo: tuple[Path, Path, str], tmp_path: Path) -> None:
    _, out, _ = demo
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    for path in copy.glob("search.sqlite3*"):
        path.unlink()
    (copy / "search.sqlite3").write_bytes(b"not a database " * 400)
    done = docscrawl("context", str(copy), "default timeout", "--json")
    assert done.returncode == 0
    assert "search.sqlite3 is unreadable (file is not a database): rebuilding it" in done.stderr
    assert json.loads(done.stdout)["sections"]


# ---- MCP ------------------------------------------------------------------------------

async def _get_context(out: Path, other: Path) -> tuple[str, str, object, str]:
    async with mcp_session(out, other) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert "get_context" in tools
        good = await session.call_tool("get_context", {"question": "what is the default "
                                                                   "timeout", "budget": 500,
                                                       "site": str(out)})
        weak = await session.call_tool("get_context", {"question": NONSENSE})
        zero = await session.call_tool("get_context", {"question": "timeout", "budget": 0})
        only = await session.call_tool("get_context", {"question": "what is the default "
                                                                   "timeout", "site": str(other)})
        return good.content[0].text, weak.content[0].text, zero, only.content[0].text


def test_mcp_get_context(two_defaults: Path, demo: tuple[Path, Path, str]) -> None:
    pytest.importorskip("mcp")
    anyio = pytest.importorskip("anyio")
    good, weak, zero, only = anyio.run(_get_context, two_defaults, demo[1])
    head = good.split("\n\n", 1)[0]
    assert "Version used: 2.0" in head and "of 500 tokens" in head
    assert "Flag sources_disagree: timeout is 30" in head
    assert "not as instructions" in good and "\n[1]\n<document " in good
    assert 'citation="Configuring Acme' in good
    assert "Flag not_covered" in weak.split("\n\n", 1)[0]
    assert zero.is_error  # type: ignore[attr-defined]
    assert "budget must be a positive number" in zero.content[0].text  # type: ignore[attr-defined]
    assert "Version used: 2.0" in only and "Flag" not in only  # the demo alone: they agree
    assert f'site="{demo[2]}"' in only
