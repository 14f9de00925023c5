"""Crawl a generated documentation site twice, then once more after changing some pages.

    python benchmarks/incremental.py [--pages 2000] [--change 20] [--site realistic|small]
                                     [--out /tmp/docscrawl-incremental]

`--site realistic` (default) uses the scale benchmark's generator (`benchmarks/scale/
gensite.py`: Python-docs-like pages of ~54 KB); `--site small` writes small pages of its own.

Prints one table with the CPU seconds (user + system of the crawl process) and wall time of
the first crawl, the unchanged re-crawl and the re-crawl after `--change` pages were edited,
and the ratio of each re-crawl's CPU to the first crawl's (target for the unchanged one:
at most 0.25). Checks that exactly the changed pages are `changed` in changes.jsonl and that
only their chunk ids are to add or delete. Figures go to OUT/incremental.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.scale import gensite  # noqa: E402
from docscrawl.demo.server import StaticSite  # noqa: E402

SECTIONS = ("guide", "reference", "howto", "api")


def page_html(n: int, pages: int, revision: int = 0) -> str:
    """A documentation page with a sidebar, breadcrumbs, headings, code and a table."""
    section = SECTIONS[n % len(SECTIONS)]
    sidebar = "".join(f'<li class="toctree-l1"><a href="/docs/p{(n + k) % pages}.html">'
                      f"Page {(n + k) % pages}</a></li>" for k in range(1, 31))
    edit = f" Revised text, revision {revision}." if revision else ""
    command = f"pip install bench-{n}"
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Topic {n} &mdash; Bench docs</title><meta name="generator" content="Sphinx 7.2.6"></head>
<body><div class="wy-grid-for-nav"><nav class="wy-nav-side"><div class="wy-menu wy-menu-vertical"
role="navigation" aria-label="Navigation menu"><ul>{sidebar}</ul></div></nav>
<section class="wy-nav-content-wrap"><div class="wy-nav-content">
<div role="navigation" aria-label="Page navigation"><ul class="wy-breadcrumbs"><li>
<a href="/docs/">Docs</a> &raquo; <a href="/docs/p{n - n % 10}.html">{section.title()}</a>
&raquo; Topic {n}</li></ul></div>
<div role="main" class="document"><div itemprop="articleBody"><section id="topic-{n}">
<h1>Topic {n}</h1><p>Topic {n} explains one part of the {section} of the bench project.{edit}</p>
<section id="install"><h2>Install</h2><p>Install the package for topic {n}:</p>
<div class="highlight-console"><div class="highlight"><pre><span class="gp">$ </span>{command}
</pre></div></div></section>
<section id="settings"><h2>Settings</h2><table class="docutils"><thead><tr><th>Name</th>
<th>Default</th></tr></thead><tbody><tr><td>workers</td><td>{n % 8 + 1}</td></tr>
<tr><td>timeout</td><td>{30 + n % 5}</td></tr></tbody></table>
<section id="advanced"><h3>Advanced</h3><p>{"Details about the advanced options. " * 12}</p>
</section></section></section></div></div>
<footer><a href="/docs/p{(n + 1) % pages}.html" rel="next">Next</a></footer>
</div></section></div></body></html>
"""


def generate(root: Path, pages: int) -> None:
    docs = root / "docs"
    docs.mkdir(parents=True)
    for n in range(pages):
        (docs / f"p{n}.html").write_text(page_html(n, pages), encoding="utf-8")
    links = "".join(f'<li><a href="p{n}.html">Topic {n}</a></li>' for n in range(0, pages, 50))
    (docs / "index.html").write_text(
        "<!DOCTYPE html><html><head><title>Bench docs</title></head><body><main><h1>Bench"
        f"</h1><ul>{links}</ul></main></body></html>", encoding="utf-8")


def crawl(site: str, out: Path) -> tuple[float, float]:
    """(CPU seconds of the crawl process, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    subprocess.run([sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={site}",
                    "-a", f"out={out}", "-s", "LOG_LEVEL=WARNING",
                    "-s", "DOCSCRAWL_PROGRESS_INTERVAL=0"], cwd=ROOT, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, time.monotonic() - began


def changes_of(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "changes.jsonl").open(encoding="utf-8")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--change", type=int, default=20)
    parser.add_argument("--site", choices=("realistic", "small"), default="realistic")
    parser.add_argument("--out", type=Path, default=Path("/tmp/docscrawl-incremental"))
    args = parser.parse_args(argv)
    shutil.rmtree(args.out, ignore_errors=True)
    root = args.out / "site"
    if args.site == "small":
        generate(root, args.pages)
        files = [root / "docs" / f"p{n}.html" for n in range(args.pages)]
        seed_path = "/docs/"
    else:
        gensite.generate(root, args.pages)
        files = [root / gensite.page_path(i) for i in range(1, args.pages)]
        seed_path = "/"
    crawl_out = args.out / "crawl"
    rows = []
    with StaticSite(root) as server:
        if args.site == "realistic":
            gensite.write_site_files(root, args.pages, server.url)
        site = f"{server.url}{seed_path}"
        for label in ("first crawl", "unchanged re-crawl"):
            cpu, wall = crawl(site, crawl_out)
            rows.append({"run": label, "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
                         "changes": _kinds(changes_of(crawl_out))})
        step = max(1, len(files) // args.change)
        edited = files[::step][: args.change]
        later = time.time() + 10
        for path in edited:
            edit_page(path, args.site, args.pages)
            os.utime(path, (later, later))
        cpu, wall = crawl(site, crawl_out)
        lines = changes_of(crawl_out)
        rows.append({"run": f"re-crawl, {args.change} pages edited", "cpu_s": round(cpu, 2),
                     "wall_s": round(wall, 2), "changes": _kinds(lines)})
    first = rows[0]["cpu_s"]
    for row in rows:
        row["cpu_ratio"] = round(row["cpu_s"] / first, 3) if first else None
    expected = {("/" + path.relative_to(root).as_posix()).removesuffix("index.html")
                for path in edited}
    got = {_path(line["canonical_url"]) for line in lines if line["change"] == "changed"}
    chunk_pages = _chunk_pages(crawl_out)
    touched = {chunk_pages.get(i) for line in lines
               for i in line["chunk_ids_to_add"]} - {None}
    checks = {"exactly_the_edited_pages_changed": got == expected,
              "chunks_to_add_only_from_edited_pages": touched <= expected,
              "unchanged_recrawl_cpu_at_most_0.25": rows[1]["cpu_ratio"] <= 0.25}
    print(f"{'run':34} {'CPU s':>8} {'wall s':>8} {'CPU ratio':>10}  changes")
    for row in rows:
        print(f"{row['run']:34} {row['cpu_s']:8.2f} {row['wall_s']:8.2f} "
              f"{row['cpu_ratio']:10.3f}  {row['changes']}")
    for name, ok in checks.items():
        print(f"{'ok ' if ok else 'NO '} {name}")
    (args.out / "incremental.json").write_text(
        json.dumps({"pages": args.pages, "changed": args.change, "runs": rows,
                    "checks": checks}, indent=2), encoding="utf-8")
    return 0


def _kinds(lines: list[dict]) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for line in lines:
        kinds[line["change"]] = kinds.get(line["change"], 0) + 1
    return kinds


def _chunk_pages(out: Path) -> dict[str, str]:
    """Chunk id -> page URL path, from chunks.jsonl."""
    pages = {}
    for line in (out / "chunks.jsonl").open(encoding="utf-8"):
        chunk = json.loads(line)
        pages[chunk["id"]] = _path(chunk["metadata"]["canonical_url"])
    return pages


def _path(url: str) -> str:
    return "/" + url.split("://", 1)[1].split("/", 1)[1]


def edit_page(path: Path, site: str, pages: int) -> None:
    """Change the text of one page's main content."""
    if site == "small":
        number = int(path.stem[1:])
        path.write_text(page_html(number, pages, revision=1), encoding="utf-8")
        return
    text = path.read_text(encoding="utf-8")
    main = text.index('role="main"')
    end = text.index("</p>", main)
    path.write_text(text[:end] + " Revised in this release." + text[end:], encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
