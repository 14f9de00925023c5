"""CPU of `extract_page` alone, page by page, and whether a change keeps every result.

    .venv/bin/python benchmarks/extract_cpu.py [--gen-pages 300] [--per-site 25] [--passes 3]
        [--code /tmp/md30-base] [--profile OUT.prof] [--json OUT.json] [--stage structure]

The page set: `--gen-pages` pages of the generated site (`--generated`, written by
`benchmarks/scale/gensite.py`) and `--per-site` pages of every corpus site whose HTML is on
disk (`../shared/corpus/real-sites.sh`, `benchmarks/corpus/more-sites.sh`: the files those
servers serve, read from disk under the URL the server gives them), evenly spread over each
site's sorted file list. Each page is decoded as Scrapy decodes a `text/html` response
without a charset and parsed with `extract.tree.html_root`, as the crawl parses. Per site
(the generated site is one), a template table learns from the site's first 12 pages
extracted cold (as the crawl's warm-up does) and is frozen; then each pass parses every page,
computes `page_structure` (both untimed: the spider's work) and times `extract_page(root, url,
structure=..., template_table=table)` with `time.process_time()`, as the extraction pipeline
calls it. A page's figure is the median of its passes; a family's is the mean of its pages'.
Each pass starts with docscrawl's `lru_cache`s empty (a crawl meets each page once).
`corpus` and `all` are means over pages, so a few huge pages (the Go spec, R's manuals)
weigh much; the geometric mean of the families' ratios weighs each family once.

Every result is kept as a digest of its JSON, field by field (`dataclasses.asdict`). With
`--code DIR` (another checkout, e.g. `git worktree add /tmp/md30-base COMMIT`) the same runs
on both codes, each in its own process importing its own `docscrawl`, passes alternating
(A B B A ...); it prints the CPU ratio (this tree / DIR) per family and in total, and
whether every page's result is identical (differing fields named). `--profile OUT` runs one
pass of this tree with cProfile (a CPU clock) on around `extract_page` only and prints the
functions with the most self and inclusive time. Never commit the corpus HTML this reads.

`--stage structure` times the spider's structure pass and the page's contract links instead:
`page_structure` (the parse untimed) plus the `page_links` call inside `extract_page`; the
digests then also cover the structure (regions, main locator, warnings, excluded, title,
notes and main-content names) and the discovery links (`worker.link_facts`, computed
untimed between the two, as the spider does).
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import gc
import hashlib
import json
import os
import pstats
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPUS_SCRIPTS = (Path("/work/shared/corpus/real-sites.sh"),
                  ROOT / "benchmarks/corpus/more-sites.sh")
MORE_BUILD = Path(os.environ.get("MORE_SITES_DIR", "/tmp/docscrawl-more-sites")) / "build"
GENERATED = Path("/tmp/docscrawl-scale/site-2000-8")
GEN_ORIGIN = "http://127.0.0.1:8000/"
WARMUP_PAGES = 12  # `template.warmup.SAMPLE_PAGES`
_ROW = re.compile(r'^SITES="\n(.*?)"\n', re.S | re.M)

Page = tuple[str, str, Path]  # (family, URL, file)


def corpus_sites() -> list[tuple[str, str, Path, str]]:
    """(name, URL prefix, HTML root, start page) of every corpus site on disk."""
    sites = []
    for script in CORPUS_SCRIPTS:
        if not script.exists():
            continue
        block = _ROW.search(script.read_text())
        assert block is not None, f"no SITES table in {script}"
        for row in block.group(1).strip().splitlines():
            fields = row.split("|")
            name, port, mount, first = fields[:4]
            root = fields[5] if len(fields) > 6 else fields[4]
            path = MORE_BUILD / root[1:] if root.startswith("@") else Path(root)
            if path.is_dir():
                sites.append((name, f"http://127.0.0.1:{port}{mount}", path, first))
    return sites


def spread(files: list[Path], n: int) -> list[Path]:
    """`n` files evenly spread over `files` (all when fewer)."""
    if len(files) <= n:
        return files
    step = len(files) / n
    return [files[int(i * step)] for i in range(n)]


def page_set(args: argparse.Namespace) -> list[Page]:
    """The pages, family by family, each family's start page first (the warm-up learns
    from the first pages)."""
    pages: list[Page] = []
    if args.gen_pages and args.generated.is_dir():
        files = spread(sorted(args.generated.rglob("*.html")), args.gen_pages)
        pages += [("generated", GEN_ORIGIN + str(f.relative_to(args.generated)), f)
                  for f in files]
    if args.per_site:
        for name, prefix, root, first in corpus_sites():
            under = root / first if first.endswith("/") else root
            files = sorted(under.rglob("*.html"))
            start = root / (first if first and not first.endswith("/") else first + "index.html")
            chosen = spread([f for f in files if f != start], args.per_site - 1)
            if start.is_file():
                chosen = [start, *chosen]
            pages += [(name, prefix + str(f.relative_to(root)), f) for f in chosen]
    return pages


# --- the child: one code, its own process ----------------------------------------------


class Runner:
    """The page set loaded once, the template tables learned; runs timed passes."""

    def __init__(self, pages: list[Page], stage: str = "extract") -> None:
        from w3lib.encoding import html_to_unicode

        from docscrawl.extract.page import extract_page
        from docscrawl.extract.template.table import TemplateTable

        self.pages = [(family, url, html_to_unicode("text/html", path.read_bytes())[1])
                      for family, url, path in pages]
        self.stage = stage
        self.tables: dict[str, Any] = {}
        for family, url, text in self.pages:
            table = self.tables.setdefault(family, TemplateTable())
            if table.frozen:
                continue
            root, structure = self.parsed(url, text)
            table.observe(extract_page(root, url, structure=structure).signatures)
            if table.pages >= WARMUP_PAGES:
                table.freeze()
        for table in self.tables.values():
            table.freeze()
        gc.collect()
        gc.freeze()  # the page texts and tables stay out of every collection, as the
        # crawl keeps its start-up objects out (`DOCSCRAWL_GC_GEN0_THRESHOLD`)

    @staticmethod
    def parsed(url: str, text: str) -> tuple[Any, Any]:
        from docscrawl.extract.page import page_structure
        from docscrawl.extract.tree import html_root

        root = html_root(text, url)
        return root, page_structure(root, url)

    def one_pass(self, *, digests: bool,
                 profiler: cProfile.Profile | None = None) -> dict[str, Any]:
        """Process time of each page's `extract_page` (ms); the results' field digests.
        `profiler` is enabled around `extract_page` only."""
        from docscrawl.extract.page import extract_page

        if self.stage == "structure":
            return self.structure_pass(digests=digests, profiler=profiler)
        times: list[float] = []
        fields: list[dict[str, str]] = []
        clear_caches()
        gc.collect()
        for family, url, text in self.pages:
            root, structure = self.parsed(url, text)
            table = self.tables[family]
            if profiler is not None:
                profiler.enable()
            t0 = time.process_time()
            result = extract_page(root, url, structure=structure, template_table=table)
            times.append(1000 * (time.process_time() - t0))
            if profiler is not None:
                profiler.disable()
            if digests:
                fields.append(field_digests(result))
        tables = {family: digest(table.to_json()) for family, table in self.tables.items()}
        return {"times": times, "fields": fields, "tables": tables}


    def structure_pass(self, *, digests: bool,
                       profiler: cProfile.Profile | None = None) -> dict[str, Any]:
        """Process time of each page's `page_structure` plus its `page_links` (ms); digests
        of the structure, the discovery links and the `extract_page` result."""
        from docscrawl.extract import page as page_module
        from docscrawl.extract.tree import html_root
        from docscrawl.extract.worker import link_facts

        spent = [0.0]
        page_links = page_module.page_links

        def timed_links(*args: Any, **kwargs: Any) -> Any:
            if profiler is not None:
                profiler.enable()
            t0 = time.process_time()
            found = page_links(*args, **kwargs)
            spent[0] += time.process_time() - t0
            if profiler is not None:
                profiler.disable()
            return found

        times: list[float] = []
        fields: list[dict[str, str]] = []
        clear_caches()
        gc.collect()
        page_module.page_links = timed_links  # type: ignore[assignment]
        try:
            for family, url, text in self.pages:
                root = html_root(text, url)
                if profiler is not None:
                    profiler.enable()
                t0 = time.process_time()
                structure = page_module.page_structure(root, url)
                spent[0] = time.process_time() - t0
                if profiler is not None:
                    profiler.disable()
                facts = link_facts(root, structure)  # the spider's discovery, untimed
                result = page_module.extract_page(root, url, structure=structure,
                                                  template_table=self.tables[family])
                times.append(1000 * spent[0])
                if digests:
                    fields.append({**field_digests(result), "structure": digest(
                        structure_facts(structure)), "link_facts": digest(repr(facts))})
        finally:
            page_module.page_links = page_links  # type: ignore[assignment]
        tables = {family: digest(table.to_json()) for family, table in self.tables.items()}
        return {"times": times, "fields": fields, "tables": tables}


def structure_facts(structure: Any) -> dict[str, Any]:
    """What a `PageStructure` holds, as comparable values (elements by their locator)."""
    from docscrawl.extract.main_content import locator

    regions = structure.regions
    return {
        "base": structure.base_url, "profile": structure.profile,
        "main": structure.main_locator, "warnings": repr(structure.warnings),
        "regions": repr(regions.regions),
        "kinds": [[locator(el), kind] for el, kind in regions.kinds.items()],
        "paging": [[locator(a), value] for a, value in regions.paging.items()],
        "excluded": [locator(el) for el in structure.excluded],
        "title_el": None if structure.title_el is None else locator(structure.title_el),
        "notes": [locator(el) for el in structure.notes],
        "main_names": list(structure.main_names),
    }


def clear_caches() -> None:
    """Empty docscrawl's `lru_cache`s: a pass meets each page once, as a crawl does, so a
    cache helps across pages (a sidebar's links) but not from the pass before."""
    for module in list(sys.modules.values()):
        if not getattr(module, "__name__", "").startswith("docscrawl"):
            continue
        for value in list(vars(module).values()):
            if callable(clear := getattr(value, "cache_clear", None)):
                clear()


def digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def field_digests(result: Any) -> dict[str, str]:
    return {name: digest(value) for name, value in dataclasses.asdict(result).items()}


def child(pages: list[Page], stage: str) -> int:
    """Serve passes over stdin/stdout: a line `pass` (or `pass digests`) in, JSON out."""
    runner = Runner(pages, stage)
    print(json.dumps({"ready": len(runner.pages)}), flush=True)
    for line in sys.stdin:
        command = line.split()
        if not command or command[0] != "pass":
            break
        print(json.dumps(runner.one_pass(digests="digests" in command)), flush=True)
    return 0


class Code:
    """One code under test, in its own process (`PYTHONPATH` = its checkout)."""

    def __init__(self, label: str, code: Path, argv: list[str]) -> None:
        self.label = label
        # the same hash seed for both codes: set orders and dict layouts alike
        env = {**os.environ, "PYTHONPATH": str(code), "PYTHONHASHSEED": "0"}
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), *argv, "--child", str(code)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=code)
        self.passes: list[dict[str, Any]] = []
        self.ready = self._read()["ready"]

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"{self.label}: the child process ended")
        result: dict[str, Any] = json.loads(line)
        return result

    def run_pass(self, *, digests: bool) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write("pass digests\n" if digests else "pass\n")
        self.proc.stdin.flush()
        result = self._read()
        self.passes.append(result)
        return result

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()

    def medians(self) -> list[float]:
        return [statistics.median(p["times"][i] for p in self.passes)
                for i in range(len(self.passes[0]["times"]))]


def by_family(pages: list[Page], medians: list[float]) -> dict[str, float]:
    """Mean of the per-page medians (ms), per family, and `all` and `corpus`."""
    groups: dict[str, list[float]] = {}
    for (family, _, _), value in zip(pages, medians, strict=True):
        groups.setdefault(family, []).append(value)
        groups.setdefault("all", []).append(value)
        if family != "generated":
            groups.setdefault("corpus", []).append(value)
    return {family: statistics.mean(values) for family, values in groups.items()}


def compare(pages: list[Page], a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Pages whose results differ, with the fields that differ; tables that differ."""
    diffs = []
    for (family, url, _), fa, fb in zip(pages, a["fields"], b["fields"], strict=True):
        if fa != fb:
            fields = sorted(k for k in fa.keys() | fb.keys() if fa.get(k) != fb.get(k))
            diffs.append(f"{family} {url}: {', '.join(fields)}")
    diffs += [f"template table of {family}" for family in a["tables"]
              if a["tables"][family] != b["tables"].get(family)]
    return diffs


def report(pages: list[Page], codes: list[Code], out: Path | None) -> None:
    tables = [by_family(pages, code.medians()) for code in codes]
    counts: dict[str, int] = {}
    for family, _, _ in pages:
        counts[family] = counts.get(family, 0) + 1
    counts["all"] = len(pages)
    counts["corpus"] = len(pages) - counts.get("generated", 0)
    head = "  ".join(f"{code.label:>9}" for code in codes)
    print(f"{'family':18} {'pages':>5}  {head}" + ("      ratio" if len(codes) == 2 else ""))
    for family in [*sorted(f for f in counts if f not in ("all", "corpus")), "corpus", "all"]:
        values = [t[family] for t in tables if family in t]
        if not values:
            continue
        line = f"{family:18} {counts[family]:5}  " + "  ".join(f"{v:9.2f}" for v in values)
        if len(values) == 2:
            line += f"  {values[0] / values[1]:9.3f}"
        print(line)
    if len(codes) == 2:
        ratios = [tables[0][f] / tables[1][f] for f in counts if f not in ("all", "corpus")]
        print(f"{'families (geometric mean of the ratios)':44} "
              f"{statistics.geometric_mean(ratios):9.3f}")
        diffs = compare(pages, codes[0].passes[0], codes[1].passes[0])
        families = len({family for family, _, _ in pages})
        print(f"identical: {len(pages) - len([d for d in diffs if ':' in d])} of {len(pages)} "
              f"pages of {families} families" + ("" if not diffs else f"; {len(diffs)} differ:"))
        for line in diffs[:40]:
            print("  " + line)
    if out is not None:
        out.write_text(json.dumps({
            "load_average": os.getloadavg(),
            "pages": [[family, url] for family, url, _ in pages],
            "codes": {code.label: {"ms_by_family": t, "medians": code.medians()}
                      for code, t in zip(codes, tables, strict=True)},
        }, indent=1))


def profile(pages: list[Page], out: Path, top: int, stage: str) -> None:
    runner = Runner(pages, stage)
    profiler = cProfile.Profile(time.process_time)
    runner.one_pass(digests=False, profiler=profiler)
    profiler.dump_stats(out)
    stats = pstats.Stats(str(out))
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(r"docscrawl/extract", top)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generated", type=Path, default=GENERATED)
    parser.add_argument("--gen-pages", type=int, default=300)
    parser.add_argument("--per-site", type=int, default=25)
    parser.add_argument("--passes", type=int, default=3, help="passes per code")
    parser.add_argument("--code", type=Path, help="a checkout to compare with")
    parser.add_argument("--profile", type=Path, help="write a cProfile of one pass here")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--stage", choices=("extract", "structure"), default="extract",
                        help="what is timed: extract_page, or page_structure + page_links")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    pages = page_set(args)
    if args.child is not None:
        return child(pages, args.stage)
    if args.profile is not None:
        sys.path.insert(0, str(ROOT))
        profile(pages, args.profile, args.top, args.stage)
        return 0
    shared = [a for a in argv if a not in ("--child",)]
    shared = _without(shared, ("--code", "--json", "--profile", "--top", "--passes"))
    codes = [Code("this", ROOT, shared)]
    if args.code is not None:
        codes.append(Code("base", args.code.resolve(), shared))
    print(f"{len(pages)} pages, {len({p[0] for p in pages})} families; load average "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    for rep in range(args.passes):
        order = codes if rep % 2 == 0 else codes[::-1]
        for code in order:
            code.run_pass(digests=rep == 0)
    for code in codes:
        code.close()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    report(pages, codes, args.json)
    return 0


def _without(argv: list[str], options: tuple[str, ...]) -> list[str]:
    """`argv` without the given options and their values (the children do not take them)."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in options:
            skip = "=" not in arg
            continue
        out.append(arg)
    return out


if __name__ == "__main__":
    sys.exit(main())
