"""The documented token approximation."""

from __future__ import annotations

import pytest

from docscrawl.chunking.chunker import chunk_page
from docscrawl.chunking.units import count_tokens, split_table
from tests.chunking.pages import make_extract, words


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("   \n\t ", 0),
        ("Rotate keys every 90 days.", 6),  # 5 words + "."
        ("configuration", 2),  # 13 letters: one token per started 8
        ("abcdefgh", 1),
        ("abcdefghi", 2),
        ("snake_case_name", 5),  # snake, _, case, _, name
        ("def f(x):", 6),  # def f ( x ) :
        ("`--grace 7d`", 5),  # ` -- grace 7d `
        ("密钥轮换", 4),  # one per CJK character
        ("Schlüssel rotieren", 3),  # 9 letters -> 2, 8 letters -> 1
        ("| a | b |\n| --- | --- |", 10),  # a run of one symbol is one token
        ("```python", 2),
        ("__init__ ...", 4),
        ("-" * 20, 3),
    ],
)
def test_count_tokens(text: str, tokens: int) -> None:
    assert count_tokens(text) == tokens


def test_ascii_text_counts_as_the_general_rule_counts_it() -> None:
    """ASCII text takes its own path (`units._count_ascii`); the general rule's regex over
    the same texts gives the same count: random runs of letters, digits, `_`, symbols,
    whitespace and control characters, long and short."""
    import random

    from docscrawl.chunking.units import _TOKEN_RE, CHARS_PER_WORD_TOKEN

    def general(text: str) -> int:
        tokens = _TOKEN_RE.findall(text)
        return len(tokens) + sum((len(t) - 1) // CHARS_PER_WORD_TOKEN for t, _ in tokens)

    pieces = ["a", "Z", "9", "_", "-", "|", "`", ".", " ", "\n", "\t", "\x1c", "\x00",
              "\x7f", "#", "word", "configuration", "=" * 9, "_" * 12, "." * 17]
    rng = random.Random(26)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) * rng.choice((1, 1, 2, 9, 10)) for _ in range(12))
        assert count_tokens(text) == general(text), text


def test_every_ascii_character_counts_as_the_general_rule_counts_it() -> None:
    """The ASCII path's byte tables (`units._WORDS`, `_MARKS`) against the general rule,
    over random texts of every ASCII character and runs around the 8-character step."""
    import random

    from docscrawl.chunking.units import _TOKEN_RE, CHARS_PER_WORD_TOKEN

    def general(text: str) -> int:
        tokens = _TOKEN_RE.findall(text)
        return len(tokens) + sum((len(t) - 1) // CHARS_PER_WORD_TOKEN for t, _ in tokens)

    alphabet = [chr(i) for i in range(128)] + ["a" * 8, "9" * 7, "-" * 8, "_" * 16, "x" * 17]
    rng = random.Random(27)
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert count_tokens(text) == general(text), repr(text)


@pytest.mark.parametrize(
    ("markdown", "limit", "parts"),
    [
        ("not a table", 5, ["not a table"]),
        ("| h |\n| --- |\n| 1 |", 1, ["| h |\n| --- |\n| 1 |"]),  # one row: nothing to split
        (
            "| h |\n| --- |\n| 1 |\n| 2 |\n| 3 |",
            12,
            ["| h |\n| --- |\n| 1 |\n| 2 |", "| h |\n| --- |\n| 3 |"],
        ),
        (
            "Caption\n\n| h |\n| --- |\n| 1 |\n| 2 |",
            1,
            ["Caption\n\n| h |\n| --- |\n| 1 |", "Caption\n\n| h |\n| --- |\n| 2 |"],
        ),
    ],
)
def test_split_table(markdown: str, limit: int, parts: list[str]) -> None:
    assert split_table(markdown, limit=limit) == parts


@pytest.mark.parametrize("a, b", [
    ("word", "word"), ("---", "---"), ("日本", "語"), ("a_b", "_c"), ("```python", "x = 1"),
    ("configuration_file_name", "..."), ("", "text"),
])
def test_counts_add_up_over_a_blank_line_join(a: str, b: str) -> None:
    """Chunks count their tokens as the sum of their blocks' counts: that sum must equal
    the count of the blocks joined by a blank line."""
    assert count_tokens(f"{a}\n\n{b}") == count_tokens(a) + count_tokens(b)


def test_chunk_token_count_equals_counting_its_markdown() -> None:
    rows = "\n".join(f"| row {i} | {words(6)} |" for i in range(60))
    extract = make_extract(
        f"# Guide\n\n{words(300)}\n\n```python\n{'x = 1' + chr(10)}```\n\n## More\n\n"
        f"| a | b |\n| --- | --- |\n{rows}\n\n{words(900)}\n"
    )
    chunks = chunk_page(extract, page_id="p", canonical_url="http://h/p", title="T",
                        version=None, breadcrumbs=[], retrieved_at="t", content_hash="c",
                        target_tokens=200)
    assert len(chunks) > 2
    for chunk in chunks:
        assert chunk["token_count"] == count_tokens(chunk["markdown"])
