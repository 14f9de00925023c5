"""Retrieval benchmark: questions written about pages of the corpus sites, each with the
page and section that answers it (`retrieval_questions.jsonl`).

    python -m benchmarks.retrieval --outputs /tmp/iss16          # crawls in OUTPUTS/NAME
    python -m benchmarks.retrieval --outputs DIR --crawl         # crawl missing sites first
    python -m benchmarks.retrieval --outputs DIR --scale 50000   # + latency on 50,000 chunks
    python -m benchmarks.retrieval --outputs DIR --more only     # the questions on 5 more sites

Reports, for docscrawl search and for plain BM25 over the same chunks (FTS5's default
tokenizer over the chunk text, one field, the question's words ORed, stopwords dropped):
page hit@1 and @5, section hit@5, MRR@10 (rank of the first result on the right page),
version precision@5 (version-bound questions: share of the top 5 in that version), and
median / p95 query latency in process. A question whose page or section is not in the
crawl is reported and left out (the crawls are capped at 400 pages).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docscrawl.search import Searcher, SearchIndex
from docscrawl.search.tokenize import STOPWORDS

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = Path(__file__).with_name("retrieval_questions.jsonl")
# Questions on sites the first set does not cover, written later to check that ranking
# changes generalize (`--more`).
MORE_QUESTIONS = Path(__file__).with_name("retrieval_questions_more.jsonl")
SITES_SCRIPT = ROOT.parent / "shared" / "corpus" / "real-sites.sh"
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


class SiteTruth:
    """A crawl's pages and heading anchors, to judge results by page and section."""

    def __init__(self, out: Path, seed: str) -> None:
        self.seed = seed
        self.headings: dict[str, dict[str, list[str]]] = {}
        with (out / "pages.jsonl").open(encoding="utf-8") as handle:
            for line in handle:
                page = json.loads(line)
                self.headings[page["canonical_url"]] = {
                    h["anchor"]: h.get("path") or [h["text"]]
                    for h in page.get("headings") or () if h.get("anchor")}

    def url(self, question: dict[str, Any]) -> str:
        return self.seed + question["page"]

    def valid(self, question: dict[str, Any]) -> str | None:
        anchors = self.headings.get(self.url(question))
        if anchors is None:
            return "page not crawled"
        return None if question["section"] in anchors else "section anchor not on the page"

    def is_page(self, result: dict[str, Any], question: dict[str, Any]) -> bool:
        return str(result["url"]).split("#", 1)[0] == self.url(question)

    def is_section(self, result: dict[str, Any], question: dict[str, Any]) -> bool:
        """The result is, holds or lies inside the expected section."""
        if not self.is_page(result, question):
            return False
        anchor = question["section"]
        if str(result["url"]).endswith("#" + anchor):
            return True
        if any(s.get("anchor") == anchor for s in result.get("sections") or ()):
            return True
        want = self.headings[self.url(question)][anchor]
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


def corpus_sites() -> dict[str, str]:
    """name -> start URL, from the corpus script."""
    listing = subprocess.run(["bash", str(SITES_SCRIPT), "list"], capture_output=True,
                             text=True, check=True).stdout
    return {line.split()[0]: line.split()[1] for line in listing.splitlines() if line.strip()}


def crawl_site(name: str, url: str, out: Path) -> None:
    subprocess.run([sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={url}",
                    "-a", f"out={out}", "-a", "render=never", "-a", "max_pages=400",
                    "-s", "LOG_LEVEL=WARNING"], cwd=ROOT, check=True)


def run(outputs: Path, *, crawl: bool, embedder: str | None,
        files: tuple[Path, ...] = (QUESTIONS,)) -> dict[str, Any]:
    questions = [json.loads(line) for path in files
                 for line in path.read_text().splitlines() if line]
    seeds = corpus_sites()
    ours, baseline = Scores(), Scores()
    skipped, misses, page_misses = [], [], []
    by_site: dict[str, list[dict[str, Any]]] = {}
    for question in questions:
        by_site.setdefault(question["site"], []).append(question)
    for name, site_questions in by_site.items():
        out = outputs / name
        seed = seeds[name]
        if not (out / "chunks.jsonl").exists():
            if not crawl:
                skipped += [(q["q"], "site not crawled") for q in site_questions]
                continue
            crawl_site(name, seed, out)
        truth = SiteTruth(out, seed)
        searcher = Searcher(SearchIndex.open(out, embedder=embedder))
        searcher.search(site_questions[0]["q"])  # model and vectors load at the first query
        bm25 = PlainBM25(out)
        for question in site_questions:
            why = truth.valid(question)
            if why:
                skipped.append((question["q"], why))
                continue
            t0 = time.perf_counter()
            result = searcher.search(question["q"], k=K)
            ms = (time.perf_counter() - t0) * 1000
            ranked = [hit.as_json() for hit in result.hits]
            ours.add(ranked, question, truth, ms)
            if not any(truth.is_page(r, question) for r in ranked[:5]):
                page_misses.append({"site": name, "q": question["q"], "want": question["page"],
                                    "got": [r["url"].replace(seed, "") for r in ranked[:5]]})
            if not any(truth.is_section(r, question) for r in ranked[:5]):
                misses.append({"site": name, "q": question["q"],
                               "want": f"{question['page']}#{question['section']}",
                               "got": [r["url"].replace(seed, "") for r in ranked[:3]]})
            t0 = time.perf_counter()
            plain = bm25.search(question["q"])
            baseline.add(plain, question, truth, (time.perf_counter() - t0) * 1000)
    return {"docscrawl": ours.report(), "plain_bm25": baseline.report(),
            "skipped": skipped, "section_misses": misses, "page_misses": page_misses}


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--outputs", type=Path, required=True,
                        help="directory holding one crawl output per site name")
    parser.add_argument("--crawl", action="store_true", help="crawl sites not there yet")
    parser.add_argument("--embedder", help="as `docscrawl search --embedder`")
    parser.add_argument("--scale", type=int, default=0, help="also time queries on N chunks")
    parser.add_argument("--misses", action="store_true", help="list page and section misses")
    parser.add_argument("--more", choices=("add", "only"),
                        help="the questions on further sites: added to the first set, or alone")
    args = parser.parse_args(argv)
    files = {None: (QUESTIONS,), "add": (QUESTIONS, MORE_QUESTIONS),
             "only": (MORE_QUESTIONS,)}[args.more]
    report = run(args.outputs, crawl=args.crawl, embedder=args.embedder, files=files)
    if args.scale:
        report["scale"] = scale_latency(args.outputs, args.scale, args.embedder)
    if not args.misses:
        report.pop("section_misses")
        report.pop("page_misses")
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
