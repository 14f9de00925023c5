"""Rendering cost, in one run: rendered pages/s and the browser's peak memory next to
plain-fetch pages/s on the same pages, plus what the idle download handler costs.

    .venv/bin/python benchmarks/render_bench.py [--pages 60] [--concurrency 4]

It writes a client-rendered site of N history-routed pages (the SPA fixture's app,
`fixtures/sites/spa/app/spa.js`, with generated Markdown) and a sitemap listing them all,
serves it on 127.0.0.1, and runs `scrapy crawl docs` three ways on the same pages:

* plain: `-a render=never` (the shells are fetched, nothing is rendered);
* rendered: `-a render=auto` (every shell is sparse, so every page is rendered), while the
  PSS of the crawl's child processes (Playwright's Node driver and Chromium) is sampled
  every 0.1 s;
* idle handler: the static demo site crawled with Scrapy's own HTTP handler, with
  docscrawl's lazy Playwright handler, and with scrapy-playwright's stock handler (which
  starts its driver when the engine starts), `render=never` each time.

Throughput is pages fetched (plain shells are content duplicates of each other, so pages
fetched, not pages written) over the span from the first page `fetched` to the last page
event of the crawl log (the steady state), and over the whole command's wall time. The
idle-handler crawls run interleaved, three times each; the median is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from docscrawl.demo.server import StaticSite  # noqa: E402

SPA_APP = ROOT / "fixtures" / "sites" / "spa" / "app"
DEMO = ROOT / "fixtures" / "sites" / "demo"
SHELL = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Bench</title></head>
<body><div id="app">Loading…</div>
<script>window.$docsify = {name: "Bench", routerMode: "history", root: "/b/",
  content: "/b/content/"};</script>
<script src="/app/spa.js"></script></body></html>
"""
PAGE_MD = """# Page {n}

Page {n} of the benchmark site explains one small part of a made-up tool. Its text is
long enough to count as an article, with a list, a second heading and a code block.

- the first point of page {n}
- the second point of page {n}

## Example {n}

```bash
tool run --page {n} --verbose
```
"""
HANDLERS = {
    "scrapy http11": "scrapy.core.downloader.handlers.http11.HTTP11DownloadHandler",
    "docscrawl lazy playwright": "docscrawl.render.playwright_handler.LazyPlaywrightHandler",
    "stock scrapy-playwright": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
}


def write_site(root: Path, pages: int) -> list[str]:
    """The generated SPA; returns the page paths."""
    shutil.copytree(SPA_APP, root / "app")
    content = root / "b" / "content"
    content.mkdir(parents=True)
    (content / "_sidebar.md").write_text("- [Home](/README)\n", encoding="utf-8")
    paths = []
    for n in range(pages):
        name = "README" if n == 0 else f"p{n}"
        (content / f"{name}.md").write_text(PAGE_MD.format(n=n), encoding="utf-8")
        folder = root / "b" if n == 0 else root / "b" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "index.html").write_text(SHELL, encoding="utf-8")
        paths.append("/b/" if n == 0 else f"/b/{name}/")
    urls = "".join(f"<url><loc>{{{{ORIGIN}}}}{p}</loc></url>" for p in paths)
    (root / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns='
        f'"http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>', encoding="utf-8")
    (root / "robots.txt").write_text("User-agent: *\nAllow: /\nSitemap: {{ORIGIN}}/sitemap.xml\n",
                                     encoding="utf-8")
    return paths


def descendants(pid: int) -> list[int]:
    """All descendant process ids of `pid` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class MemorySampler(threading.Thread):
    """Peak summed PSS of a process's descendants (the browser side of a crawl)."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_kib, self.peak_procs, self.stop = pid, 0, 0, threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            procs = descendants(self.pid)
            total = sum(pss_kib(p) for p in procs)
            if total > self.peak_kib:
                self.peak_kib, self.peak_procs = total, len(procs)
            time.sleep(0.1)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def crawl(site: str, out: Path, *args: str, settings: dict[str, str],
          sample: bool = False, tree: Path = ROOT) -> dict[str, float]:
    """One `scrapy crawl docs` of `site` with the docscrawl of `tree` (a checkout)."""
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={site}",
               "-a", f"out={out}", *[f"-a{a}" for a in args]]
    for key, value in {"LOG_LEVEL": "WARNING", "DOCSCRAWL_PROGRESS_INTERVAL": "0",
                       **settings}.items():
        command += ["-s", f"{key}={value}"]
    start = time.monotonic()
    cpu_before = _children_cpu()
    env = {**os.environ, "PYTHONPATH": str(tree)}
    process = subprocess.Popen(command, cwd=tree, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, env=env)
    sampler = MemorySampler(process.pid) if sample else None
    if sampler:
        sampler.start()
    _, stderr = process.communicate()
    wall = time.monotonic() - start
    cpu = _children_cpu() - cpu_before
    if sampler:
        sampler.stop.set()
        sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"crawl failed ({process.returncode}): {stderr[-2000:]}")
    log = [json.loads(line) for line in (out / "crawl_log.jsonl").open(encoding="utf-8")]
    stamps = [datetime.fromisoformat(e["ts"].replace("Z", "+00:00")) for e in log
              if e["event"] in ("fetched", "extracted", "duplicate") and e.get("parser") is None]
    pages = sum(1 for e in log if e["event"] == "fetched" and e.get("parser") is None)
    span = (max(stamps) - min(stamps)).total_seconds() if stamps else 0.0
    return {
        "pages": pages,
        "rendered": sum(1 for e in log if e["event"] == "rendered"),
        "wall_s": wall,
        "cpu_s": cpu,
        "steady_pages_s": pages / span if span else float("nan"),
        "wall_pages_s": pages / wall,
        "peak_mib": (sampler.peak_kib / 1024) if sampler else 0.0,
        "peak_procs": sampler.peak_procs if sampler else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=60)
    parser.add_argument("--concurrency", type=int, default=4,
                        help="PLAYWRIGHT_MAX_PAGES_PER_CONTEXT (browser pages at once)")
    parser.add_argument("--no-idle", action="store_true",
                        help="skip the idle download handler comparison")
    options = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="render-bench-") as tmp:
        tmp_path = Path(tmp)
        write_site(tmp_path / "site", options.pages)
        settings = {"PLAYWRIGHT_MAX_PAGES_PER_CONTEXT": str(options.concurrency)}
        with StaticSite(tmp_path / "site") as server:
            site = f"{server.url}/b/"
            plain = crawl(site, tmp_path / "plain", "render=never", settings=settings)
            rendered = crawl(site, tmp_path / "rendered", "render=auto", settings=settings,
                             sample=True)
        idle: dict[str, list[tuple[float, float]]] = {label: [] for label in HANDLERS}
        with StaticSite(DEMO) as demo:
            for run in range(0 if options.no_idle else 3):
                for label, handler in HANDLERS.items():
                    handlers = json.dumps({"http": handler, "https": handler})
                    out = tmp_path / f"{label.replace(' ', '_')}_{run}"
                    result = crawl(f"{demo.url}/docs/", out, "render=never",
                                   settings={"DOWNLOAD_HANDLERS": handlers})
                    idle[label].append((result["wall_s"], result["cpu_s"]))
    print(f"render benchmark: {options.pages} client-rendered pages, browser concurrency "
          f"{options.concurrency}, {os.cpu_count()} cores, load average {load:.1f} at start")
    print(f"{'mode':<10}{'pages':>7}{'rendered':>10}{'pages/s (steady)':>18}"
          f"{'pages/s (wall)':>16}{'wall s':>8}{'CPU s':>8}")
    for label, result in (("plain", plain), ("rendered", rendered)):
        print(f"{label:<10}{result['pages']:>7}{result['rendered']:>10}"
              f"{result['steady_pages_s']:>18.1f}{result['wall_pages_s']:>16.1f}"
              f"{result['wall_s']:>8.1f}{result['cpu_s']:>8.1f}")
    print(f"rendering is {plain['steady_pages_s'] / rendered['steady_pages_s']:.1f}x slower "
          f"per page (steady state)")
    print(f"browser peak memory (PSS of driver + Chromium, {rendered['peak_procs']} "
          f"processes): {rendered['peak_mib']:.0f} MiB")
    if options.no_idle:
        return
    print("idle download handler: static demo crawl, render=never, median of 3 runs:")
    for label, runs in idle.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"  {label:<28}wall {wall:5.2f} s   CPU {cpu:5.2f} s   (wall "
              + ", ".join(f"{w:.2f}" for w, _ in runs) + ")")


if __name__ == "__main__":
    main()
