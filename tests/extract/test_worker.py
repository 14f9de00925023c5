"""`extract.worker.page_facts` answers what the crawler reads from a page's tree, the same
as reading it in the crawler; and the same through a real worker process (`crawl.pool`)."""

from __future__ import annotations

import asyncio
import gc
import os
import pickle
import signal
import socket
import threading
from collections import Counter
from dataclasses import asdict
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from docscrawl.chunking.chunker import chunk_page
from docscrawl.crawl.framing import framed, take_message
from docscrawl.crawl.pool import ExtractPool, WorkerCrashed
from docscrawl.extract.page import extract_page, page_structure
from docscrawl.extract.site_versions import home_urls, scope_numbers
from docscrawl.extract.template.table import TemplateTable
from docscrawl.extract.tree import html_root
from docscrawl.extract.worker import (
    PageFacts,
    PageJob,
    SparseCheck,
    Worker,
    WorkerSetup,
    link_facts,
    page_facts,
    site_signals,
)
from docscrawl.render.policy import sparse_reason

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DEMO = FIXTURES / "sites" / "demo"
SITE = "http://127.0.0.1:8000/docs/"


def demo_pages() -> list[tuple[str, str]]:
    """(URL, text) of the demo site's pages and the extraction fixtures' pages."""
    pages = [(f"http://127.0.0.1:8000/{path.relative_to(DEMO)}", path)
             for path in sorted(DEMO.rglob("*.html"))]
    pages += [(f"http://127.0.0.1:8000/fixtures/{path.relative_to(FIXTURES / 'pages')}", path)
              for path in sorted((FIXTURES / "pages").rglob("*.html"))]
    return [(url, path.read_text("utf-8", errors="replace")) for url, path in pages]


PAGES = demo_pages()


@pytest.fixture(scope="module")
def setup() -> WorkerSetup:
    """A template table learned from the demo's pages and frozen, as a crawl's is."""
    table = TemplateTable(min_pages=2)
    for url, text in PAGES[:12]:
        table.observe(extract_page(html_root(text, url), url).signatures)
    table.freeze()
    return WorkerSetup(site_url=SITE, profile=None, template=table.to_json())


def in_crawler(url: str, text: str, table: TemplateTable | None) -> PageFacts:
    """What the spider and the extraction pipeline read from the tree in the crawler."""
    root = html_root(text, url)
    structure = page_structure(root, url)
    facts = PageFacts(generator=structure.profile, links=link_facts(root, structure))
    facts.extract = extract_page(root, url, structure=structure, template_table=table)
    facts.signals = site_signals(root, structure, facts.extract, url, home_urls(SITE),
                                 scope_numbers(SITE))
    return facts


def job(url: str, text: str, sparse: SparseCheck | None = None) -> PageJob:
    return PageJob(url=url, text=text, base_url=url, body_bytes=len(text.encode()),
                   extract=True, sparse=sparse)


def same(a: PageFacts, b: PageFacts) -> bool:
    return asdict(a) == asdict(b)  # type: ignore[call-overload]


def test_a_worker_reads_what_the_crawler_reads(setup: WorkerSetup) -> None:
    worker = Worker(setup)
    assert len(PAGES) > 20
    templated = 0
    for url, text in PAGES:
        mine = page_facts(job(url, text), worker)
        if mine.refresh:
            continue  # a meta refresh stub: the spider follows it
        expected = in_crawler(url, text, setup.table())
        assert mine.error is None and mine.extract_error is None, url
        assert same(mine, expected), url
        templated += bool(mine.extract and mine.extract.blocks)
    assert templated  # the frozen table judged blocks


def test_a_page_not_sampled_for_version_signals_is_not_read_for_them(
        setup: WorkerSetup) -> None:
    """The crawler samples pages for the site's version signals (`SiteVersions.wants`) and
    says so in the job: a page it does not want them from costs no signal walk."""
    worker = Worker(setup)
    url, text = next((u, t) for u, t in PAGES if "version" in t.lower())
    asked = page_facts(job(url, text), worker)
    assert asked.signals  # this page shows version signals
    unasked = page_facts(PageJob(url=url, text=text, base_url=url,
                                 body_bytes=len(text.encode()), extract=True, signals=False),
                         worker)
    assert unasked.signals is None
    unasked.signals = asked.signals
    assert same(unasked, asked)  # nothing else differs


def test_the_sparse_verdict_ends_the_work_early(setup: WorkerSetup) -> None:
    shell = ('<html><head><title>App</title><script src="/app.js"></script></head>'
             '<body><div id="app"></div></body></html>')
    url = "http://127.0.0.1:8000/docs/app.html"
    check = SparseCheck(main_selector=None, min_text_chars=200, inert_scripts=frozenset(),
                        learn=True)
    facts = page_facts(job(url, shell, check), Worker(setup))
    assert facts.sparse == sparse_reason(html_root(shell, url), body_bytes=len(shell))
    assert facts.sparse is not None and facts.extract is None and facts.links is None


def test_a_worker_process_answers_the_same_and_survives_a_killed_worker(
        setup: WorkerSetup) -> None:
    pages = PAGES[:6]

    async def crawl() -> tuple[list[PageFacts], str, PageFacts]:
        pool = ExtractPool(1, setup)
        try:
            answers = await asyncio.gather(*(pool.run(job(u, t)) for u, t in pages))
            (pid,) = pool.pids()
            os.kill(pid, signal.SIGSTOP)  # it holds the next page when it dies
            small = min(pages, key=lambda page: len(page[1]))  # fits the pipe's buffer
            pending = asyncio.ensure_future(pool.run(job(*small)))
            await asyncio.sleep(0)
            os.kill(pid, signal.SIGKILL)
            with pytest.raises(WorkerCrashed) as crashed:
                await pending
            after = await pool.run(job(*pages[1]))  # a new worker took its place
            assert pool.pids() != [pid] and pool.crashed == 1
            return answers, str(crashed.value), after
        finally:
            pool.close()

    answers, crashed, after = asyncio.run(crawl())
    worker = Worker(setup)
    for (url, text), answer in zip(pages, answers, strict=True):
        assert same(answer, page_facts(job(url, text), worker)), url
    assert "died" in crashed
    assert same(after, page_facts(job(*pages[1]), worker))


def test_pages_and_answers_larger_than_the_socket_both_keep_moving(setup: WorkerSetup) -> None:
    """The crawler writes a job as far as the socket takes it and reads answers whenever
    they come (`crawl.pool`): pages and answers each many times the socket's buffer, two
    in flight, are all answered, the same as in the crawler. (With a blocking send, the
    crawler waited to send the second page while the worker waited to send the first
    answer: the two hung.)"""
    here, there = socket.socketpair()
    buffered = here.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    here.close()
    there.close()
    paragraph = ("<p>Set <code>timeout</code> before the first request, see "
                 "<a href='x.html'>x</a>.</p>\n")
    pages = [(f"{SITE}big/{n}.html",
              f"<html><head><title>Big {n}</title></head><body><main><h1>Big {n}</h1>"
              + paragraph * (3 * buffered // len(paragraph)) + "</main></body></html>")
             for n in range(3)]

    async def crawl() -> list[PageFacts]:
        pool = ExtractPool(1, setup)
        try:
            return await asyncio.gather(*(pool.run(job(url, text)) for url, text in pages))
        finally:
            pool.close()

    answers = asyncio.run(crawl())
    worker = Worker(setup)
    for (url, text), answer in zip(pages, answers, strict=True):
        assert len(framed(answer)) > buffered
        assert same(answer, page_facts(job(url, text), worker)), url


def test_answers_are_taken_whole_from_what_the_socket_gave(setup: WorkerSetup) -> None:
    """The crawler reads a worker's answers as the socket gives them (`framing.take_message`):
    the messages `Connection.send` framed come out whole and in order, however the bytes
    were cut, and nothing before a message is complete; `framed` writes the bytes
    `Connection.send` does."""
    facts = [page_facts(job(url, text), Worker(setup)) for url, text in PAGES[:3]]
    here, there = socket.socketpair()
    sender, receiver = Connection(here.detach()), Connection(there.detach())
    wire = bytearray()
    def send_all() -> None:
        for answer in facts:
            sender.send(answer)

    sending = threading.Thread(target=send_all)
    sending.start()
    try:
        while len(wire) < 4 or not _whole(wire, len(facts)):
            wire += os.read(receiver.fileno(), 1 << 16)
    finally:
        sending.join()
        sender.close()
        receiver.close()
    assert bytes(wire) == b"".join(framed(answer) for answer in facts)
    for cut in (1, 3, 4, 5, 1000, len(wire) // 2, len(wire) - 1):
        buffer, taken = bytearray(), []
        for start in range(0, len(wire), cut):
            buffer += wire[start:start + cut]
            while (message := take_message(buffer)) is not None:
                taken.append(pickle.loads(message))
        assert len(taken) == len(facts) and not buffer, cut
        assert all(same(a, b) for a, b in zip(taken, facts, strict=True)), cut
    assert take_message(bytearray(b"\xff\xff\xff\xff" + b"\0" * 7)) is None  # 8-byte size
    big = bytearray(b"\xff\xff\xff\xff" + (3).to_bytes(8, "big") + b"abcd")
    assert take_message(big) == b"abc" and big == bytearray(b"d")


def _whole(wire: bytearray, count: int) -> bool:
    copy = bytearray(wire)
    return all(take_message(copy) is not None for _ in range(count))


def test_a_worker_that_dies_idle_is_replaced_before_the_next_page(setup: WorkerSetup) -> None:
    """The event loop watches an idle worker's socket too: its end of file starts a new
    worker, and the next page goes to that one, not to the dead one's socket (no page
    fails, none counted as crashed)."""
    url, text = PAGES[0]

    async def crawl() -> PageFacts:
        pool = ExtractPool(1, setup)
        try:
            await pool.run(job(url, text))
            (pid,) = pool.pids()
            os.kill(pid, signal.SIGKILL)
            while pool.pids() == [pid]:  # until the loop has seen its end of file
                await asyncio.sleep(0.01)
            answer = await pool.run(job(url, text))
            assert pool.started == 2 and pool.crashed == 0
            return answer
        finally:
            pool.close()

    answer = asyncio.run(crawl())
    assert same(answer, page_facts(job(url, text), Worker(setup)))


def test_a_page_leaves_no_reference_cycles(setup: WorkerSetup) -> None:
    """A page's whole work (structure, extraction, links, chunks) leaves nothing for the
    cyclic collector: its tree, region map and links go with their last reference. The
    crawl runs that collector rarely (`collector.tune`: every 50,000 allocations, in the
    worker too) and it does not count lxml's memory, so a cycle holding a parsed page keeps
    its tree alive across many pages; the compiled build (docs/compiled.md) once made one
    of a closure (`links.discovery_links`): its worker held 40-80 MB more. The
    compiled-build test runs this file against the C extensions too."""
    worker = Worker(setup)
    jobs = [job(url, text) for url, text in PAGES]

    def work() -> int:
        extracted = 0
        for page in jobs:
            facts = page_facts(page, worker)
            if facts.extract is not None:
                extracted += 1
                chunk_page(facts.extract, page_id="p", canonical_url=page.url, title=None,
                           version=None, breadcrumbs=[], retrieved_at="2026-12-05T00:00:00Z",
                           content_hash="h")
            del facts
        return extracted

    work()  # imports what extraction imports lazily (extruct, for JSON-LD): once, not a page
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds stays in gc.garbage
    try:
        extracted = work()
        found = gc.collect()
        kinds = Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.garbage.clear()
        gc.set_debug(0)
        gc.enable()
    assert extracted > 100
    assert found == 0, kinds.most_common(12)
