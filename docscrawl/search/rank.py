"""Ranking: version filter first, lexical and semantic candidates fused, then structure.

1. Version: an explicit `version` (normalized: `18.20.4` finds `v18.20.4`) filters before
   anything is ranked (an unknown one is an error). Without one, a version the index
   holds named in the query ("in 3.6") filters the same way when the index holds several
   (with one it says which release a page is about, "SciPy 1.10.1 Release Notes": see
   `_searched`); otherwise the site's default version (its start page's, else its most
   common) is preferred and the result says which.
2. Candidates: FTS5 bm25 over code-aware terms (title, headings, inbound anchor text,
   body) and cosine over the chunk vectors (and the section vectors), each its best
   `POOL`, unioned and fused (`fusion`: scores scaled per list, then weighted; the
   section list weighs more when no bm25 candidate holds much of the question).
3. Structure (`structure`): the support of the page's other matching sections, query
   words in the title or heading path, code chunks for command-like queries,
   `main_content` over other regions, aggregate pages (print views) below the pages they
   copy, release histories' entries below for a question naming no release; one result
   per section, a page's sections repeating a better one's headings
   (overloads) last, no page holding all of the first five; with section vectors, a
   page's sections ordered among its places by their section's cosine.
4. Match: how much of the query the best results hold (`match_strength`); under
   `NO_GOOD_MATCH` the result says there is no good match (its hits still listed).
"""

from __future__ import annotations

import json
import math
from typing import Any

from docscrawl.search.fields import CHUNK_OF_SQL, chunk_of, chunks_rows_filter, version_token
from docscrawl.search.fusion import (
    EVIDENCE_DEPTH,
    LEXICAL_WEIGHT,
    POOL,
    SEMANTIC_WEIGHT,
    fuse,
    section_gain,
)
from docscrawl.search.hits import Hit, Result
from docscrawl.search.index import SearchIndex
from docscrawl.search.schema import BM25_WEIGHTS
from docscrawl.search.sections import SECTION_WEIGHT, SECTION_WEIGHT_EXACT, section_scores
from docscrawl.search.structure import Ranked, structural
from docscrawl.search.tokenize import (
    command_like,
    fts_phrase,
    is_compound,
    names_identifier,
    query_terms,
    stem,
)
from docscrawl.search.vectors import load_vectors
from docscrawl.search.versions import VersionError as VersionError  # raised by resolve
from docscrawl.search.versions import (
    candidates,
    resolve,
    unversioned,
    version_named,
    without_version,
)

# bm25 of the `vocab` table (the words the site's index entries and summaries add to a
# chunk's own) is added to the chunk's bm25 times this
VOCAB_WEIGHT = 0.5
MATCH_BUDGET = 4000     # chunks bm25 scores per query at most (about), see _within_budget
COARSE_POOL = 400
MATCH_DEPTH = 5      # the results match_strength reads (whatever k is)
NO_GOOD_MATCH = 0.6  # match_strength under this: "no good match" (see docs/search.md)
NO_GOOD_MATCH_LEXICAL = 0.3  # the same without an embedder (term coverage alone)



def _weights() -> str:
    return ", ".join(str(float(w)) for w in BM25_WEIGHTS)


class Searcher:
    """Ranks the chunks of one index; holds the vector matrix in memory."""

    def __init__(self, index: SearchIndex) -> None:
        self.index = index
        self._matrix: Any = None
        self._coarse: Any = None
        self._counts: dict[str, int] = {}
        self._total: int | None = None
        self._sizes: dict[str, int] | None = None
        self._counts_sig: str | None = None
        self._rowids: Any = None
        self._versions: Any = None
        self._loaded_sig: str | None = None
        self._sections: tuple[Any, Any, Any] | None = None
        self._sections_sig: str | None = None

    def _vectors(self) -> tuple[Any, Any, Any, Any]:
        """Row ids, versions, the coarse and the full matrix (`load_vectors`), loaded
        again when the index changed."""
        sig = self.index.meta("signature")
        if self._matrix is None or sig != self._loaded_sig:
            self._rowids, self._versions, self._coarse, self._matrix = load_vectors(self.index)
            self._loaded_sig = sig
        return self._rowids, self._versions, self._coarse, self._matrix

    def section_list(self, query: str, version: str | None,
                     also: list[int]) -> list[tuple[int, float]]:
        """Chunks scored by their section's cosine to the query (`sections`): the first
        chunk of each of the best sections, and the chunks `also` names; best first."""
        model = self.index.sections
        if model is None:
            return []
        import numpy as np

        rowids, versions, _, _ = self._vectors()
        sig = self.index.meta("signature")
        if self._sections is None or sig != self._sections_sig:
            files = self.index.vector_files()
            self._sections = tuple(np.load(files[name], mmap_mode="r")
                                   for name in ("sections", "chunksec", "secfirst"))
            self._sections_sig = sig
        matrix, chunksec, first = self._sections
        if not len(rowids) or len(chunksec) != len(rowids):
            return []
        wanted = np.array(sorted(set(also)), dtype=np.int64)
        at = np.clip(np.searchsorted(rowids, wanted), 0, len(rowids) - 1)
        at = at[rowids[at] == wanted]
        allowed = versions[first] == version if version is not None else None
        positions, scores = section_scores(matrix, chunksec, first,
                                           model.embed([query])[0], allowed, at)
        if version is not None:
            keep = versions[positions] == version
            positions, scores = positions[keep], scores[keep]
        order = np.argsort(-scores, kind="stable")
        return [(int(rowids[positions[i]]), float(scores[i])) for i in order]

    def resolve_version(self, query: str, version: str | None) -> tuple[str | None, str]:
        """The version searched and why: asked for (`resolve`: any spelling of a label
        the index holds), named in the query (an index of several versions only: in a
        one-version index a number is the text sought, "SciPy 1.10.1 Release Notes"),
        the site's default, or none."""
        known = self.index.versions()
        default = self.index.default_version()
        if version is not None:
            return resolve(version, known, default), "filter"
        named = version_named(query, known) if len(known) > 1 else None
        if named is not None:
            return named, "query"
        return (default, "default") if default and len(known) > 1 else (default, "none")

    def holds_version(self, version: str) -> bool:
        """Whether `version` names a version of the index (one, or several: ambiguous)."""
        return bool(candidates(version, self.index.versions(), self.index.default_version()))

    def lexical(self, terms: list[str], version: str | None) -> list[tuple[int, float]]:
        """bm25 candidates for the query terms ORed (after `_within_budget`)."""
        terms = self._within_budget(terms)
        if not terms:
            return []
        expression = " OR ".join(fts_phrase(t) for t in terms)
        if version is not None:
            expression = f"ver : {fts_phrase(version_token(version))} AND ({expression})"
        try:
            rows = self.index.db.execute(
                f"SELECT rowid, bm25(fts, {_weights()}) AS score FROM fts WHERE fts MATCH ? "
                "ORDER BY score LIMIT ?", (expression, 2 * POOL)).fetchall()
        except Exception:  # an FTS syntax corner case: search the plain words alone
            plain = [t for t in terms if t.isalnum()]
            if not plain or plain == terms:
                return []
            return self.lexical(plain, version)
        best: dict[int, float] = {}  # a chunk's best window
        for fts_rowid, score in rows:
            best.setdefault(chunk_of(int(fts_rowid)), -float(score))
        best = dict(list(best.items())[:POOL])
        # what the site's own indexes call a chunk: added, and a chunk found by it alone
        # (its text says "DO", the index "anonymous code blocks") is a candidate too
        named = self.index.db.execute(
            "SELECT rowid, bm25(vocab) AS score FROM vocab WHERE vocab MATCH ? "
            "ORDER BY score LIMIT ?", (expression, POOL)).fetchall()
        for rowid, score in named:
            best[int(rowid)] = best.get(int(rowid), 0.0) - VOCAB_WEIGHT * float(score)
        return sorted(best.items(), key=lambda item: item[1], reverse=True)[:POOL]

    def _within_budget(self, terms: list[str]) -> list[str]:
        """Scoring a match costs far more than finding it: when the terms' chunk counts
        add up past MATCH_BUDGET, the commonest terms (which weigh least in bm25) are
        left out, keeping at least the two rarest."""
        counts = {term: self._doc_count(term) for term in terms}
        if sum(counts.values()) <= MATCH_BUDGET:
            return [t for t in terms if counts[t]]
        kept, total = [], 0
        for rank, term in enumerate(sorted(terms, key=counts.__getitem__)):
            if counts[term] and (rank < 2 or total + counts[term] <= MATCH_BUDGET):
                kept.append(term)
                total += counts[term]
        return kept

    def _unversioned(self, section: str) -> str:
        return unversioned(section, self.index.versions())

    def _term_weights(self, terms: list[str]) -> dict[str, float]:
        """Stemmed query term -> its idf: a word every heading carries (the product's
        name) says little about which heading answers."""
        total = self._chunk_count()
        weights: dict[str, float] = {}
        for term in terms:
            count = self._doc_count(term)
            idf = _idf(count, total) if count else 0.0
            key = stem(term)
            weights[key] = max(weights.get(key, 0.0), idf)
        return weights

    def _chunk_count(self) -> int:
        self._current_counts()
        if self._total is None:
            self._total = self.index.count()
        return self._total

    def _current_counts(self) -> None:
        """Forget cached counts when the index changed since they were taken."""
        sig = self.index.meta("signature")
        if sig != self._counts_sig:
            self._counts, self._total, self._counts_sig = {}, None, sig
            self._sizes = None

    def _doc_count(self, term: str) -> int:
        self._current_counts()
        if term not in self._counts:
            try:
                self._counts[term] = int(self.index.db.execute(
                    "SELECT count(*) FROM fts WHERE fts MATCH ?", (fts_phrase(term),)
                ).fetchone()[0])
            except Exception:  # an FTS syntax corner case
                self._counts[term] = 0
        return self._counts[term]

    def semantic(self, query: str, version: str | None,
                 also: list[int] = ()) -> list[tuple[int, float]]:  # type: ignore[assignment]
        """Cosine candidates in two stages: a prefix of the vector over every chunk (the
        embedder's `coarse_dims`: wordllama's vectors are Matryoshka-trained, a prefix is
        a coarser vector; MiniLM's are scanned whole),
        then the full vectors over the best COARSE_POOL. The chunks `also` names (the
        lexical candidates) are scored too, after the pool, so fusion weighs every
        candidate on both scales instead of rewarding the overlap of two short lists."""
        embedder = self.index.embedder
        if embedder is None:
            return []
        import numpy as np

        rowids, versions, coarse, full = self._vectors()
        if not len(rowids):
            return []
        query_vec = embedder.embed([query])[0]
        scores = coarse @ query_vec[:coarse.shape[1]]
        if version is not None:
            scores = np.where(versions == version, scores, -np.inf)
        pool = min(COARSE_POOL, len(scores))
        top = np.argpartition(-scores, pool - 1)[:pool]
        top = top[np.isfinite(scores[top])]
        exact = full[top].astype(np.float32) @ query_vec
        order = np.argsort(-exact)[:POOL]
        found = [(int(rowids[top[i]]), float(exact[i])) for i in order]
        seen = {rowid for rowid, _ in found}
        wanted = np.array(sorted(set(also) - seen), dtype=np.int64)
        if len(wanted):
            at = np.clip(np.searchsorted(rowids, wanted), 0, len(rowids) - 1)
            at = at[rowids[at] == wanted]
            extra = full[at].astype(np.float32) @ query_vec
            found += sorted(((int(rowids[i]), float(c)) for i, c in zip(at, extra, strict=True)),
                            key=lambda pair: -pair[1])
        return found

    def search(self, query: str, *, version: str | None = None, k: int = 10) -> Result:
        """The best `k` sections for `query`, all read from one state of the index."""
        with self.index.snapshot():
            return self._search(query, version=version, k=k)

    def _search(self, query: str, *, version: str | None, k: int) -> Result:
        version, source = self.resolve_version(query, version)
        filtered = version if source in ("filter", "query") else None
        if source == "query" and version is not None:
            query = without_version(query, version) or query
        terms = query_terms(query, known=self._known)
        searched, lexical_terms = self._searched(query, terms)
        lexical = self.lexical(lexical_terms, filtered)
        semantic = self.semantic(searched, filtered, also=[rowid for rowid, _ in lexical])
        weight = getattr(self.index.embedder, "semantic_weight", SEMANTIC_WEIGHT)
        section_weight = self._section_weight(query, terms)
        sections = (self.section_list(searched, filtered,
                                      [rowid for rowid, _ in lexical + semantic])
                    if section_weight else [])  # (weight 0: the model is not run)
        if sections:  # the lexical list guessing: the section vectors weigh more
            section_weight *= section_gain(self.coverage(
                lexical_terms, [rowid for rowid, _ in lexical[:EVIDENCE_DEPTH]]))
        fused = fuse([(LEXICAL_WEIGHT, True, lexical), (weight, False, semantic),
                      (section_weight, False, sections)])
        aliases = self.index.default_aliases() if source == "default" else []
        ranked = self._structural(fused, terms, query, k=max(k, MATCH_DEPTH),
                                  preferred={version, *aliases} if source == "default" else None,
                                  section_cosines=dict(sections))
        match = self.match_strength(lexical_terms, [row[1] for row in ranked[:MATCH_DEPTH]],
                                    dict(semantic) if self.index.embedder else None)
        floor = (getattr(self.index.embedder, "no_good_match", NO_GOOD_MATCH)
                 if self.index.embedder else NO_GOOD_MATCH_LEXICAL)
        return Result(hits=self._hits(ranked[:k]), version=version, version_source=source,
                      aliases=aliases, match=match, no_good_match=match < floor)

    @staticmethod
    def _section_weight(query: str, terms: list[str]) -> float:
        """The section list's weight: SECTION_WEIGHT for a question in words, and
        SECTION_WEIGHT_EXACT for one that names an identifier or is a command, whose
        words are the page's own (bm25 and the chunk vectors find it; a section's
        summary pulls in sections about the same topic in other words)."""
        exact = command_like(query) or any(names_identifier(term) for term in terms)
        return SECTION_WEIGHT_EXACT if exact else SECTION_WEIGHT

    def _known(self, term: str) -> bool:
        return self._doc_count(term) > 0

    def _searched(self, query: str, terms: list[str]) -> tuple[str, list[str]]:
        """The text embedded and the terms bm25 searches. A version still in the query
        (the index's only one, or one beside `--version`) says which release a page is
        about ("SciPy 1.10.1 Release Notes") or only where to look ("requests 2.28"): it
        counts in titles and headings (`terms`), whole in bm25 ("1.10.1", never "1" and
        "10" apart, which match any number), and not in the embedded text."""
        own = version_named(query, self.index.versions())
        if own is None:
            return query, terms
        searched = without_version(query, own) or query
        plain = query_terms(searched, known=self._known)
        return searched, plain + [t for t in terms
                                  if is_compound(t) and t not in plain and self._known(t)]

    def match_strength(self, terms: list[str], rowids: list[int],
                       cosines: dict[int, float] | None) -> float:
        """How much of the query the best results hold: `coverage`, plus the highest
        cosine of one to the query (`cosines`; none without an embedder). The ranking
        scores cannot say this, being scaled to each query's best; this is absolute
        (calibrated in docs/search.md)."""
        if not rowids:
            return 0.0
        cosine = max((cosines.get(r, 0.0) for r in rowids), default=0.0) if cosines else 0.0
        return self.coverage(terms, rowids) + max(cosine, 0.0)

    def coverage(self, terms: list[str], rowids: list[int]) -> float:
        """The largest share of the query terms' weight (idf) one of `rowids` holds. A
        term the index lacks weighs the most: nothing answers it."""
        if not rowids:
            return 0.0
        total = self._chunk_count()
        weights = {term: _idf(self._doc_count(term), total) for term in terms}
        held = dict.fromkeys(rowids, 0.0)
        ranges, bounds = chunks_rows_filter(rowids)
        for term, weight in weights.items():
            if not self._doc_count(term):
                continue
            try:
                found = self.index.db.execute(
                    f"SELECT DISTINCT {CHUNK_OF_SQL} FROM fts WHERE fts MATCH ? "
                    f"AND ({ranges})", [fts_phrase(term), *bounds]).fetchall()
            except Exception:  # an FTS syntax corner case: counted as not held
                continue
            for (rowid,) in found:
                held[rowid] += weight
        return max(held.values()) / sum(weights.values()) if sum(weights.values()) else 0.0

    def _structural(self, fused: dict[int, float], terms: list[str], query: str, *,
                    preferred: set[str | None] | None, k: int,
                    section_cosines: dict[int, float] | None = None) -> list[Ranked]:
        """`structure.structural` over this index: its rank columns, the query terms'
        idf, sections compared without their version."""
        return structural(self.index.db, fused, self._term_weights(terms), terms, query,
                          preferred=preferred, k=k, unversioned=self._unversioned,
                          identifier=names_identifier, page_sizes=self._page_sizes(),
                          section_cosines=section_cosines)

    def _page_sizes(self) -> dict[str, int]:
        """Chunks per page URL, counted once per state of the index."""
        self._current_counts()
        if self._sizes is None:
            self._sizes = dict(self.index.db.execute(
                "SELECT page_url, count(*) FROM chunk_pages GROUP BY page_url").fetchall())
        return self._sizes

    def _hits(self, ranked: list[Ranked]) -> list[Hit]:
        """The ranked chunks with their JSON records."""
        if not ranked:
            return []
        lines = self.index.lines([row[1] for row in ranked])
        return [Hit(score=score, record=json.loads(lines[rowid]), page_aggregate_of=copies)
                for score, rowid, _page, copies in ranked]


def _idf(count: int, total: int) -> float:
    """bm25's idf of a term in `count` of `total` chunks (0 chunks: the most)."""
    return math.log(1 + (total - count + 0.5) / (count + 0.5))
