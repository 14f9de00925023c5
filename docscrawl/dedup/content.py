"""Content identity: normalized Markdown and its hash.

Normalization rule (documented in the README): link and image destinations are dropped
(`[text](url)` -> `[text]`: the same page served at `/latest/x` and `/x` resolves its
relative links differently), line endings become `\\n`, trailing spaces are dropped, runs of
blank lines collapse to one, leading/trailing blank lines go. Two pages whose normalized
Markdown is equal have the same `content_hash`.
"""

from __future__ import annotations

import hashlib
import re

from docscrawl.chunking.volatile import normalize_for_hash

_BLANK_RUNS = re.compile(r"\n{3,}")
# Possessive: a destination's end is the one `)` its characters allow, so nothing gives back
# (the same matches as `(?:[^()\s]|\([^()\s]*\))*`, a third of the time on a page's links).
_LINK_DESTINATION = re.compile(r'\]\((?:[^()\s]++|\([^()\s]*+\))*+(?:\s+"[^"\n]*")?\)')


def normalize_markdown(markdown: str) -> str:
    """Markdown with whitespace noise removed (see module docstring)."""
    text = _LINK_DESTINATION.sub("]", markdown)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = "\n".join([line.rstrip() for line in text.split("\n")])
    if "\n\n\n" in text:  # the regex scans every character to find none
        text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip("\n")


def sha256_id(text: str) -> str:
    """`sha256:<hex>` of a UTF-8 string."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(markdown: str) -> str:
    """`sha256:<hex>` of the normalized Markdown, volatile text ignored
    (`docscrawl.chunking.volatile`)."""
    return sha256_id(normalize_markdown(normalize_for_hash(markdown, mask_links=False)))


# The version a page belongs to is not read here: `docscrawl.extract.version` holds the one
# rule for a URL's version (`url_version`) and the deduplication key (`version_key`).
