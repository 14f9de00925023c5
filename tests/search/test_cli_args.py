"""`docscrawl search` as typed: a query that starts with `--` (after `--`, said in
`--help` and in the usage error), and a query nothing in the crawl answers, which says
"no good match" in the human output, in `--json` and in MCP's `search_docs`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.e2e

NONSENSE = "how do I bake sourdough bread"


def docscrawl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "docscrawl.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_a_query_that_starts_with_dashes(demo: tuple[Path, Path, str]) -> None:
    _, out, _ = demo
    helped = docscrawl("search", "--help").stdout
    assert "OUT [--] QUERY" in helped and "docscrawl search OUT -- --save-exact" in helped
    assert "'--'" in docscrawl("--help").stdout
    refused = docscrawl("search", str(out), "--timeout")
    assert refused.returncode == 2
    assert "the following arguments are required: query" in refused.stderr
    assert "docscrawl search OUT -- --save-exact" in refused.stderr
    found = docscrawl("search", str(out), "--json", "-k", "1", "--", "--timeout")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["url"].endswith("/docs/guide/configure.html#configuring-acme")


def test_no_good_match_in_human_output_and_json(demo: tuple[Path, Path, str]) -> None:
    _, out, _ = demo
    weak = docscrawl("search", str(out), NONSENSE)
    assert weak.returncode == 0
    lines = weak.stdout.splitlines()
    assert lines[1].startswith("# no good match: the results hold little of the query")
    assert lines[2].startswith("1. "), "the nearest results are still listed"
    strong = docscrawl("search", str(out), "configure timeout setting")
    assert "no good match" not in strong.stdout
    weak_json = [json.loads(line) for line in
                 docscrawl("search", str(out), NONSENSE, "--json").stdout.splitlines()]
    assert weak_json and all(r["no_good_match"] is True for r in weak_json)
    assert weak_json[0]["query_match"] < 0.6
    strong_json = [json.loads(line) for line in docscrawl(
        "search", str(out), "configure timeout setting", "--json").stdout.splitlines()]
    assert all(r["no_good_match"] is False for r in strong_json)
    assert strong_json[0]["query_match"] >= 0.6


def test_no_good_match_without_an_embedder(demo: tuple[Path, Path, str],
                                           tmp_path: Path) -> None:
    """Lexical only (its own threshold): a query that shares a word with one page and no
    more says so; a real one is not flagged."""
    _, out, _ = demo
    copy = tmp_path / "out"
    shutil.copytree(out, copy, ignore=shutil.ignore_patterns("search.*"))
    weak = docscrawl("search", str(copy), "tax deduction for home office",
                     "--embedder", "none")
    assert weak.returncode == 0
    assert "# no good match" in weak.stdout and "1. " in weak.stdout
    strong = docscrawl("search", str(copy), "install acme on linux", "--embedder", "none")
    assert "1. Installing Acme" in strong.stdout and "no good match" not in strong.stdout


async def _search_docs(out: Path, queries: list[str]) -> list[str]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "docscrawl.cli", "mcp", str(out)], cwd=str(ROOT))
    answers = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for query in queries:
            answer = await session.call_tool("search_docs", {"query": query, "k": 3})
            assert not answer.is_error
            answers.append(answer.content[0].text)
    return answers


def test_mcp_search_docs_says_no_good_match(demo: tuple[Path, Path, str]) -> None:
    pytest.importorskip("mcp")
    anyio = pytest.importorskip("anyio")
    _, out, _ = demo
    weak, strong = anyio.run(_search_docs, out, [NONSENSE, "configure timeout setting"])
    assert "no good match" in weak.split("\n", 1)[0] and "<document " in weak
    assert "no good match" not in strong
    assert "\n[1]\n<document" in strong and 'title="Configuring Acme' in strong
