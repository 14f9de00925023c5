"""A crawl's counters and run.json, written when the crawl starts, pauses and ends.

run.json is the crawl's summary (`docs/output-and-contract.md`): its arguments, status,
timings, what was written and the crawl log's counts. The counters the crawl keeps besides
the crawl log's (`resumes`, the worker, request pacing, pages held for the template) live
here; everything else is read from the part that counts it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docscrawl import __version__
from docscrawl.crawl.crawllog import CrawlLog, utc_now
from docscrawl.crawl.failures import BROWSER_UNAVAILABLE
from docscrawl.crawl.outputs import OutputFiles
from docscrawl.jsonl import write_json_atomic
from docscrawl.render.browser import INSTALL_HINT
from docscrawl.vocab import OUTPUT_FILES

if TYPE_CHECKING:
    from docscrawl.config import CrawlConfig
    from docscrawl.discovery.frontier import Frontier
    from docscrawl.incremental.recrawl import Incremental


class RunReport:
    """The crawl's own counters, and run.json built from them and the other parts'."""

    def __init__(self, config: CrawlConfig, out_dir: Path, *, log: CrawlLog,
                 outputs: OutputFiles, incremental: Incremental, frontier: Frontier) -> None:
        self.config = config
        self.out_dir = out_dir
        self._log, self._outputs = log, outputs
        self._incremental, self._frontier = incremental, frontier
        self.started_at = utc_now()
        self._t0 = time.monotonic()
        self.resumes = 0  # JOBDIR: how often this run was resumed
        self.worker_id: str | None = None  # distributed mode: this part's worker
        self.politeness: dict[str, Any] = {}  # request pacing
        self.pages_held = 0  # pages the extract pipeline holds until the template is warm

    def elapsed_s(self) -> float:
        """Seconds since the crawl started."""
        return time.monotonic() - self._t0

    def complete(self, finish_reason: str | None) -> bool:
        """A crawl that ran to its natural end, limited by neither max_pages nor max_depth,
        and with no page left unrendered for want of a browser."""
        return (finish_reason == "finished" and not self._frontier.limited
                and not self._log.failure_reasons.get(BROWSER_UNAVAILABLE))

    def _browser_note(self) -> dict[str, Any] | None:
        """Pages that needed rendering without a browser, and how to get one (or None)."""
        pages = self._log.failure_reasons.get(BROWSER_UNAVAILABLE, 0)
        return {"pages": pages, "hint": INSTALL_HINT} if pages else None

    def write(self, status: str, finish_reason: str | None, *,
              updated: int = 0) -> dict[str, Any]:
        """Write run.json (`status`: running, paused or finished); returns what it holds."""
        log, incremental = self._log, self._incremental
        run = {
            "site": self.config.site,
            "arguments": self.config.as_arguments(),
            "status": status,
            "finish_reason": finish_reason,
            "complete": status == "finished" and self.complete(finish_reason),
            "started_at": self.started_at,
            "finished_at": utc_now() if status == "finished" else None,
            "elapsed_s": round(self.elapsed_s(), 3),
            "docscrawl_version": __version__,
            "pages_written": self._outputs.pages.count,
            "chunks_written": self._outputs.chunks.count,
            "changes": dict(sorted(incremental.counts.items())),
            "removed_reasons": dict(sorted(incremental.removed_reasons.items())),
            "state": str(incremental.store.path),
            "run_id": incremental.run.run_id,
            "records_updated_at_end": updated,
            "extract": self.config.extract,
            "politeness": self.politeness,
            "resumed": self.resumes > 0,
            "resumes": self.resumes,
            **({"worker": self.worker_id} if self.worker_id else {}),
            "counts": log.summary(),
            "browser_unavailable": self._browser_note(),
            "skip_examples": {
                reason: {"url": url, "rule": rule}
                for reason, (url, rule) in sorted(log.skip_examples.items())
            },
            "output": {name: str(self.out_dir / name) for name in OUTPUT_FILES},
        }
        write_json_atomic(self._outputs.path("run.json"), run)
        return run
