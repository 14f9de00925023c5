"""Section vectors: one short text per section, embedded by a stronger model than the
chunks' (`--embedder wordllama+minilm`).

The vocabulary gap between a question and its answer is mostly between the question and
a section's name and what it is about ("my table keeps growing after UPDATEs" and
"Recovering Disk Space"), not every line of the section's body. So the sentence model
reads one text per section, not per chunk: the page title (the site's own affixes left
out), the heading path, and the section's opening sentence. Many chunks share a section
(on the 26 corpus crawls 86k chunks hold 37k sections), so the cost is per section; the
section's cosine is fused into each of its chunks beside bm25 and the chunk vector.

Kept apart from the chunk vectors: table `sections` (section key -> its text's hash and
its row in `search.sections.npy`, the vectors' only copy) in the index;
`search.chunksec.npy` (each chunk's section row, in the order of `search.rowids.npy`)
beside it. A re-crawl embeds only sections whose text changed or that are new; the
others' rows are carried over (`vectors.section_arrays`). A back-of-book index's sections
are never answers: not embedded.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

# what a section's text holds of its body: its opening sentence (or this much of it)
LEAD_CHARS = 240
# the section model's token budget unless the spec names one (`wordllama+minilm:32`)
SECTION_TOKENS = 48
# the section cosine list's weight in the fusion (rank.py) for a question in words, and
# for one that names an identifier or is a command (`Searcher._section_weight`). One weight
# for both (0.5) lost the old set's page hit@1 (0.766 against wordllama's 0.791): section
# summaries pull exact questions to sections about the topic in other words. Tune / old
# page hit@1 at (words, exact): (0.5, 0.5) 0.592 / 0.766, (0.5, 0) 0.583 / 0.778,
# (1.0, 0) 0.612 / 0.810, (1.5, 0) 0.621 / 0.810 (old hit@5 0.949), (2.0, 0) 0.631 /
# 0.810 (old hit@5 0.937); docs/search.md, Section vectors
SECTION_WEIGHT = 1.0
SECTION_WEIGHT_EXACT = 0.0
# sections scanned per query whose first chunk becomes a candidate (a section the chunk
# lists missed)
SECTION_POOL = 100

_HEADING_LINE = re.compile(r"^#{1,6}[ \t]+.*$", re.M)
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"[*_`>|]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"(])")


def lead_sentence(markdown: str) -> str:
    """The first sentence of a chunk's prose: headings, code blocks, link destinations
    and inline markup left out; at most LEAD_CHARS (cut at a space)."""
    text = _FENCE.sub(" ", markdown)
    text = _HEADING_LINE.sub(" ", text)
    text = _MARKUP.sub("", _LINK.sub(r"\1", text))
    text = " ".join(text.split())
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    if len(first) > LEAD_CHARS:
        cut = first.rfind(" ", 0, LEAD_CHARS)
        first = first[:cut if cut > 0 else LEAD_CHARS]
    return first


def section_text(title: str, heading_path: Sequence[str], markdown: str) -> str:
    """What a section's vector is computed from: `title > heading > path: first sentence`
    (a first heading the title already holds is not repeated)."""
    path = [str(h) for h in heading_path]
    if path and title and (title.startswith(path[0]) or path[0].startswith(title)):
        title = "" if path[0].startswith(title) else title
        path = path if not title else path[1:]
    head = " > ".join(p for p in [title, *path] if p)
    lead = lead_sentence(markdown)
    return f"{head}: {lead}" if lead else head


def starts_section(markdown: str) -> bool:
    """Whether a chunk opens its section (its Markdown starts with the heading): its
    opening sentence is the section's."""
    return markdown.lstrip().startswith("#")


def text_sig(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def split_spec(spec: str) -> tuple[str, str | None]:
    """`wordllama+minilm:48` -> ("wordllama", "minilm:48"); no `+`: (spec, None)."""
    chunk, plus, section = spec.partition("+")
    return chunk.strip(), (section.strip() or None) if plus else None


def section_scores(section_matrix: Any, chunk_sections: Any, first_chunk: Any,
                   query_vec: Any, allowed: Any, also_at: Any) -> tuple[Any, Any]:
    """Cosine of the query to every section, as (positions, scores) over the chunk rows:
    the first chunk of each of the best SECTION_POOL sections (among `allowed` ones, a
    boolean per section or None), and the chunks at positions `also_at` (the other
    lists' candidates), each scored by its own section's cosine."""
    import numpy as np

    cosines = section_matrix @ query_vec
    ranked = cosines if allowed is None else np.where(allowed, cosines, -np.inf)
    pool = min(SECTION_POOL, len(ranked))
    top = np.argpartition(-ranked, pool - 1)[:pool] if pool else np.zeros(0, dtype=np.int64)
    top = top[np.isfinite(ranked[top])]
    top = top[np.argsort(-ranked[top])]
    positions = np.concatenate([first_chunk[top], np.asarray(also_at, dtype=np.int64)])
    positions = positions[np.sort(np.unique(positions, return_index=True)[1])]
    return positions, cosines[chunk_sections[positions]]
