"""Crawl the Debian-packaged documentation sites served by ../shared/corpus/real-sites.sh and
measure how much of each site docscrawl reaches.

    python benchmarks/real_site_coverage.py [--sites scrapy-docs,flask-docs] [--out /tmp/rs]

For every site: pages written, URLs discovered, skip reasons, crawl time, and two coverage
figures over the HTML files on disk (files under `_sources/`, `_static/` and the like are
not pages): `coverage_all` = files that ended as a page or a merged alias / all files, and
`coverage_linked` = the same over the files an independent reference walk reaches by
following every `href="..."` from the start page on disk (orphans such as `404.html` or
`search.html`, which nothing links to, cannot be found by any crawler).
Figures are printed and written to OUT/coverage.json. Needs `real-sites.sh install` and
`real-sites.sh start` first.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.sitecoverage import html_files, linked_from_start, reached_paths, with_index  # noqa: E402

# name -> (start URL, mount path, HTML root on disk)
SITES = {
    "scrapy-docs": ("http://127.0.0.1:17101/en/2.8/", "/en/2.8/",
                    "/usr/share/doc/python-scrapy-doc/html"),
    "sphinx-docs": ("http://127.0.0.1:17102/sphinx/", "/sphinx/", "/usr/share/doc/sphinx-doc/html"),
    "flask-docs": ("http://127.0.0.1:17103/en/2.2.x/", "/en/2.2.x/",
                   "/usr/share/doc/python-flask-doc/html"),
    "cmake-docs": ("http://127.0.0.1:17104/cmake/help/v3.25/", "/cmake/help/v3.25/",
                   "/usr/share/doc/cmake-data/html"),
    "mkdocs-docs": ("http://127.0.0.1:17105/", "/", "/usr/share/doc/mkdocs/html"),
    "rustdoc-syn": ("http://127.0.0.1:17106/doc/syn/", "/doc/", "/usr/share/doc/cargo/doc"),
    "pytest-docs": ("http://127.0.0.1:17107/en/7.2.x/", "/en/7.2.x/",
                    "/usr/share/doc/python-pytest-doc/html"),
    "git-docs": ("http://127.0.0.1:17108/docs/", "/docs/", "/usr/share/doc/git-doc"),
    "glib-docs": ("http://127.0.0.1:17109/gtk-doc/glib/", "/gtk-doc/", "/usr/share/gtk-doc/html"),
}
# Search pages are client-side apps with no documentation text of their own.
def measure(name: str, out_root: Path) -> dict[str, object]:
    start, mount, disk = SITES[name]
    out = out_root / name
    began = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={start}", "-a",
         f"out={out}", "-s", "LOG_LEVEL=WARNING", "-s", "DOCSCRAWL_PROGRESS_INTERVAL=0"],
        cwd=ROOT, capture_output=True, text=True)
    elapsed = time.monotonic() - began
    if result.returncode != 0:
        return {"site": name, "error": result.stderr[-500:]}
    files = html_files(start, mount, Path(disk))
    reached, skips = reached_paths(out)
    reached = with_index(reached)
    missing = sorted(set(files) - reached)
    linked = linked_from_start(start, files)
    missing_linked = sorted(linked - reached)
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    return {
        "site": name,
        "start": start,
        "pages_written": run["pages_written"],
        "discovered": run["counts"]["discovered"],
        "html_files": len(files),
        "reached": len(files) - len(missing),
        "coverage_all": round((len(files) - len(missing)) / len(files), 4) if files else None,
        "linked_files": len(linked),
        "coverage_linked": round((len(linked) - len(missing_linked)) / len(linked), 4)
        if linked else None,
        "missing_linked": missing_linked[:10],
        "missing_examples": missing[:10],
        "skip_reasons": skips,
        "failure_reasons": run["counts"]["failure_reasons"],
        "crawl_s": round(elapsed, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", default=",".join(SITES))
    parser.add_argument("--out", type=Path, default=Path("/tmp/docscrawl-coverage"))
    args = parser.parse_args()
    results = []
    for name in args.sites.split(","):
        if not Path(SITES[name][2]).is_dir():
            print(f"{name}: not installed, skipped")
            continue
        figures = measure(name, args.out)
        results.append(figures)
        print(json.dumps(figures), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "coverage.json").write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
