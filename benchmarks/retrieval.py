"""Retrieval benchmark: questions written about pages of documentation sites, each with
the page and section that answers it, in four sets (`--set`):

    old      the 158 first questions (13 corpus sites; ranking was tuned on them)
    tune     retrieval_questions_new.jsonl: new questions on sites nobody tuned on, for tuning
    heldout  retrieval_heldout.jsonl: written first, never tuned on; its misses stay hidden
    all      the three together

    python -m benchmarks.retrieval --outputs /tmp/iss16 --set tune    # crawls in OUTPUTS/NAME
    python -m benchmarks.retrieval --outputs DIR --set all --crawl    # crawl missing sites first
    python -m benchmarks.retrieval --outputs DIR --scale 50000        # + latency on 50,000 chunks

Reports, per set and per question kind (how-to, concept, identifier, command,
version-bound), for
docscrawl search and for plain BM25 over the same chunks (FTS5's default tokenizer over the
chunk text, one field, the question's words ORed, stopwords dropped): page hit@1 and @5,
section hit@5, MRR@10 (rank of the first result on the right page), version precision@5
(version-bound questions: share of the top 5 in that version), and median / p95 query
latency in process. A question whose page is not in the crawl is reported and left out;
one whose section anchor the crawl did not record is reported and scored (its section is
hit only by a result URL carrying that anchor). Sites not in the corpus script are served
by the benchmark itself (benchmarks/question_sites.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from benchmarks.question_sites import corpus_sites, crawl_site, site_urls
from docscrawl.search import Searcher, SearchIndex
from docscrawl.search.tokenize import STOPWORDS

__all__ = ["corpus_sites", "crawl_site", "main", "run"]

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "retrieval_questions.jsonl"
# Questions on five more sites, written later to check that ranking changes generalize.
MORE_QUESTIONS = HERE / "retrieval_questions_more.jsonl"
NEW_QUESTIONS = HERE / "retrieval_questions_new.jsonl"
HELDOUT_QUESTIONS = HERE / "retrieval_heldout.jsonl"
SETS: dict[str, tuple[Path, ...]] = {
    "old": (QUESTIONS, MORE_QUESTIONS),
    "tune": (NEW_QUESTIONS,),
    "heldout": (HELDOUT_QUESTIONS,),
}
KINDS = ("how-to", "concept", "identifier", "command", "version-bound")
K = 10


@dataclass
class Scores:
    """Running totals for one system."""
    page1: int = 0
    page5: int = 0
    section5: int = 0
    rr: float = 0.0
    version_top5: list[float] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    n: int = 0

    def add(self, ranked: list[dict[str, Any]], question: dict[str, Any],
            site: SiteTruth, ms: float) -> None:
        self.n += 1
        self.latency_ms.append(ms)
        pages = [site.is_page(r, question) for r in ranked[:K]]
        self.page1 += bool(pages[:1] and pages[0])
        self.page5 += any(pages[:5])
        self.section5 += any(site.is_section(r, question) for r in ranked[:5])
        first = next((i for i, hit in enumerate(pages) if hit), None)
        self.rr += 0.0 if first is None else 1.0 / (first + 1)
        if question.get("version"):
            top = ranked[:5]
            self.version_top5.append(
                sum(r.get("version") == question["version"] for r in top) / len(top)
                if top else 0.0)

    def report(self) -> dict[str, Any]:
        n = max(self.n, 1)
        lat = sorted(self.latency_ms) or [0.0]
        return {
            "questions": self.n,
            "page_hit@1": round(self.page1 / n, 3),
            "page_hit@5": round(self.page5 / n, 3),
            "section_hit@5": round(self.section5 / n, 3),
            "mrr@10": round(self.rr / n, 3),
            "version_precision@5": round(statistics.mean(self.version_top5), 3)
            if self.version_top5 else None,
            "latency_ms_median": round(statistics.median(lat), 2),
            "latency_ms_p95": round(lat[int(0.95 * (len(lat) - 1))], 2),
        }


def _plain(text: str) -> str:
    """A heading's text compared loosely: spaces collapsed, permalink marks dropped."""
    return " ".join(text.split()).rstrip("¶#").strip().casefold()


class SiteTruth:
    """A crawl's pages and heading anchors, to judge results by page and section."""

    def __init__(self, out: Path, seed: str) -> None:
        self.seed = seed
        self.headings: dict[str, dict[str, list[str]]] = {}
        self.by_text: dict[str, dict[str, list[str]]] = {}
        with (out / "pages.jsonl").open(encoding="utf-8") as handle:
            for line in handle:
                page = json.loads(line)
                url = page["canonical_url"]
                self.headings[url] = {}
                self.by_text[url] = {}
                for h in page.get("headings") or ():
                    path = h.get("path") or [h["text"]]
                    if h.get("anchor"):
                        self.headings[url][h["anchor"]] = path
                    self.by_text[url].setdefault(_plain(h["text"]), path)

    def url(self, question: dict[str, Any]) -> str:
        """The answer page's URL: the page relative to the site's start URL."""
        return urljoin(self.seed, question["page"])

    def crawled(self, question: dict[str, Any]) -> bool:
        return self.url(question) in self.headings

    def section_path(self, question: dict[str, Any]) -> list[str] | None:
        """The answer section's heading path in the crawl: by its anchor, or, where the
        crawl did not record the anchor, by the heading's text (the question's `heading`)."""
        url = self.url(question)
        path = self.headings[url].get(question["section"])
        if path is None and question.get("heading"):
            path = self.by_text[url].get(_plain(question["heading"]))
        return path

    def anchor_recorded(self, question: dict[str, Any]) -> bool:
        """The section is the page's top (null) or one of its recorded heading anchors."""
        anchor = question["section"]
        return anchor is None or anchor in self.headings.get(self.url(question), {})

    def is_page(self, result: dict[str, Any], question: dict[str, Any]) -> bool:
        return str(result["url"]).split("#", 1)[0] == self.url(question)

    def is_section(self, result: dict[str, Any], question: dict[str, Any]) -> bool:
        """The result is, holds or lies inside the expected section (a null section: the
        page's top, so any result on the page)."""
        if not self.is_page(result, question):
            return False
        anchor = question["section"]
        if anchor is None:
            return True
        if str(result["url"]).endswith("#" + anchor):
            return True
        if any(s.get("anchor") == anchor for s in result.get("sections") or ()):
            return True
        want = self.section_path(question)
        if want is None:  # the crawl has no such heading: only the URL can say
            return False
        path = list(result.get("heading_path") or [])
        if path[: len(want)] == want:
            return True  # inside the section
        if want[: len(path)] == path:  # a parent chunk: does it hold the heading itself?
            text = str(result.get("text") or "")
            return any(line.lstrip("#").strip() == want[-1]
                       for line in text.splitlines() if line.startswith("#"))
        return False


class PlainBM25:
    """The baseline: FTS5 default tokenizer, bm25, chunk text as one field."""

    def __init__(self, out: Path) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(body, line UNINDEXED)")
        with (out / "chunks.jsonl").open(encoding="utf-8") as handle:
            self.db.executemany("INSERT INTO t VALUES(?, ?)", (
                (json.loads(line)["text"], line) for line in handle))

    def search(self, query: str, k: int = K) -> list[dict[str, Any]]:
        words = [w for w in "".join(c if c.isalnum() else " " for c in query.lower()).split()
                 if w not in STOPWORDS]
        if not words:
            return []
        rows = self.db.execute("SELECT line FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?",
                               (" OR ".join(f'"{w}"' for w in words), k)).fetchall()
        results = []
        for (line,) in rows:
            chunk = json.loads(line)
            meta = chunk["metadata"]
            results.append({"url": meta["source_url"], "heading_path": meta["heading_path"],
                            "sections": meta.get("sections") or [], "text": chunk["markdown"],
                            "version": meta.get("version")})
        return results


def question_kind(question: dict[str, Any]) -> str:
    """The question's kind (`unlabelled` for a question file written without kinds)."""
    return question.get("kind") or ("version-bound" if question.get("version")
                                    else "unlabelled")


def load_sets(name: str) -> dict[str, list[dict[str, Any]]]:
    """set name -> its questions (`all`: every set)."""
    names = list(SETS) if name == "all" else [name]
    return {set_name: [json.loads(line) for path in SETS[set_name]
                       for line in path.read_text(encoding="utf-8").splitlines() if line]
            for set_name in names}


@dataclass
class SetResult:
    """Scores of one question set, overall and per kind, for both systems."""
    ours: Scores = field(default_factory=Scores)
    plain: Scores = field(default_factory=Scores)
    ours_by_kind: dict[str, Scores] = field(default_factory=dict)
    plain_by_kind: dict[str, Scores] = field(default_factory=dict)
    ours_by_site: dict[str, Scores] = field(default_factory=dict)
    plain_by_site: dict[str, Scores] = field(default_factory=dict)
    page_misses: list[dict[str, Any]] = field(default_factory=list)
    section_misses: list[dict[str, Any]] = field(default_factory=list)

    def add(self, question: dict[str, Any], truth: SiteTruth, ours: list[dict[str, Any]],
            ours_ms: float, plain: list[dict[str, Any]], plain_ms: float) -> None:
        kind = question_kind(question)
        for scores, by_kind, by_site, ranked, ms in (
                (self.ours, self.ours_by_kind, self.ours_by_site, ours, ours_ms),
                (self.plain, self.plain_by_kind, self.plain_by_site, plain, plain_ms)):
            scores.add(ranked, question, truth, ms)
            by_kind.setdefault(kind, Scores()).add(ranked, question, truth, ms)
            by_site.setdefault(question["site"], Scores()).add(ranked, question, truth, ms)
        seed = truth.seed.rsplit("/", 1)[0] + "/"
        if not any(truth.is_page(r, question) for r in ours[:5]):
            self.page_misses.append({"site": question["site"], "q": question["q"],
                                     "want": question["page"],
                                     "got": [r["url"].replace(seed, "") for r in ours[:5]]})
        if not any(truth.is_section(r, question) for r in ours[:5]):
            self.section_misses.append({
                "site": question["site"], "q": question["q"],
                "want": f"{question['page']}#{question['section'] or ''}",
                "got": [r["url"].replace(seed, "") for r in ours[:3]]})

    def report(self, *, by_site: bool) -> dict[str, Any]:
        """Figures overall and per kind; per site too when `by_site`."""
        order = [kind for kind in (*KINDS, "unlabelled") if kind in self.ours_by_kind]
        report: dict[str, Any] = {}
        for system, overall, kinds, sites in (
                ("docscrawl", self.ours, self.ours_by_kind, self.ours_by_site),
                ("plain_bm25", self.plain, self.plain_by_kind, self.plain_by_site)):
            report[system] = {**overall.report(),
                              "by_kind": {kind: kinds[kind].report() for kind in order}}
            if by_site:
                report[system]["by_site"] = {site: sites[site].report() for site in sorted(sites)}
        return report


def run(outputs: Path, *, crawl: bool, embedder: str | None, set_name: str = "old",
        sites: tuple[str, ...] = ()) -> dict[str, Any]:
    """Score every question of the set(s) against the crawls in OUTPUTS/SITE."""
    sets = load_sets(set_name)
    urls = site_urls()
    results = {name: SetResult() for name in sets}
    skipped: list[dict[str, Any]] = []
    unrecorded: list[dict[str, Any]] = []
    by_site: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for name, questions in sets.items():
        for question in questions:
            if not sites or question["site"] in sites:
                by_site.setdefault(question["site"], []).append((name, question))
    for site, site_questions in by_site.items():
        out = outputs / site
        seed = urls.get(site)
        if seed is None:
            skipped += [{"set": s, "site": site, "q": q["q"], "why": "unknown site"}
                        for s, q in site_questions]
            continue
        if not (out / "chunks.jsonl").exists():
            if not crawl:
                skipped += [{"set": s, "site": site, "q": q["q"], "why": "site not crawled"}
                            for s, q in site_questions]
                continue
            crawl_site(site, seed, out)
        truth = SiteTruth(out, seed)
        searcher = Searcher(SearchIndex.open(out, embedder=embedder))
        searcher.search(site_questions[0][1]["q"])  # model and vectors load at the first query
        bm25 = PlainBM25(out)
        for which, question in site_questions:
            if not truth.crawled(question):
                skipped.append({"set": which, "site": site, "q": question["q"],
                                "why": f"page not in the crawl: {question['page']}"})
                continue
            if not truth.anchor_recorded(question):
                unrecorded.append({"set": which, "site": site, "q": question["q"],
                                   "anchor": f"{question['page']}#{question['section']}"})
            t0 = time.perf_counter()
            result = searcher.search(question["q"], k=K)
            ours_ms = (time.perf_counter() - t0) * 1000
            t0 = time.perf_counter()
            plain = bm25.search(question["q"])
            plain_ms = (time.perf_counter() - t0) * 1000
            results[which].add(question, truth, [hit.as_json() for hit in result.hits],
                                   ours_ms, plain, plain_ms)
    return {"sets": results, "skipped": skipped, "anchor_not_in_crawl": unrecorded}


def render_report(outcome: dict[str, Any], *, misses: bool,
                  show_heldout_misses: bool) -> dict[str, Any]:
    """The printable report: figures for every set (per site but for the held-out set);
    misses only when asked, and the held-out set's per-site figures, misses and the text
    of its skipped or unanchored questions only with `show_heldout_misses` (they are
    never read while tuning)."""
    report: dict[str, Any] = {"sets": {
        name: result.report(by_site=name != "heldout" or show_heldout_misses)
        for name, result in outcome["sets"].items()}}
    def hidden(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A held-out question's text and answer stay out of the notes too."""
        if show_heldout_misses:
            return entries
        return [{k: v for k, v in entry.items() if k not in ("q", "anchor")}
                if entry["set"] == "heldout" else entry for entry in entries]

    report["skipped"] = hidden(outcome["skipped"])
    report["anchor_not_in_crawl"] = hidden(outcome["anchor_not_in_crawl"])
    shown = {name: result for name, result in outcome["sets"].items()
             if (show_heldout_misses if name == "heldout" else misses)}
    if shown:
        report["misses"] = {name: {"page": result.page_misses,
                                   "section": result.section_misses}
                            for name, result in shown.items()}
    return report


FIGURES = ("page_hit@1", "page_hit@5", "section_hit@5", "mrr@10", "version_precision@5")


def markdown_table(report: dict[str, Any]) -> str:
    """One row per set, kind and system: the figures as the docs print them."""
    rows = ["| set | kind | system | questions | page hit@1 | page hit@5 | section hit@5 "
            "| MRR@10 | version prec.@5 |", "| --- | --- | --- | ---: | ---: | ---: | ---: "
            "| ---: | ---: |"]
    for set_name, figures in report["sets"].items():
        for system, label in (("docscrawl", "docscrawl search"), ("plain_bm25", "plain BM25")):
            entries = [("all", figures[system]), *figures[system]["by_kind"].items()]
            for kind, values in entries:
                cells = ["–" if values[f] is None else f"{values[f]:.3f}" for f in FIGURES]
                rows.append(f"| {set_name} | {kind} | {label} | {values['questions']} | "
                            + " | ".join(cells) + " |")
    return "\n".join(rows)


def scale_latency(outputs: Path, chunks: int, embedder: str | None) -> dict[str, Any]:
    """Query latency on an index of `chunks` chunks: the crawled chunks, repeated under
    distinct URLs until there are enough."""
    target = outputs / f"_scale_{chunks}"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir()
    sources = sorted(p.parent for p in outputs.glob("*/chunks.jsonl")
                     if not p.parent.name.startswith("_"))
    written = 0
    with (target / "chunks.jsonl").open("w") as dst, (target / "pages.jsonl").open("w") as pages:
        copy = 0
        while written < chunks:
            for source in sources:
                with (source / "chunks.jsonl").open() as src:
                    for line in src:
                        if written >= chunks:
                            break
                        record = json.loads(line)
                        record["id"] = f"{record['id']}-{copy}"
                        meta = record["metadata"]
                        meta["canonical_url"] = f"{meta['canonical_url']}?copy={copy}"
                        meta["source_url"] = meta["canonical_url"]
                        dst.write(json.dumps(record) + "\n")
                        written += 1
            copy += 1
        pages.write(json.dumps({"canonical_url": "x", "version": {"value": None}}) + "\n")
    t0 = time.process_time()
    index = SearchIndex.open(target, embedder=embedder)
    build_cpu = time.process_time() - t0
    searcher = Searcher(index)
    questions = [json.loads(line)["q"] for line in QUESTIONS.read_text().splitlines() if line]
    searcher.search(questions[0])  # loads the vectors once
    latencies, cpu = [], []
    for question in questions:
        t0, c0 = time.perf_counter(), time.process_time()
        searcher.search(question, k=K)
        latencies.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    latencies.sort()
    return {"chunks": index.count(), "build_cpu_s": round(build_cpu, 1),
            "latency_ms_median": round(statistics.median(latencies), 2),
            "latency_ms_p95": round(latencies[int(0.95 * (len(latencies) - 1))], 2),
            "cpu_ms_median": round(statistics.median(cpu), 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Retrieval benchmark: how often docscrawl search and plain BM25 find "
                    "the page and section that answer each question of a question set.",
        epilog="The held-out set's misses are never printed unless --show-heldout-misses is "
               "given: it measures what tuning on the other sets did, so nobody reads them "
               "while tuning. --misses lists the other sets' misses.")
    parser.add_argument("--outputs", type=Path, required=True,
                        help="directory holding one crawl output per site name")
    parser.add_argument("--set", dest="set_name", default="old",
                        choices=(*SETS, "all"), help="question set (default: old)")
    parser.add_argument("--site", action="append", default=[],
                        help="only this site's questions (repeatable)")
    parser.add_argument("--crawl", action="store_true", help="crawl sites not there yet")
    parser.add_argument("--embedder", help="as `docscrawl search --embedder`")
    parser.add_argument("--scale", type=int, default=0, help="also time queries on N chunks")
    parser.add_argument("--misses", action="store_true",
                        help="list page and section misses (not the held-out set's)")
    parser.add_argument("--show-heldout-misses", action="store_true",
                        help="also list the held-out set's misses (never while tuning)")
    parser.add_argument("--table", action="store_true",
                        help="print the figures as a Markdown table instead of JSON")
    args = parser.parse_args(argv)
    outcome = run(args.outputs, crawl=args.crawl, embedder=args.embedder,
                  set_name=args.set_name, sites=tuple(args.site))
    report = render_report(outcome, misses=args.misses,
                           show_heldout_misses=args.show_heldout_misses)
    if args.scale:
        report["scale"] = scale_latency(args.outputs, args.scale, args.embedder)
    if args.table:
        print(markdown_table(report))
        for entry in report["skipped"]:
            print(f"skipped ({entry['set']}, {entry['site']}): {entry['why']}")
        print(f"{len(report['anchor_not_in_crawl'])} questions whose section anchor the "
              "crawl did not record")
    else:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
