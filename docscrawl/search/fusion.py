"""Fusion: the candidate lists (bm25, the chunk vectors' cosine, the section vectors'
cosine) scaled each to about [0, 1], weighted and added into one score per chunk.

The section list's weight follows the lexical evidence (`section_gain`): when no bm25
candidate holds much of the question's weight (its idf), the question shares few words
with any chunk and bm25's first places are chance matches (bm25 is scaled as a share of
its best, which scores 1 whether it holds the whole question or one word of it), so a
sentence model's reading of the sections weighs more; when one holds most of it, the
weights stay.
"""

from __future__ import annotations

POOL = 100              # candidates per list
LEXICAL_WEIGHT = 1.0
SEMANTIC_WEIGHT = 0.7   # the cosine list's weight when the embedder names none
# the bm25 candidates whose coverage of the question's idf is the lexical evidence
# (5, 10 and 30 gave the same figures on the tune and old sets)
EVIDENCE_DEPTH = 10
# the section list's weight is raised by up to this share when no bm25 candidate holds any
# of the question's weight (tune / old page hit@1 with wordllama+minilm, docs/search.md
# ranking step 10: 0 0.621 / 0.816, 0.5 0.641 / 0.816, 1.0 0.641 / 0.823 (tune section
# hit@5 -1), 2.0 0.641 / 0.816 (tune section hit@5 -3, old page hit@5 -1))
WEAK_LEXICAL = 0.5


def section_gain(coverage: float) -> float:
    """The section list's weight factor for a question whose best bm25 candidates hold
    `coverage` (0-1) of its idf: 1 + WEAK_LEXICAL x the share none of them holds."""
    return 1.0 + WEAK_LEXICAL * (1.0 - min(1.0, max(0.0, coverage)))


def fuse(lists: list[tuple[float, bool, list[tuple[int, float]]]]) -> dict[int, float]:
    """Union of candidate lists (best first), each weighted and scaled to about [0, 1]:
    a list whose scores have a natural zero (bm25: no match) as a share of its best, so
    the second of two matches keeps its strength; one without (cosine, whose values
    crowd together) min-max over the pool, to [0.05, 1.05] (the floor marks "found at
    all"). A candidate found by one retriever only keeps its own evidence."""
    fused: dict[int, float] = {}
    for weight, has_zero, ranked in lists:
        if not ranked:
            continue
        top, low = ranked[0][1], ranked[min(len(ranked), POOL) - 1][1]
        for rowid, score in ranked:
            if has_zero:
                scaled = score / top if top > 0 else 0.0
            else:  # candidates past the pool (another list's) can fall below its floor
                scaled = max(0.0, 0.05 + (score - low) / ((top - low) or 1.0))
            fused[rowid] = fused.get(rowid, 0.0) + weight * scaled
    return fused
