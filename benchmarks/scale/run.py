"""Scale benchmark: docscrawl against a bare Scrapy spider on a generated docs site.

    .venv/bin/python benchmarks/scale/run.py                 # N = 2,000 and 10,000
    .venv/bin/python benchmarks/scale/run.py --n 50000       # the opt-in large run
    .venv/bin/python benchmarks/scale/run.py --quick         # one 500-page pair (the test)
    .venv/bin/python benchmarks/scale/run.py --n 2000 --inventory  # + `-a extract=off` runs
    .venv/bin/python benchmarks/scale/run.py --n 50000 --reps 1 --kinds docscrawl --no-recrawl
    .venv/bin/python benchmarks/scale/run.py --n 10000 --reps 1 --rss-every 5  # + RSS curves
    .venv/bin/python benchmarks/scale/run.py --profile --n 2000 --py-spy PATH  # hot spots
    .venv/bin/python benchmarks/scale/run.py --profile --n 2000 --cprofile  # CPU by stage

Cost on 2 shared cores (2026-11-29): N=2,000 with 3 pairs ~25 min, N=10,000 with
`--reps 1` ~30 min (docscrawl alone ~13 CPU minutes); `--quick` 1-3 min. `--profile` runs
one docscrawl crawl under py-spy (`--profile-recrawl`: the re-crawl; `--workers N`: with
N extraction workers; without it the crawl's default, `auto`; the crawler's own process is
profiled) and prints `hotspots.py`'s
summary; py-spy is not a project dependency (pip install it anywhere).

For each N: `gensite.py` writes the site (cached under the scratch dir), nginx serves it on a
free 127.0.0.1 port with its own config, pid, log and temp dirs under the scratch dir
(fallback when /usr/sbin/nginx is missing or `--server devserver`: `python -m
docscrawl.demo.server`, a threaded Python server; slower, and it shares the 2 cores, so its
figures are not comparable with nginx ones). Then, alternating (bare first on even
repetitions, docscrawl first on odd ones):

- bare: `scrapy runspider benchmarks/scale/bare_spider.py` from the scratch dir (outside
  any project), LinkExtractor + one Request per link, docscrawl's concurrency;
- docscrawl: `scrapy crawl docs -a site=... -a out=...` from the repository root, with the
  project's settings as a user gets them (only LOG_FILE is redirected; since 2026-12-05
  that is one extraction worker on a machine with two CPUs, `workers=auto`; `--workers
  0,1` adds `-a workers=N` and names the kinds `docscrawl_w0`, `docscrawl_w1`);
- after the first docscrawl run of each N, the incremental hook: the same command again on
  the same output dir (an unchanged re-crawl); its CPU is reported as a ratio to the first.

Both crawlers run on the interpreter that runs this script (`sys.executable`, recorded in
the JSON): run it from a venv of the interpreter users get, Debian's `/usr/bin/python3.11`
on the README's platform. Its build moves the ratio: a pyenv build without PGO runs bare
Scrapy's pure-Python work about a fifth slower and docscrawl's (more of it in lxml,
SQLite, hashing and the kernel) less so (docs/performance.md).

Each run is one child process reaped with `os.wait4`, whose rusage gives CPU seconds (user +
sys of the crawler; the server is not counted) and peak RSS; wall time is measured around
it. Per N the table shows medians over the repetitions and docscrawl/bare ratios (ratio of
the medians; per-pair ratios are in the JSON). Figures go to `--json` (default
SCRATCH/results.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import pwd
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

import gensite  # noqa: E402
import proctree  # noqa: E402
import rsscurve  # noqa: E402

from docscrawl.runs import unfinished_dir  # noqa: E402

NGINX = Path("/usr/sbin/nginx")
DEFAULT_SCRATCH = Path("/tmp/docscrawl-scale")
DEFAULT_N = (2000, 10_000)


@dataclass
class Run:
    """One crawl: what ran and what it cost."""

    kind: str  # bare | docscrawl | docscrawl_recrawl
    n: int
    rep: int
    pages: int
    cpu_s: float
    wall_s: float
    peak_rss_mb: float
    exit_status: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cpu_ms_per_page(self) -> float:
        return 1000 * self.cpu_s / self.pages if self.pages else float("nan")

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.wall_s if self.wall_s else float("nan")

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "cpu_ms_per_page": round(self.cpu_ms_per_page, 3),
                "pages_per_s": round(self.pages_per_s, 2)}


# -- servers ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with status {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listening on 127.0.0.1:{port} after {timeout}s")


NGINX_CONF = """\
user {user};
worker_processes 1;
daemon off;
pid {state}/nginx.pid;
error_log {state}/error.log warn;
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {state}/client_body;
    proxy_temp_path {state}/proxy;
    fastcgi_temp_path {state}/fastcgi;
    uwsgi_temp_path {state}/uwsgi;
    scgi_temp_path {state}/scgi;
    types {{ text/html html; application/xml xml; text/plain txt; }}
    default_type application/octet-stream;
    sendfile on;
    keepalive_requests 100000;
    gzip {gzip};
    gzip_types application/xml text/plain;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        index index.html;
    }}
}}
"""


class SiteServer:
    """nginx (or the devserver fallback) serving `root` on a free loopback port."""

    def __init__(self, root: Path, state: Path, *, kind: str, gzip: bool = False) -> None:
        self.root, self.state, self.kind, self.gzip = root, state, kind, gzip
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> SiteServer:
        self.state.mkdir(parents=True, exist_ok=True)
        for attempt in range(5):
            self.port = free_port()
            try:
                self.proc = self._start()
                wait_listening(self.port, self.proc)
                return self
            except RuntimeError:
                self._stop()
                if attempt == 4:
                    raise
        return self

    def _start(self) -> subprocess.Popen[bytes]:
        log = (self.state / "server.out").open("ab")
        if self.kind == "nginx":
            conf = self.state / "nginx.conf"
            # workers run as the caller (not nobody): pytest's tmp dirs are mode 0700
            conf.write_text(NGINX_CONF.format(user=pwd.getpwuid(os.getuid()).pw_name,
                                              state=self.state, port=self.port,
                                              root=self.root, gzip="on" if self.gzip else "off"))
            return subprocess.Popen([str(NGINX), "-p", str(self.state), "-c", str(conf),
                                     "-e", str(self.state / "error.log")],
                                    stdout=log, stderr=log)
        return subprocess.Popen([sys.executable, "-m", "docscrawl.demo.server", str(self.root),
                                 "--port", str(self.port)], cwd=ROOT, stdout=log, stderr=log)

    def _stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGQUIT if self.kind == "nginx" else signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __exit__(self, *exc: object) -> None:
        self._stop()


# -- measured runs ------------------------------------------------------------------------


def vm_rss_mb(pid: int) -> float | None:
    """The process's resident set now (VmRSS of /proc/PID/status), None once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


@dataclass(frozen=True)
class Usage:
    """What a finished child cost, from its rusage. The kernel's share and the page faults
    are mostly the output's writes and the heap's growth: bare Scrapy writes nothing."""

    cpu_s: float
    sys_cpu_s: float
    peak_rss_mb: float
    minor_faults: int

    @classmethod
    def of(cls, usage: Any) -> Usage:
        return cls(usage.ru_utime + usage.ru_stime, usage.ru_stime, usage.ru_maxrss / 1024,
                   usage.ru_minflt)

    def as_json(self) -> dict[str, float]:
        return {"sys_cpu_s": round(self.sys_cpu_s, 2), "minor_faults": self.minor_faults}


TREE_EVERY = 0.5  # seconds between two samples of the crawler's process tree


def measured(command: list[str], *, cwd: Path, log: Path, timeout: float,
             rss_every: float = 0.0, env: dict[str, str] | None = None,
             ) -> tuple[int, Usage, float, proctree.TreeSampler]:
    """Run one child; (exit status, its own rusage, wall s), and its process tree's
    samples (`proctree`: extraction workers' CPU, summed PSS).
    With `rss_every` (seconds), its RSS and CPU over time go to LOG.rss.tsv (seconds, MB,
    CPU s): a peak or a total alone does not say whether they grew with the pages or at
    the end."""
    with log.open("wb") as out:
        began = time.monotonic()
        proc = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                env=env)
        tree = proctree.TreeSampler(proc.pid)
        next_tree = began
        deadline = began + timeout
        samples = log.with_name(log.name + ".rss.tsv").open("w") if rss_every else None
        if samples:  # the start, to join samples with the crawl's log (rsscurve.py)
            samples.write(f"{rsscurve.START}{time.time() - (time.monotonic() - began):.1f}\n")
        next_sample = began
        try:
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() >= next_tree:
                    next_tree += TREE_EVERY
                    tree.sample()
                if samples and time.monotonic() >= next_sample:
                    next_sample += rss_every
                    rss, cpu = vm_rss_mb(proc.pid), proctree.cpu_s(proc.pid)
                    if rss is not None and cpu is not None:
                        samples.write(f"{time.monotonic() - began:.1f}\t{rss:.1f}"
                                      f"\t{cpu:.2f}\n")
                        samples.flush()
                if time.monotonic() > deadline:
                    proc.kill()
                    pid, status, usage = os.wait4(proc.pid, 0)
                    break
                time.sleep(0.05)
        except BaseException:  # interrupted: leave no crawler behind
            proc.kill()
            proc.wait()
            raise
        finally:
            if samples:
                samples.close()
        wall = time.monotonic() - began
    proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped: keep Popen quiet
    return proc.returncode, Usage.of(usage), wall, tree


def run_bare(site: str, n: int, rep: int, work: Path, timeout: float, *,
             rss_every: float = 0.0) -> Run:
    summary = work / f"bare-{n}-{rep}.json"
    summary.unlink(missing_ok=True)
    command = [sys.executable, "-m", "scrapy", "runspider", str(HERE / "bare_spider.py"),
               "-a", f"site={site}", "-a", f"summary={summary}"]
    status, usage, wall, tree = measured(
        command, cwd=work, log=work / f"bare-{n}-{rep}.log", timeout=timeout,
        rss_every=rss_every)
    info = json.loads(summary.read_text()) if summary.exists() else {}
    return Run("bare", n, rep, int(info.get("pages", 0)), usage.cpu_s, wall, usage.peak_rss_mb,
               status, {"requests_built": info.get("requests_built"), **usage.as_json(),
                        **tree.as_json()})


def run_docscrawl(site: str, n: int, rep: int, work: Path, out: Path, timeout: float, *,
                  kind: str = "docscrawl", fresh: bool = True, rss_every: float = 0.0,
                  workers: int | None = None) -> Run:
    """One docscrawl crawl; with `workers`, `-a workers=N` (kind `docscrawl_wN`; None: the
    default, `auto`): its CPU is the crawler's and its extraction workers' (it reaps them:
    they are in its rusage; `proctree` samples them too, `descendants_cpu_s`)."""
    if workers is not None:
        kind = f"{kind}_w{workers}"
    if fresh:
        shutil.rmtree(out, ignore_errors=True)
    log = work / f"{kind}-{n}-{rep}.log"
    # Scrapy appends to LOG_FILE: an earlier run's lines would be read as this one's
    scrapy_log = log.with_name(log.name + ".scrapy")
    scrapy_log.unlink(missing_ok=True)
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={site}",
               "-a", f"out={out}", "-s", f"LOG_FILE={scrapy_log}"]
    if kind.startswith(INVENTORY):
        command += ["-a", "extract=off"]
    if workers is not None:
        command += ["-a", f"workers={workers}"]
    # PYTHONSAFEPATH: the docscrawl installed in this interpreter's environment, not the
    # checkout in the working directory (`-m` would put it first): a compiled install
    # (docs/compiled.md) is measured as installed
    status, usage, wall, tree = measured(command, cwd=ROOT, log=log, timeout=timeout,
                                         rss_every=rss_every,
                                         env={**os.environ, "PYTHONSAFEPATH": "1"})
    compiled = re.search(r"'docscrawl/extract_compiled': (\d)", scrapy_log.read_text(
        errors="replace") if scrapy_log.exists() else "")
    # the crawler reaps its extraction workers: their CPU is in its rusage already
    points, end = rsscurve.curve(log) if rss_every else ([], None)
    files = unfinished_dir(out) or out  # a run killed at the timeout is not published
    run_json = files / "run.json"
    info = json.loads(run_json.read_text()) if run_json.exists() else {}
    events = info.get("counts", {}).get("events", {})
    pages = sum(events.get(e, 0) for e in ("extracted", "unchanged", "duplicate"))
    if kind.startswith(INVENTORY):
        pages = inventory_pages(files / "crawl_log.jsonl")
    return Run(kind, n, rep, pages, usage.cpu_s, wall, usage.peak_rss_mb, status, {
        **usage.as_json(),
        "pages_written": info.get("pages_written"), "events": events,
        "changes": info.get("changes"), "finish_reason": info.get("finish_reason"),
        "complete": info.get("complete"), **tree.as_json(),
        "extract_compiled": bool(int(compiled.group(1))) if compiled else None,
        **({"rss_curve": points, "rss_end_of_crawl": end} if points else {}),
    })


INVENTORY = "docscrawl_inventory"  # `-a extract=off`: the crawl without extraction


def inventory_pages(crawl_log: Path) -> int:
    """HTML pages an inventory crawl fetched: `fetched` events of pages (not robots.txt or
    sitemaps, which carry a parser) that answered 200."""
    if not crawl_log.exists():
        return 0
    pages = 0
    with crawl_log.open(encoding="utf-8") as lines:
        for line in lines:
            if '"event":"fetched"' in line:
                event = json.loads(line)
                pages += event.get("parser") is None and event.get("status") == 200
    return pages


# -- the benchmark --------------------------------------------------------------------------


def median(values: list[float]) -> float:
    values = [v for v in values if v == v]  # drop NaN
    return statistics.median(values) if values else float("nan")


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def summarise(n: int, runs: list[Run]) -> dict[str, Any]:
    """Medians per kind and docscrawl/bare ratios for one N."""
    by_kind: dict[str, list[Run]] = {}
    for run in runs:
        by_kind.setdefault(run.kind, []).append(run)
    out: dict[str, Any] = {"n": n}
    for kind, group in by_kind.items():
        out[kind] = {
            "runs": len(group),
            "pages": median([r.pages for r in group]),
            "cpu_s": median([r.cpu_s for r in group]),
            "cpu_ms_per_page": median([r.cpu_ms_per_page for r in group]),
            "pages_per_s": median([r.pages_per_s for r in group]),
            "peak_rss_mb": median([r.peak_rss_mb for r in group]),
            "peak_tree_pss_mb": median([r.extra.get("peak_tree_pss_mb", float("nan"))
                                        for r in group]),
        }
    # the first docscrawl kind run (`--workers`' first value): the headline ratios' crawl
    main = next((k for k in by_kind if k == "docscrawl" or k.startswith("docscrawl_w")), "")
    bare, docs = out.get("bare"), out.get(main)
    if bare and docs:
        pairs = [(b, d) for b in by_kind["bare"] for d in by_kind[main] if b.rep == d.rep]
        out["ratios"] = {
            "cpu_per_page": ratio(docs["cpu_ms_per_page"], bare["cpu_ms_per_page"]),
            "peak_rss": ratio(docs["peak_rss_mb"], bare["peak_rss_mb"]),
            "pages_per_s": ratio(docs["pages_per_s"], bare["pages_per_s"]),
            "cpu_per_page_pairs": [ratio(d.cpu_ms_per_page, b.cpu_ms_per_page) for b, d in pairs],
            "pages": ratio(docs["pages"], bare["pages"]),  # below 1: docscrawl missed pages
        }
    for kind in by_kind:  # each docscrawl crawl (the default, `-a workers=N`) against bare
        if bare and kind.startswith("docscrawl") and "recrawl" not in kind:
            mine = out[kind]
            out.setdefault("ratios_by_kind", {})[kind] = {
                key: ratio(mine[field], bare[field]) for key, field in (
                    ("cpu_per_page", "cpu_ms_per_page"), ("pages_per_s", "pages_per_s"),
                    ("peak_rss", "peak_rss_mb"), ("peak_tree_pss", "peak_tree_pss_mb"),
                    ("pages", "pages"))}
    inventory = out.get(INVENTORY)
    if bare and inventory:
        out.setdefault("ratios", {})["inventory_pages_per_cpu_s_to_bare"] = ratio(
            bare["cpu_ms_per_page"], inventory["cpu_ms_per_page"])
    recrawl = next((g for k, g in by_kind.items() if k.startswith("docscrawl_recrawl")), None)
    if recrawl and docs:
        first = [r for r in by_kind[main] if r.rep == recrawl[0].rep]
        out.setdefault("ratios", {})["recrawl_cpu_to_first"] = (
            ratio(recrawl[0].cpu_s, first[0].cpu_s) if first else float("nan"))
    return out


def fmt(value: Any, spec: str = ".1f") -> str:
    return "-" if value is None or value != value else format(value, spec)


def print_run(run: Run) -> None:
    print(f"  {run.kind:<18} N={run.n:<6} rep {run.rep}: {run.pages:>6} pages  "
          f"{run.cpu_s:8.1f} CPU s (kernel {fmt(run.extra.get('sys_cpu_s'))}, "
          f"{fmt(run.extra.get('minor_faults'), ',')} faults)  "
          f"{run.cpu_ms_per_page:7.1f} ms/page  "
          f"{run.pages_per_s:6.1f} pages/s  peak {run.peak_rss_mb:6.0f} MB"
          + (f"  EXIT {run.exit_status}" if run.exit_status else ""), flush=True)
    if run.extra.get("rss_curve"):
        points = run.extra["rss_curve"]
        print("    RSS (pages done, MB): " + "; ".join(
            f"{pages:,} {mb:.1f}" for pages, mb, _ in points)
            + f"; end of crawl {fmt(run.extra.get('rss_end_of_crawl'))}", flush=True)
        print("    CPU ms a page by stretch: " + "; ".join(
            f"{first:,}-{last:,} {ms:.1f}" for first, last, ms in rsscurve.stretches(points)),
            flush=True)


def print_table(summaries: list[dict[str, Any]]) -> None:
    print("\n| N | crawler | runs | pages | CPU ms/page | wall pages/s | peak RSS MB | "
          "peak PSS of the tree MB |")
    print("|---|---|---|---|---|---|---|---|")
    for s in summaries:
        for kind in (k for k in s if isinstance(s[k], dict) and "runs" in s[k]):
            k = s[kind]
            print(f"| {s['n']:,} | {kind} | {k['runs']} | {fmt(k['pages'], '.0f')} | "
                  f"{fmt(k['cpu_ms_per_page'])} | {fmt(k['pages_per_s'])} | "
                  f"{fmt(k['peak_rss_mb'], '.0f')} | {fmt(k['peak_tree_pss_mb'], '.0f')} |")
    print("\n| N | crawler | CPU/page / bare | pages/s / bare | peak RSS / bare | "
          "peak tree PSS / bare | pages / bare |")
    print("|---|---|---|---|---|---|---|")
    for s in summaries:
        for kind, r in s.get("ratios_by_kind", {}).items():
            print(f"| {s['n']:,} | {kind} | {fmt(r['cpu_per_page'], '.2f')} | "
                  f"{fmt(r['pages_per_s'], '.2f')} | {fmt(r['peak_rss'], '.2f')} | "
                  f"{fmt(r['peak_tree_pss'], '.2f')} | {fmt(r['pages'], '.2f')} |")
    print("\n| N | CPU/page docscrawl/bare (per pair) | peak RSS docscrawl/bare | "
          "pages/s docscrawl/bare | pages docscrawl/bare | re-crawl CPU / first crawl | "
          "pages per CPU-s, extract=off / bare |")
    print("|---|---|---|---|---|---|---|")
    for s in summaries:
        r = s.get("ratios", {})
        pairs = ", ".join(f"{x:.2f}" for x in r.get("cpu_per_page_pairs", []))
        print(f"| {s['n']:,} | {fmt(r.get('cpu_per_page'), '.2f')} ({pairs}) | "
              f"{fmt(r.get('peak_rss'), '.2f')} | {fmt(r.get('pages_per_s'), '.2f')} | "
              f"{fmt(r.get('pages'), '.2f')} | {fmt(r.get('recrawl_cpu_to_first'), '.2f')} | "
              f"{fmt(r.get('inventory_pages_per_cpu_s_to_bare'), '.2f')} |")


def bench_one(n: int, args: argparse.Namespace, server_kind: str) -> list[Run]:
    site_dir = args.scratch / f"site-{n}-{args.seed}"
    began = time.monotonic()
    written = gensite.generate(site_dir, n, seed=args.seed)
    if written:
        print(f"generated {written} pages in {site_dir} ({time.monotonic() - began:.0f}s)")
    work = args.scratch / "work"
    work.mkdir(parents=True, exist_ok=True)
    runs: list[Run] = []
    timeout = args.timeout_per_page * n + 120
    with SiteServer(site_dir, args.scratch / f"server-{n}", kind=server_kind,
                    gzip=args.gzip) as server:
        gensite.write_site_files(site_dir, n, server.origin)
        site = server.origin + "/"
        print(f"N={n}: {server_kind} serving {site_dir} on {site}", flush=True)
        crawlers = [("bare", None), *(("docscrawl", w) for w in args.workers)]
        for rep in range(args.reps):
            order = crawlers if rep % 2 == 0 else crawlers[::-1]
            for kind, workers in ((k, w) for k, w in order if k in args.kinds):
                out = args.scratch / "out" / (f"docs-{n}" + (f"-w{workers}"
                                                             if workers is not None else ""))
                if kind == "bare":
                    run = run_bare(site, n, rep, work, timeout, rss_every=args.rss_every)
                else:
                    run = run_docscrawl(site, n, rep, work, out, timeout,
                                        rss_every=args.rss_every, workers=workers)
                runs.append(run)
                print_run(run)
                if (kind == "docscrawl" and workers == args.workers[0] and rep == 0
                        and args.recrawl):
                    again = run_docscrawl(site, n, rep, work, out, timeout,
                                          kind="docscrawl_recrawl", fresh=False,
                                          rss_every=args.rss_every, workers=workers)
                    runs.append(again)
                    print_run(again)
            if args.inventory:
                inventory = run_docscrawl(site, n, rep, work, args.scratch / "out" /
                                          f"inventory-{n}", timeout, kind=INVENTORY,
                                          rss_every=args.rss_every)
                runs.append(inventory)
                print_run(inventory)
    return runs


def profile_one(n: int, args: argparse.Namespace, server_kind: str) -> int:
    """One docscrawl crawl under py-spy (raw collapsed stacks) or cProfile (`--cprofile`),
    then its hot spots (`hotspots.py`) or its stages (`stages.py`)."""
    py_spy = shutil.which(args.py_spy) or args.py_spy
    if not args.cprofile and not Path(py_spy).exists():
        print(f"py-spy not found ({args.py_spy}); install it (pip install py-spy) or give "
              "--py-spy PATH; cProfile works too: python -m cProfile -o crawl.prof -m scrapy "
              "crawl docs ...", file=sys.stderr)
        return 2
    site_dir = args.scratch / f"site-{n}-{args.seed}"
    gensite.generate(site_dir, n, seed=args.seed)
    work = args.scratch / "work"
    work.mkdir(parents=True, exist_ok=True)
    raw = work / f"profile-{n}.txt"
    with SiteServer(site_dir, args.scratch / f"server-{n}", kind=server_kind) as server:
        gensite.write_site_files(site_dir, n, server.origin)
        out = args.scratch / "out" / f"profile-{n}"
        shutil.rmtree(out, ignore_errors=True)
        if args.profile_recrawl:  # a first crawl, unprofiled; the re-crawl is profiled
            run_docscrawl(server.origin + "/", n, 0, work, out, args.timeout_per_page * n + 120)
            raw = work / f"profile-recrawl-{n}.txt"
        crawl = ["-m", "scrapy", "crawl", "docs", "-a", f"site={server.origin}/",
                 "-a", f"out={out}", "-s", f"LOG_FILE={work / f'profile-{n}.log'}"]
        workers = args.workers[0]
        if workers is not None:  # the crawler's process is profiled, not its workers
            crawl += ["-a", f"workers={workers}"]
        if args.cprofile:
            raw = raw.with_suffix(".prof")
            command = [sys.executable, "-m", "cProfile", "-o", str(raw), *crawl]
        else:
            command = [py_spy, "record", "-r", "100", "--nonblocking", "-f", "raw",
                       "-o", str(raw), "--", sys.executable, *crawl]
        subprocess.run(command, cwd=ROOT, check=True)
    summary = "stages.py" if args.cprofile else "hotspots.py"
    subprocess.run([sys.executable, str(HERE / summary), str(raw)], check=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, action="append",
                        help="site size; repeatable (default: 2000 and 10000)")
    parser.add_argument("--reps", type=int, default=3,
                        help="alternating bare/docscrawl pairs per N (default 3)")
    parser.add_argument("--quick", action="store_true",
                        help="one 500-page pair and its re-crawl (the smoke test)")
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--scratch", type=Path, default=DEFAULT_SCRATCH)
    parser.add_argument("--json", type=Path, help="figures file (default SCRATCH/results.json)")
    parser.add_argument("--server", choices=("auto", "nginx", "devserver"), default="auto")
    parser.add_argument("--gzip", action="store_true", help="nginx gzip on for HTML")
    parser.add_argument("--kinds", default="bare,docscrawl",
                        help="crawlers to run, of bare,docscrawl (e.g. `docscrawl` alone for "
                             "a memory-only 50,000-page run)")
    parser.add_argument("--inventory", action="store_true",
                        help="also run `-a extract=off` (the crawl without extraction) per rep")
    parser.add_argument("--no-recrawl", dest="recrawl", action="store_false",
                        help="skip the incremental re-crawl measurement")
    parser.add_argument("--timeout-per-page", type=float, default=0.5,
                        help="seconds per page before a run is killed (plus 120)")
    parser.add_argument("--profile", action="store_true",
                        help="instead: one docscrawl crawl of the first N under py-spy, "
                             "then hotspots.py on it")
    parser.add_argument("--profile-recrawl", action="store_true",
                        help="with --profile: profile the unchanged re-crawl instead")
    parser.add_argument("--py-spy", default="py-spy", help="py-spy executable")
    parser.add_argument("--cprofile", action="store_true",
                        help="with --profile: cProfile instead of py-spy, summed by stage "
                             "(stages.py)")
    parser.add_argument("--workers", default="auto",
                        help="docscrawl's extraction workers (`-a workers=N`), a comma list: "
                             "each value is one docscrawl crawl per rep, alternating with "
                             "bare (e.g. `0,1,2`, kinds docscrawl_wN; default `auto`: no "
                             "argument, the crawl as a user gets it, kind docscrawl)")
    parser.add_argument("--rss-every", type=float, default=0.0,
                        help="sample each crawler's VmRSS every this many seconds into "
                             "WORK/KIND-N-REP.log.rss.tsv (0: off); a docscrawl run's RSS "
                             "against pages done is printed (rsscurve.py)")
    args = parser.parse_args(argv)
    args.kinds = {kind.strip() for kind in args.kinds.split(",") if kind.strip()}
    if not args.kinds <= {"bare", "docscrawl"}:
        parser.error(f"--kinds: unknown crawler in {sorted(args.kinds)}")
    try:
        args.workers = [None if w.strip() == "auto" else int(w) for w in args.workers.split(",")]
    except ValueError:
        parser.error(f"--workers: not a comma list of integers or auto: {args.workers!r}")
    if any(w is not None and w < 0 for w in args.workers):
        parser.error("--workers: a count is >= 0")
    if args.quick:
        args.n, args.reps, args.inventory = [500], 1, True
    args.n = args.n or list(DEFAULT_N)
    args.scratch = args.scratch.resolve()
    # SIGTERM unwinds like Ctrl-C: the running crawler is killed, nginx stopped
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    server_kind = args.server
    if server_kind == "auto":
        server_kind = "nginx" if NGINX.exists() else "devserver"
    if server_kind == "nginx" and not NGINX.exists():
        parser.error(f"{NGINX} is missing; use --server devserver")
    args.scratch.mkdir(parents=True, exist_ok=True)
    if args.profile:
        return profile_one(args.n[0], args, server_kind)
    all_runs: list[Run] = []
    summaries = []
    for n in args.n:
        runs = bench_one(n, args, server_kind)
        all_runs += runs
        summaries.append(summarise(n, runs))
    print_table(summaries)
    result = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        # the interpreter both crawlers ran on: its build moves the ratio (docs/performance.md)
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "executable": os.path.realpath(sys.executable),
                    "load_avg_end": os.getloadavg()},
        "server": server_kind,
        "seed": args.seed,
        "summaries": summaries,
        "runs": [run.as_json() for run in all_runs],
    }
    target = args.json or args.scratch / "results.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(result, indent=2))
    print(f"\nfigures written to {target}")
    return 1 if any(run.exit_status or not run.pages for run in all_runs) else 0


if __name__ == "__main__":
    sys.exit(main())
