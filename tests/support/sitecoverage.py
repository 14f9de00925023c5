"""Coverage of a crawl against a site's files on disk (a local build of the docs).

Used by `benchmarks/real_site_coverage.py` and the real-site tests: which HTML files of a
build directory ended as a page (or a merged alias), and which of them an independent
reference walk over the files' `href`s reaches from the start page.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from docscrawl.jsonl import read_jsonl

NOT_PAGES = ("_sources/", "_static/", "_images/", "_downloads/", "search-index", "__pycache__",
             "search.html")


def html_files(start: str, mount: str, disk_root: Path) -> dict[str, Path]:
    """URL path -> file, for the HTML files inside the crawl scope of `start`."""
    scope_path = urlsplit(start).path
    files = {}
    for path in disk_root.rglob("*.html"):
        rel = path.relative_to(disk_root).as_posix()
        url_path = mount + rel
        if not url_path.startswith(scope_path) or any(part in rel for part in NOT_PAGES):
            continue
        files[url_path] = path
    return files


HREF = re.compile(r"""href\s*=\s*["']([^"'#?]+)""", re.I)


def linked_from_start(start: str, files: dict[str, Path]) -> set[str]:
    """URL paths of the files reachable from the start page by any href, on disk."""
    first = urlsplit(start).path
    first = first + "index.html" if first.endswith("/") else first
    seen, queue = {first}, [first]
    while queue:
        current = queue.pop()
        path = files.get(current)
        if path is None:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for href in HREF.findall(text):
            target = urlsplit(urljoin("http://h" + current, unquote(href.strip())))
            if target.netloc != "h":
                continue
            url_path = target.path + ("index.html" if target.path.endswith("/") else "")
            if url_path in files and url_path not in seen:
                seen.add(url_path)
                queue.append(url_path)
    return seen


def reached_paths(out: Path) -> tuple[set[str], dict[str, int]]:
    """URL paths that ended as a page or an alias of one; skip reasons for the others."""
    reached: set[str] = set()
    for page in read_jsonl(out / "pages.jsonl"):
        for url in [*page["observed_urls"], page["final_url"], page["canonical_url"]]:
            reached.add(unquote(urlsplit(url).path))
    for event in read_jsonl(out / "crawl_log.jsonl"):
        if event["event"] == "duplicate" or (event["event"] == "skipped"
                                              and event["reason"] == "duplicate_url"):
            reached.add(unquote(urlsplit(event["url"]).path))
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    return reached, run["counts"]["skip_reasons"]


def with_index(paths: set[str]) -> set[str]:
    """`/x/` also counts as `/x/index.html`."""
    return paths | {p + "index.html" for p in paths if p.endswith("/")}
