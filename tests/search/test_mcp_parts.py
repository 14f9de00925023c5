"""get_page in parts and search_docs by site, over a real MCP session: a long crawled
page (Sphinx markup, 127.0.0.1) comes back in capped parts that add up to the page, or one
section at a time; `site` limits a search to one of several served outputs."""

from __future__ import annotations

import html
import re
from functools import partial
from pathlib import Path

import pytest

from docscrawl.search.pageparts import PAGE_CHARS
from tests.conftest import read_jsonl
from tests.search.conftest import BIG_PARAGRAPHS, PARTS
from tests.search.mcp_session import call, mcp_session

anyio = pytest.importorskip("anyio")
pytest.importorskip("mcp")

pytestmark = pytest.mark.e2e

QUOTED = re.compile(r"^<document ([^>]*)>\n(.*)\n</document>$", re.MULTILINE | re.DOTALL)
NEXT = re.compile(r"([\d,]+) more characters: call get_page again with the same (url|url and "
                  r"section) and offset=(\d+)")


def quoted(answer: str) -> tuple[dict[str, str], str]:
    """The answer's one quoted part: its attributes and text."""
    (attrs, text), = QUOTED.findall(answer)
    return {k: html.unescape(v) for k, v in re.findall(r'(\w+)="([^"]*)"', attrs)}, text


async def _read_parts(out: Path, url: str, **arguments: object) -> list[str]:
    answers = []
    async with mcp_session(out) as session:
        offset = 0
        while True:
            answer = await call(session, "get_page", url=url, offset=offset, **arguments)
            answers.append(answer)
            found = NEXT.search(answer)
            if found is None:
                return answers
            offset = int(found.group(3))


def test_long_page_comes_in_parts_that_add_up(altered: tuple[Path, str]) -> None:
    out, _ = altered
    page = next(p for p in read_jsonl(out / "pages.jsonl")
                if p["canonical_url"].endswith("/api/client.html"))
    markdown = page["markdown"]
    assert len(markdown) > 2 * PAGE_CHARS
    answers = anyio.run(_read_parts, out, page["canonical_url"] + "#part-20")
    assert len(answers) >= 3
    texts = [quoted(answer)[1] for answer in answers]
    assert all(len(text) <= PAGE_CHARS for text in texts)
    assert "".join(texts).strip("\n") == markdown.strip("\n")
    assert "".join(texts).count("\n## Part ") == PARTS
    first = answers[0]
    left = int(NEXT.search(first).group(1).replace(",", ""))
    assert left == len(markdown) - len(texts[0])
    assert f"of the page's {len(markdown):,}" in first
    assert "The URL's #fragment names the section" in first
    assert answers[-1].count("the last part.") == 1
    attrs, _ = quoted(first)
    assert attrs["page_chars"] == str(len(markdown)) and attrs["title"].startswith("Client")


def test_one_section_and_its_parts(altered: tuple[Path, str]) -> None:
    out, _ = altered
    url = next(p["canonical_url"] for p in read_jsonl(out / "pages.jsonl")
               if p["canonical_url"].endswith("/api/client.html"))
    small = anyio.run(partial(_read_parts, out, url, section="part-3"))
    assert len(small) == 1 and "All of the section at characters" in small[0]
    attrs, text = quoted(small[0])
    assert attrs["section"] == "part-3"
    assert text.startswith("## Part 3\n") and "## Part 4" not in text
    assert text.count("Part 3 paragraph") == 10

    big = anyio.run(partial(_read_parts, out, url, section="Big Section"))  # by heading text
    assert len(big) >= 2 and all("same url and section" in a for a in big[:-1])
    text = "".join(quoted(answer)[1] for answer in big)
    assert text.startswith("## Big section\n")
    assert text.count("Big paragraph") == BIG_PARAGRAPHS and "## Part" not in text


async def _site_calls(outs: list[Path], site: str) -> dict[str, object]:
    async with mcp_session(*outs) as session:
        return {"all": await call(session, "search_docs", query="client retries timeout",
                                  k=10),
                "one": await call(session, "search_docs", query="client retries timeout",
                                  k=10, site=site),
                "unknown": await session.call_tool("search_docs",
                                                   {"query": "client", "site": "nope"})}


def test_search_by_site(altered: tuple[Path, str], demo: tuple[Path, Path, str]) -> None:
    out, seed = altered
    _, demo_out, demo_seed = demo
    found = anyio.run(_site_calls, [demo_out, out], seed)
    sites = {name: set(re.findall(r'<document site="([^"]+)"', found[name]))
             for name in ("all", "one")}
    assert sites["all"] == {seed, demo_seed}
    assert sites["one"] == {seed}
    unknown = found["unknown"]
    assert unknown.is_error and "not served" in unknown.content[0].text
