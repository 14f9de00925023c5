"""Extraction worker processes: a page's parse, links and extraction on another core.

`ExtractPool(n, setup)` keeps `n` worker processes, each serving one page at a time over
its own pipe (`extract.worker.page_facts`); `await pool.run(job)` answers with the page's
`PageFacts`. The crawler's own thread only pickles the job (the decoded text) and unpickles
the answer; the asyncio reactor wakes it when a worker's pipe is readable.

Workers start from a fork server (`multiprocessing` "forkserver", with the extraction
modules preloaded), never by forking the crawler: a fork would copy the crawler's grown
heap, and its pages would be unshared as soon as the garbage collector touched them.
One page per worker at a time, so a worker that dies (kill -9, a crash in libxml2) costs
exactly the page it held: `run` raises `WorkerCrashed` for it (the spider ends that page
`failed` `worker_crashed`) and a new worker takes the dead one's place. A worker found
dead while idle is replaced and the page goes to the new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
from collections import deque
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from docscrawl.extract.worker import PageFacts, PageJob, Worker, WorkerSetup

logger = logging.getLogger(__name__)

PRELOAD = ["docscrawl.extract.worker"]  # imported once by the fork server
JOIN_SECONDS = 5.0  # a worker asked to stop is killed after this long


class WorkerCrashed(Exception):
    """The worker serving the page died before answering."""


def serve(conn: Connection, setup: WorkerSetup) -> None:
    """A worker process: answer jobs until the pipe closes (or a None job)."""
    worker = Worker(setup)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        conn.send(worker.run(job))


class _Slot:
    """One worker process, its end of the pipe and the page it serves."""

    __slots__ = ("conn", "process", "waiter")

    def __init__(self, process: BaseProcess, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.waiter: asyncio.Future[PageFacts] | None = None


class ExtractPool:
    """`size` worker processes answering `PageJob`s (see the module doc)."""

    def __init__(self, size: int, setup: WorkerSetup) -> None:
        if size < 1:
            raise ValueError("an extraction pool needs at least one worker")
        self.size = size
        self.setup = setup
        self.context = multiprocessing.get_context("forkserver")
        self.context.set_forkserver_preload(PRELOAD)
        self._slots: list[_Slot] = []
        self._idle: deque[_Slot] = deque()
        self._queue: deque[tuple[PageJob, asyncio.Future[PageFacts]]] = deque()
        self.crashed = 0  # workers that died while serving a page
        self.started = 0
        self.closed = False

    def pids(self) -> list[int]:
        """The live workers' process ids."""
        return [slot.process.pid for slot in self._slots if slot.process.pid is not None]

    async def run(self, job: PageJob) -> PageFacts:
        """The page's facts, from the first free worker; raises WorkerCrashed."""
        if self.closed:
            raise RuntimeError("the extraction pool is closed")
        if len(self._slots) < self.size and not self._idle:
            self._start()
        future: asyncio.Future[PageFacts] = asyncio.get_running_loop().create_future()
        self._queue.append((job, future))
        self._dispatch()
        return await future

    def close(self) -> None:
        """Stop every worker (the pages in flight fail with WorkerCrashed)."""
        self.closed = True
        for slot in list(self._slots):
            self._retire(slot, ask=True)
        for _, future in self._queue:
            if not future.done():
                future.set_exception(WorkerCrashed("the crawl closed"))
        self._queue.clear()

    # -- workers --------------------------------------------------------------------------

    def _start(self) -> _Slot:
        here, there = self.context.Pipe(duplex=True)
        process = self.context.Process(target=serve, args=(there, self.setup), daemon=True,
                                       name="docscrawl-extract")
        process.start()
        there.close()
        slot = _Slot(process, here)
        self._slots.append(slot)
        self._idle.append(slot)
        self.started += 1
        return slot

    def _dispatch(self) -> None:
        while self._queue and self._idle:
            slot = self._idle.popleft()
            job, future = self._queue.popleft()
            if future.done():  # cancelled while it waited
                self._idle.appendleft(slot)
                continue
            try:
                slot.conn.send(job)
            except (OSError, ValueError):  # it died while idle: not this page's doing
                self._queue.appendleft((job, future))
                self._retire(slot)
                self._idle.append(self._start())
                continue
            slot.waiter = future
            asyncio.get_running_loop().add_reader(slot.conn.fileno(), self._answer, slot)

    def _answer(self, slot: _Slot) -> None:
        loop = asyncio.get_running_loop()
        loop.remove_reader(slot.conn.fileno())
        future, slot.waiter = slot.waiter, None
        try:
            facts = slot.conn.recv()
        except (EOFError, OSError):
            self.crashed += 1
            code = self._retire(slot)
            logger.warning("docscrawl: extraction worker %s died (exit code %s); a new one "
                           "starts", slot.process.pid, code)
            if future is not None and not future.done():
                future.set_exception(WorkerCrashed(
                    f"extraction worker {slot.process.pid} died (exit code {code})"))
            if not self.closed:
                self._idle.append(self._start())
        else:
            self._idle.append(slot)
            if future is not None and not future.done():
                future.set_result(facts)
        if not self.closed:
            self._dispatch()

    def _retire(self, slot: _Slot, *, ask: bool = False) -> int | None:
        """Take a worker out (asked to stop, or found dead); its exit code."""
        if slot in self._slots:
            self._slots.remove(slot)
        if slot in self._idle:
            self._idle.remove(slot)
        waiter, slot.waiter = slot.waiter, None
        busy = waiter is not None
        if waiter is not None:
            with contextlib.suppress(RuntimeError, ValueError, OSError):
                asyncio.get_running_loop().remove_reader(slot.conn.fileno())
            if not waiter.done():
                waiter.set_exception(WorkerCrashed("the crawl closed"))
        if busy:
            slot.process.kill()  # its answer is not wanted: no waiting for it
        elif ask:
            with contextlib.suppress(OSError, ValueError):
                slot.conn.send(None)
        slot.conn.close()
        slot.process.join(JOIN_SECONDS if ask else 1.0)
        if slot.process.is_alive():
            slot.process.kill()
            slot.process.join()
        return slot.process.exitcode
