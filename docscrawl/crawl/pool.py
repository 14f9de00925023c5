"""Extraction worker processes: a page's parse, links and extraction on another core.

`ExtractPool(n, setup)` keeps `n` worker processes, each working on one page at a time
over its own pipe (`extract.worker.page_facts`); `await pool.run(job)` answers with the page's
`PageFacts`. The crawler only pickles the job (the decoded text) and unpickles the answer.
The crawler's end of each socket is non-blocking and served by the event loop itself: a
job is written as far as the socket takes it and the rest when it is writable again, the
answers are read when it is readable (a dead worker's end of file too). So the crawler
never waits on a worker: a large page half-sent while the worker writes a large answer
cannot lock the two (both directions keep moving), and no thread pool hands the
interpreter's lock back and forth for every answer (about 19 futex calls a page).

Each worker is a fresh interpreter (`python -P -c BOOT ROOT FD`, `boot_code`) that imports
the crawler's own docscrawl (from ROOT: a checkout, site-packages or Scrapyd's egg, not
whichever the interpreter would find first) and the extraction modules alone (not Scrapy),
never a fork of the crawler: a fork would copy the
crawler's grown heap, and its pages would be unshared as soon as the garbage collector
touched them. (multiprocessing's spawn and forkserver also import the crawler's main
module, `scrapy`, in every worker.) The crawler reaps its workers, so their CPU time is
in its children's rusage. A worker has at most IN_FLIGHT pages sent to it and works on the
oldest, so a worker that dies (kill -9, a crash in libxml2) costs exactly the page it held:
`run` raises `WorkerCrashed` for it (the spider ends that page `failed` `worker_crashed`),
a new worker takes the dead one's place and the pages sent after it. A worker found dead
while idle is replaced and the page goes to the new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import socket
import subprocess
import sys
from collections import deque
from multiprocessing.connection import Connection
from pathlib import Path

from docscrawl.collector import tune
from docscrawl.crawl.framing import framed, take_message
from docscrawl.extract.worker import PageFacts, PageJob, Worker, WorkerSetup

logger = logging.getLogger(__name__)

JOIN_SECONDS = 5.0  # a worker asked to stop is killed after this long
# pages sent to a worker before its answers are read: the next page waits in its pipe, so
# the worker need not wait for the crawler's event loop to hand it one
IN_FLIGHT = 2
READ_BYTES = 1 << 20  # read at most this much of a worker's answers at once


# The folder (or egg) the crawler's docscrawl package was imported from.
CODE_ROOT = str(Path(__file__).resolve().parents[2])


def boot_code(then: str) -> str:
    """Code for `python -P -c CODE ROOT ...` that makes `import docscrawl` find the package
    in ROOT, then runs `then`. ROOT goes first on the path only when the interpreter
    would find another docscrawl (Scrapyd runs the deployed egg, the virtualenv may hold
    an older install), so a site-packages ROOT never moves ahead of the standard library;
    `-P` keeps the working directory (a checkout of other code) off the path."""
    return (
        "import os, sys\n"
        "from importlib.util import find_spec\n"
        "root = sys.argv[1]\n"
        "spec = find_spec('docscrawl')\n"
        "places = list(spec.submodule_search_locations or []) if spec else []\n"
        "here = os.path.realpath(os.path.dirname(places[0])) if places else None\n"
        "if here != os.path.realpath(root):\n"
        "    sys.path.insert(0, root)\n"
        f"{then}\n"
    )


_WORKER_BOOT = boot_code("from docscrawl.crawl.pool import serve_fd\nserve_fd(sys.argv[2])")


class WorkerCrashed(Exception):
    """The worker serving the page died before answering."""


def serve(conn: Connection) -> None:
    """A worker process: its setup (then the crawler's garbage-collector settings: what
    the setup built is frozen), then answer jobs until the pipe closes (or None), so a
    worker whose crawler was killed ends with it."""
    try:
        worker = Worker(conn.recv())
    except (EOFError, OSError):
        return
    if worker.setup.gc_gen0_threshold:  # the crawler's collector settings (`collector`)
        tune(worker.setup.gc_gen0_threshold)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        try:
            conn.send(worker.run(job))
        except OSError:  # the crawler is gone (killed): nobody to answer
            return


class _Slot:
    """One worker process, its end of the socket (non-blocking once the setup is sent), the
    pages sent to it, oldest first, and the bytes on their way each way."""

    __slots__ = ("buffer", "conn", "inbox", "loop", "outbox", "process", "waiters", "writing")

    def __init__(self, process: subprocess.Popen[bytes], conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.waiters: deque[tuple[PageJob, asyncio.Future[PageFacts]]] = deque()
        # the event loop watching its socket (for answers, and for room while `outbox`
        # holds bytes), if one is
        self.loop: asyncio.AbstractEventLoop | None = None
        self.outbox = bytearray()  # framed jobs not yet taken by the socket
        self.writing = False  # the loop waits for room to write the rest of `outbox`
        self.buffer = bytearray()  # answer bytes read, not yet a whole message
        self.inbox = memoryview(bytearray(READ_BYTES))  # each read lands here: no new object


class ExtractPool:
    """`size` worker processes answering `PageJob`s (see the module doc)."""

    def __init__(self, size: int, setup: WorkerSetup) -> None:
        if size < 1:
            raise ValueError("an extraction pool needs at least one worker")
        self.size = size
        self.setup = setup
        self._slots: list[_Slot] = []
        self._queue: deque[tuple[PageJob, asyncio.Future[PageFacts]]] = deque()
        self.crashed = 0  # workers that died while serving a page
        self.started = 0
        self.closed = False

    def pids(self) -> list[int]:
        """The live workers' process ids."""
        return [slot.process.pid for slot in self._slots]

    async def run(self, job: PageJob) -> PageFacts:
        """The page's facts, from the least busy worker; raises WorkerCrashed."""
        if self.closed:
            raise RuntimeError("the extraction pool is closed")
        if len(self._slots) < self.size and all(slot.waiters for slot in self._slots):
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
            self._queue.extend(slot.waiters)
        for _, future in self._queue:
            if not future.done():
                future.set_exception(WorkerCrashed("the crawl closed"))
        self._queue.clear()

    # -- workers --------------------------------------------------------------------------

    def _start(self) -> _Slot:
        here, there = socket.socketpair()
        with there:
            process = subprocess.Popen(
                [sys.executable, "-P", "-c", _WORKER_BOOT, CODE_ROOT, str(there.fileno())],
                pass_fds=(there.fileno(),), stdin=subprocess.DEVNULL)
        if not self.started:
            logger.info("docscrawl: extraction worker %s started (docscrawl from %s)",
                        process.pid, CODE_ROOT)
        conn = Connection(here.detach())
        slot = _Slot(process, conn)
        self._slots.append(slot)
        with contextlib.suppress(OSError):  # it died at once: the next page finds out
            conn.send(self.setup)  # (blocks until the new interpreter reads it)
        os.set_blocking(conn.fileno(), False)
        self.started += 1
        return slot

    def _dispatch(self) -> None:
        """Send waiting pages to the least busy workers, IN_FLIGHT at most each."""
        while self._queue and self._slots:
            slot = min(self._slots, key=lambda s: len(s.waiters))
            if len(slot.waiters) >= IN_FLIGHT:
                return
            job, future = self._queue.popleft()
            if future.done():  # cancelled while it waited
                continue
            slot.waiters.append((job, future))
            slot.outbox += framed(job)
            if slot.loop is None:
                slot.loop = asyncio.get_running_loop()
                slot.loop.add_reader(slot.conn.fileno(), self._readable, slot)
            if not self._write(slot):
                self._crashed(slot)

    def _write(self, slot: _Slot) -> bool:
        """Write what the socket takes of `outbox`; watch for room while some is left.
        False: the worker is gone."""
        try:
            sent = os.write(slot.conn.fileno(), slot.outbox)
        except BlockingIOError:
            sent = 0
        except OSError:
            return False
        del slot.outbox[:sent]
        if slot.loop is not None and bool(slot.outbox) != slot.writing:
            slot.writing = bool(slot.outbox)
            if slot.writing:
                slot.loop.add_writer(slot.conn.fileno(), self._writable, slot)
            else:
                slot.loop.remove_writer(slot.conn.fileno())
        return True

    def _writable(self, slot: _Slot) -> None:
        if slot in self._slots and not self._write(slot):
            self._crashed(slot)

    def _unwatch(self, slot: _Slot) -> None:
        loop, slot.loop, slot.writing = slot.loop, None, False
        if loop is not None and not loop.is_closed():
            for remove in (loop.remove_reader, loop.remove_writer):
                with contextlib.suppress(OSError, ValueError):  # a closed socket
                    remove(slot.conn.fileno())

    def _readable(self, slot: _Slot) -> None:
        """The worker's socket has bytes, or its end of file (it died): one read, then every
        whole answer in what was read goes to its page."""
        try:
            data = os.readv(slot.conn.fileno(), [slot.inbox])
        except BlockingIOError:  # woken for nothing
            return
        except OSError:
            data = 0
        facts: list[PageFacts] = []
        if data:
            slot.buffer += slot.inbox[:data]
            try:
                while len(facts) < len(slot.waiters) and (
                        message := take_message(slot.buffer)) is not None:
                    facts.append(pickle.loads(message))
            except Exception:  # not an answer: the worker is not to be trusted
                data = 0
        for answer in facts:
            _, future = slot.waiters.popleft()
            if not future.done():
                future.set_result(answer)
        if not data or (slot.buffer and not slot.waiters):  # an answer nobody asked for
            self._crashed(slot)
        if not self.closed:
            self._dispatch()

    def _crashed(self, slot: _Slot) -> None:
        """A worker died: the page it held (the oldest sent) fails, the pages sent after
        it wait for the next worker, and a new worker starts."""
        code = self._retire(slot)
        held = list(slot.waiters)
        if held:
            self.crashed += 1
            logger.warning("docscrawl: extraction worker %s died (exit code %s); a new one "
                           "starts", slot.process.pid, code)
            _, future = held[0]
            if not future.done():
                future.set_exception(WorkerCrashed(
                    f"extraction worker {slot.process.pid} died (exit code {code})"))
            self._queue.extendleft(reversed(held[1:]))
        if not self.closed:
            self._start()

    def _retire(self, slot: _Slot, *, ask: bool = False) -> int | None:
        """Take a worker out (asked to stop, or found dead); its exit code."""
        self._unwatch(slot)
        if slot in self._slots:
            self._slots.remove(slot)
        if slot.waiters:
            slot.process.kill()  # its answers are not wanted: no waiting for them
        elif ask:
            with contextlib.suppress(OSError, ValueError):
                os.set_blocking(slot.conn.fileno(), True)  # an idle worker: nothing is queued
                slot.conn.send(None)
        slot.conn.close()
        try:
            slot.process.wait(JOIN_SECONDS if ask else 1.0)
        except subprocess.TimeoutExpired:
            slot.process.kill()
            slot.process.wait()
        return slot.process.returncode


def serve_fd(fd: str) -> None:
    """A worker process's entry (`_WORKER_BOOT`): `serve` on the inherited socket `fd`."""
    serve(Connection(int(fd)))
