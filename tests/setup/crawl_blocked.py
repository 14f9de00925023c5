"""Run `scrapy crawl docs` in this process with some packages made unimportable.

    python tests/setup/crawl_blocked.py BLOCKED SCRAPY_ARG...

BLOCKED is a comma-separated list of top-level packages (`redis,playwright`); each is set
to None in `sys.modules`, so any import of it raises ImportError, as on a machine where it
is not installed. The last line printed on stdout is `LOADED <json list>`: the optional
packages that were imported during the crawl.
"""

from __future__ import annotations

import json
import sys

OPTIONAL = ("playwright", "scrapy_playwright", "redis")


def main() -> int:
    blocked = [name for name in sys.argv[1].split(",") if name]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    from scrapy.cmdline import execute

    code: int | str | None = 0
    try:
        execute(["scrapy", *sys.argv[2:]])
    except SystemExit as exc:
        code = exc.code
    loaded = sorted(name for name in sys.modules
                    if name.split(".")[0] in OPTIONAL and sys.modules[name] is not None)
    print("LOADED " + json.dumps(loaded), flush=True)
    return code if isinstance(code, int) else 1


if __name__ == "__main__":
    sys.exit(main())
