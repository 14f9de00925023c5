"""Where the retrieval benchmark's question sites are served from.

The corpus sites are served by `real-sites.sh` (nginx); a few more installed documentation
packages (PostgreSQL 15, Node's API docs, a Javadoc) are served by the benchmark itself
from a small static server on 127.0.0.1, rooted at the package's HTML directory, on a
fixed port so that the URLs of an earlier crawl stay valid.
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The corpus script beside the checkout (or beside the worktrees' directory), or as named.
SITES_SCRIPT = Path(os.environ.get("DOCSCRAWL_CORPUS_SCRIPT") or next(
    (path for path in (ROOT.parent / "shared" / "corpus" / "real-sites.sh",
                       ROOT.parent.parent / "shared" / "corpus" / "real-sites.sh")
     if path.exists()), ROOT.parent / "shared" / "corpus" / "real-sites.sh"))
DEFAULT_PAGE_CAP = 400
# Caps above the default, high enough that every answer page of a question set is in the
# crawl (the benchmark reports any question whose page is not).
PAGE_CAPS = {
    "octave-manual": 3200, "cmake-docs": 2500, "postgresql-docs": 1500, "commons-lang3-docs": 1000,
    "haddock-base": 800, "rustdoc-syn": 800, "sdl2-docs": 800, "gsk4-docs": 600,
    "sqlalchemy-docs": 600,
}


@dataclass(frozen=True)
class AdhocSite:
    """An installed documentation package the benchmark serves itself."""
    root: Path
    port: int
    start: str = "index.html"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{self.start}"


ADHOC_SITES = {
    "postgresql-docs": AdhocSite(Path("/usr/share/doc/postgresql-doc-15/html"), 17201),
    "nodejs-docs": AdhocSite(Path("/usr/share/doc/nodejs/api"), 17202),
    "commons-lang3-docs": AdhocSite(Path("/usr/share/doc/libcommons-lang3-java/api"), 17203),
}


def corpus_sites() -> dict[str, str]:
    """name -> start URL, from the corpus script (none where it is not installed: the
    sites the benchmark serves itself still are)."""
    if not SITES_SCRIPT.is_file():
        return {}
    listing = subprocess.run(["bash", str(SITES_SCRIPT), "list"], capture_output=True,
                             text=True, check=True).stdout
    return {line.split()[0]: line.split()[1] for line in listing.splitlines() if line.strip()}


def site_urls() -> dict[str, str]:
    """name -> start URL of every site a question may name."""
    return {**corpus_sites(), **{name: site.url for name, site in ADHOC_SITES.items()}}


def page_cap(name: str) -> int:
    return PAGE_CAPS.get(name, DEFAULT_PAGE_CAP)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A client closing early (a crawl stopping at its cap) is not worth a traceback."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _already_served(site: AdhocSite) -> bool:
    """Something answers on the port with the package's own start page."""
    try:
        with urllib.request.urlopen(site.url, timeout=5) as response:
            return response.read() == (site.root / site.start).read_bytes()
    except (OSError, urllib.error.URLError):
        return False


@contextmanager
def serving(name: str) -> Iterator[None]:
    """Serve an ad hoc site for the duration of the block (a corpus site: nothing to do).

    A server already answering on the port with the same start page (an earlier run's, or
    one started by hand) is used as it is; anything else on the port is an error."""
    site = ADHOC_SITES.get(name)
    if site is None:
        yield
        return
    if not (site.root / site.start).is_file():
        raise SystemExit(f"{name}: {site.root / site.start} is missing (install the package)")
    handler = functools.partial(_QuietHandler, directory=str(site.root))
    try:
        server = _Server(("127.0.0.1", site.port), handler)
    except OSError:
        if _already_served(site):
            yield
            return
        raise SystemExit(f"{name}: port {site.port} is taken by something else") from None
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


def crawl_site(name: str, url: str, out: Path, max_pages: int | None = None) -> None:
    """Crawl one site (served for the duration if it is an ad hoc one) into `out`."""
    cap = max_pages or page_cap(name)
    with serving(name):
        subprocess.run([sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={url}",
                        "-a", f"out={out}", "-a", "render=never", "-a", f"max_pages={cap}",
                        "-s", "LOG_LEVEL=WARNING"], cwd=ROOT, check=True)
