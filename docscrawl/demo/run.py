"""`make demo`: serve the bundled demo docs site on 127.0.0.1, crawl it, print a summary.

    python -m docscrawl.demo.run [--port 8765]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from docscrawl.config import default_host_label
from docscrawl.demo.server import StaticSite
from docscrawl.inspect.summary import summarize


def _demo_site() -> Path | None:
    """fixtures/sites/demo of the checkout this module runs from, wherever it sits in the
    package (found upwards, so the module can move between folders); None when the
    package was installed without its checkout (`pip install .`)."""
    here = Path(__file__).resolve()
    for folder in here.parents:
        if (folder / "fixtures" / "sites" / "demo").is_dir():
            return folder / "fixtures" / "sites" / "demo"
    return None


DEMO_SITE = _demo_site()
# The demo site serves one oversized page (`/docs/huge.html`, 740 kB of filler) so the
# demo shows a `too_large` skip; the default limit (20 MB) would extract it.
DEMO_MAX_BYTES = 100_000
NO_DEMO_SITE = ("docscrawl: the demo site (fixtures/sites/demo) comes with the source "
                "checkout: run `make demo` in a clone of the repository")


def main(argv: list[str] | None = None) -> int:
    """Serve, crawl, summarize; returns the crawl's exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    args = parser.parse_args(argv)
    if DEMO_SITE is None:
        print(NO_DEMO_SITE, file=sys.stderr)
        return 2
    try:
        site = StaticSite(DEMO_SITE, port=args.port)
    except OSError:
        site = StaticSite(DEMO_SITE, port=0)  # the port is taken: any free one
    with site as server:
        seed = f"{server.url}/docs/"
        print(f"demo docs site served at {seed}", flush=True)
        status = subprocess.call(
            [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"site={seed}",
             "-s", f"DOWNLOAD_MAXSIZE={DEMO_MAX_BYTES}"],
            cwd=DEMO_SITE.parent.parent.parent,
        )
    out_dir = DEMO_SITE.parent.parent.parent / "output" / default_host_label(seed)
    if (out_dir / "run.json").is_file():
        print()
        print(summarize(out_dir))
    return status


if __name__ == "__main__":
    sys.exit(main())
