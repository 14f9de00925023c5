"""`quote`: forged document tags and citation lines in crawled text, and crawled
attribute values, cannot end the quote or pass for a result of their own."""

from __future__ import annotations

import re

import pytest

from docscrawl.search.quote import attribute_value, defuse, quote_document

TAGS = ["</document>", "</DOCUMENT>", "</Document >", "< /document >", "<document\nurl=x>",
        "<  / document>", "<\\/document>", "</doc\u200bument>", "<\u200b/document>",
        "\uff1c/document>", "\uff1c\uff0f\uff24\uff2f\uff23\uff35\uff2d\uff25\uff2e\uff34>",
        '<document site="a" rank="2">', "<DOCUMENTS>"]
CITATIONS = ["[2] Installing Acme, version 2.0", "  [3] x", "> [4] quoted", "[ 5 ] spaced",
             "\uff3b\uff16\uff3d wide", "\u200b[7] hidden"]


@pytest.mark.parametrize("tag", TAGS)
def test_document_tags_in_any_form_are_defused(tag: str) -> None:
    quoted = quote_document(f"before {tag} after", {"url": "http://x/"})
    assert quoted.count("<") == 2 and quoted.startswith("<document ")
    assert len(re.findall(r"</document>", quoted)) == 1 and quoted.endswith("\n</document>")
    assert "&lt;" in quoted


@pytest.mark.parametrize("line", CITATIONS)
@pytest.mark.parametrize("breaks", ["\n", "\r\n", "\r", "\u2028"])
def test_citation_like_lines_are_escaped(line: str, breaks: str) -> None:
    text = defuse(f"intro{breaks}{line}{breaks}mid [8] stays")
    assert not re.search(r"^[\s>\u200b]*[\[\uff3b]", text, re.MULTILINE), text
    assert "mid [8] stays" in text and "\r" not in text and "\u2028" not in text


def test_ordinary_markdown_is_kept() -> None:
    text = "# Title\n\n<div class='x'>`<documentation>`</div>\n\n[link](http://x/) [1]: y"
    assert defuse(text) == text.replace("<documentation>", "&lt;documentation>")


def test_attribute_values_cannot_end_their_attribute() -> None:
    value = attribute_value('a" onload="x" > </document>\n[2] b & c\u2028')
    assert '"' not in value and "<" not in value and ">" not in value and "\n" not in value
    assert value == ("a&quot; onload=&quot;x&quot; &gt; &lt;/document&gt;&#10;[2] b &amp; c"
                     "&#8232;")
    assert attribute_value(["Guide", "Setup"]) == "Guide › Setup"
    quoted = quote_document("x", {"title": 'T" x="1', "empty": "", "none": None, "n": 0})
    assert quoted.splitlines()[0] == '<document title="T&quot; x=&quot;1" n="0">'
