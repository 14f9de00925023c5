"""One worker's Redis calls, run one after another on the reactor's asyncio loop.

The spider's callbacks are synchronous and must not wait for Redis; they submit jobs here
instead. Running the jobs in submission order keeps the rules the shared crawl depends on:
a URL's first-discovery answer comes before its skip or claim, and the links of a page are
queued before its task is acknowledged (its terminal event comes after its links).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable

logger = logging.getLogger(__name__)

Job = Callable[[], Awaitable[object]]


class Serial:
    """A FIFO of coroutine jobs with one runner task."""

    def __init__(self) -> None:
        self._jobs: deque[Job] = deque()
        self._runner: asyncio.Future[None] | None = None
        self._idle = asyncio.Event()
        self.failures = 0

    def submit(self, job: Job) -> None:
        """Run `job` after every job submitted before it."""
        self._jobs.append(job)
        if self._runner is None:
            self._idle.clear()
            self._runner = asyncio.ensure_future(self._run())

    @property
    def busy(self) -> bool:
        """True while a job is queued or running."""
        return self._runner is not None

    async def drained(self) -> None:
        """Wait until every submitted job has run."""
        if self._runner is not None:
            await self._idle.wait()

    async def _run(self) -> None:
        try:
            while self._jobs:
                job = self._jobs.popleft()
                try:
                    await job()
                except Exception:  # a Redis error fails one job, not the crawl's process
                    self.failures += 1
                    logger.exception("docscrawl: distributed: a Redis call failed")
        finally:
            self._runner = None
            self._idle.set()
