"""`page_structure` + `page_links` of two checkouts in ONE process, page by page alternating.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/structure_ab.py /tmp/base [--gen-pages 300]
        [--per-site 25] [--reps 3] [--generated DIR]

`extract_cpu.py --stage structure --code DIR` alternates whole passes between two
processes: on a machine shared with other work the load drifts between passes and a
family's ratio moves by ±15%. Here the other checkout's `docscrawl` is copied under the
name `docscrawl_base` (its imports renamed) and imported beside this tree's, so each page
is parsed and run by both codes one after the other (the order flips page by page and
rep by rep): load drift hits both alike. Per page, as the crawl runs it: a fresh parse
(untimed), `page_structure` (timed), the spider's discovery links (`worker.link_facts`,
untimed), then `extract_page` with `page_links` timed inside it. Each rep starts with both
codes' `lru_cache`s empty. The first rep digests, for each code, the discovery links, every
`PageExtract`, the regions, warnings, region kinds by locator and the pagination verdicts:
the two digests must be equal. Page set: `extract_cpu.page_set`.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout's `docscrawl`
sys.path.insert(0, str(HERE))

import extract_cpu  # noqa: E402

CODES = ("docscrawl", "docscrawl_base")
_IMPORT = re.compile(r"\bdocscrawl(?=[.\s])")


def copy_renamed(checkout: Path, into: Path) -> None:
    """`checkout`'s `docscrawl` package as `docscrawl_base` under `into`."""
    target = into / "docscrawl_base"
    shutil.copytree(checkout / "docscrawl", target)
    for path in target.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        path.write_text(_IMPORT.sub("docscrawl_base", text), encoding="utf-8")


class Code:
    """One code's entry points, with `page_links` wrapped by a process-time counter."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.page: ModuleType = importlib.import_module(f"{name}.extract.page")
        self.tree: ModuleType = importlib.import_module(f"{name}.extract.tree")
        self.worker: ModuleType = importlib.import_module(f"{name}.extract.worker")
        self.structure = self.links = 0.0
        self.digest = hashlib.sha256()
        original: Callable[..., Any] = self.page.page_links

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.process_time()
            found = original(*args, **kwargs)
            self.links += time.process_time() - t0
            return found

        self.page.page_links = timed

    def clear_caches(self) -> None:
        for module in list(sys.modules.values()):
            if getattr(module, "__name__", "").split(".")[0] != self.name:
                continue
            for value in list(vars(module).values()):
                if callable(clear := getattr(value, "cache_clear", None)):
                    clear()

    def run(self, url: str, text: str, *, digest: bool) -> float:
        """CPU seconds of one page's structure pass and links."""
        links_before = self.links
        root = self.tree.html_root(text, url)
        t0 = time.process_time()
        structure = self.page.page_structure(root, url)
        spent = time.process_time() - t0
        self.structure += spent
        facts = self.worker.link_facts(root, structure)
        extract = self.page.extract_page(root, url, structure=structure)
        if digest:
            regions = structure.regions
            for value in (facts, extract, regions.regions, structure.warnings,
                          [(regions.locators.get(el), kind) for el, kind in regions.kinds.items()],
                          sorted((a.sourceline or 0, a.get("href") or "", verdict)
                                 for a, verdict in regions.paging.items())):
                self.digest.update(repr(value).encode("utf-8", "surrogatepass"))
        return spent + self.links - links_before


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path, help="the other checkout")
    parser.add_argument("--generated", type=Path, default=extract_cpu.GENERATED)
    parser.add_argument("--gen-pages", type=int, default=150)
    parser.add_argument("--per-site", type=int, default=8)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="structure-ab-"))
    try:
        copy_renamed(args.base.resolve(), scratch)
        sys.path.insert(0, str(scratch))
        return compare(args)
    finally:
        shutil.rmtree(scratch)


def compare(args: argparse.Namespace) -> int:
    from w3lib.encoding import html_to_unicode

    pages = [(family, url, html_to_unicode("text/html", path.read_bytes())[1])
             for family, url, path in extract_cpu.page_set(args)]
    codes = [Code(name) for name in CODES]
    by_family: dict[tuple[str, str], float] = {}
    for rep in range(args.reps):
        for code in codes:
            code.clear_caches()
        gc.collect()
        for i, (family, url, text) in enumerate(pages):
            for code in codes if (i + rep) % 2 == 0 else codes[::-1]:
                key = (code.name, family)
                by_family[key] = by_family.get(key, 0.0) + code.run(url, text, digest=rep == 0)
    this, base = codes
    n = len(pages) * args.reps
    print(f"{len(pages)} pages x {args.reps} reps; ms a page (structure + links)")
    for code in codes:
        print(f"  {code.name:15s} structure {1000 * code.structure / n:.3f}  links "
              f"{1000 * code.links / n:.3f}  digest {code.digest.hexdigest()[:12]}")
    print(f"  ratio structure {this.structure / base.structure:.3f}  links "
          f"{this.links / base.links:.3f}  both "
          f"{(this.structure + this.links) / (base.structure + base.links):.3f}")
    for family in sorted({family for _, family in by_family}):
        ratio = by_family[(this.name, family)] / by_family[(base.name, family)]
        print(f"    {family:18s} {ratio:.3f}")
    same = this.digest.hexdigest() == base.digest.hexdigest()
    print("identical results" if same else "RESULTS DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
