"""What grows per page while crawling: a census of the crawl's containers at two page counts.

    PYTHONPATH=$PWD:benchmarks/scale .venv/bin/scrapy crawl docs -a site=URL -a out=DIR \\
        -s HOLDERS_FROM=800 -s HOLDERS_TO=2400 -s HOLDERS_OUT=/tmp/holders.txt \\
        -s 'EXTENSIONS={"scrapy.extensions.logstats.LogStats": null, "holders.Holders": 600,
                        "docscrawl.extensions.progress.Progress": 500,
                        "docscrawl.extensions.gctuning.GcTuning": 10}'

(`-s EXTENSIONS` replaces the project's dict: the three entries of docscrawl/settings.py
stay, the garbage collector's tuning first among them, since it changes what is held.)

At HOLDERS_FROM pages done (extracted or duplicate, as the progress line counts them) it
walks every object the garbage collector tracks, keeping the length of each container of
200 entries or more; at HOLDERS_TO it walks again, writes VmRSS at both, the object types
that grew and the containers that grew (with the attribute that holds each, when found),
and closes the crawl. No tracemalloc: tracing every allocation slowed a crawl 10-20 times
on the shared machine; the walks cost a few seconds each. Strings, numbers and bytes are
not tracked by the collector: measure the bytes of a named holder's entries apart.
"""

from __future__ import annotations

import gc
import sys
from collections import Counter, OrderedDict, deque
from pathlib import Path
from typing import Any

from scrapy import signals
from twisted.internet import task

BIG = 200  # containers shorter than this are not followed
SHOWN = 25


def vm_rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


Census = tuple[dict[int, tuple[int, str]], Counter[str], Counter[str]]


def census() -> Census:
    """({id: (len, type)} of big containers, objects per type, getsizeof bytes per type)."""
    gc.collect()
    big: dict[int, tuple[int, str]] = {}
    counts: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    for obj in gc.get_objects():
        kind = type(obj)
        name = kind.__qualname__
        counts[name] += 1
        sizes[name] += sys.getsizeof(obj, 0)
        sized = kind in (dict, set, list, frozenset, deque, OrderedDict) or (
            hasattr(kind, "__len__") and kind.__module__ != "builtins"
            and not isinstance(obj, type))
        if sized:
            try:
                length = len(obj)
            except BaseException:  # an odd __len__: not a container here
                continue
            if length >= BIG:
                big[id(obj)] = (length, name)
    return big, counts, sizes


def holder_of(obj: Any) -> str:
    """`module.Class.attribute` of the objects holding `obj` (through a __dict__ or a
    slot), else the referrers' types."""
    names = []
    for ref in gc.get_referrers(obj):
        if isinstance(ref, dict):
            for owner in gc.get_referrers(ref):
                if getattr(owner, "__dict__", None) is ref:
                    names += [f"{type(owner).__module__}.{type(owner).__qualname__}.{key}"
                              for key, value in ref.items() if value is obj]
        elif hasattr(type(ref), "__slots__"):
            names += [f"{type(ref).__module__}.{type(ref).__qualname__}.{slot}"
                      for slot in type(ref).__slots__ if getattr(ref, slot, None) is obj]
        elif type(ref).__name__ not in ("function", "cell", "frame", "list"):
            names.append(type(ref).__qualname__)
    return ", ".join(names[:4]) or "?"


class Holders:
    """The Scrapy extension (see the module docstring)."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler
        settings = crawler.settings
        self.first, self.last = settings.getint("HOLDERS_FROM", 1000), settings.getint(
            "HOLDERS_TO", 4000)
        self.out = Path(settings.get("HOLDERS_OUT", "holders.txt"))
        self.at: tuple[int, float, Census] | None = None
        self.done = False
        self.loop: task.LoopingCall | None = None
        crawler.signals.connect(self.opened, signal=signals.spider_opened)

    @classmethod
    def from_crawler(cls, crawler: Any) -> Holders:
        return cls(crawler)

    def opened(self) -> None:
        self.loop = task.LoopingCall(self.tick)
        self.loop.start(1.0, now=False)

    def tick(self) -> None:
        session = getattr(self.crawler.spider, "session", None)
        if session is None or self.done:
            return
        events = session.log.events
        pages = events.get("extracted", 0) + events.get("duplicate", 0)
        if self.at is None and pages >= self.first:
            self.at = (pages, vm_rss_mb(), census())
        elif self.at is not None and pages >= self.last:
            self.done = True
            self.report(pages)
            self.crawler.engine.close_spider(self.crawler.spider, "holders_done")

    def report(self, pages: int) -> None:
        assert self.at is not None
        first_pages, first_rss, (big_a, counts_a, sizes_a) = self.at
        big, counts, sizes = census()
        rss = vm_rss_mb()
        per_page = (rss - first_rss) * 2**20 / max(pages - first_pages, 1)
        lines = [f"pages {first_pages} -> {pages}; VmRSS {first_rss:.1f} -> {rss:.1f} MB "
                 f"({per_page:.0f} B/page)", "", "object types that grew (objects, getsizeof):"]
        grown = sorted(sizes, key=lambda name: sizes_a.get(name, 0) - sizes[name])[:SHOWN]
        lines += [f"  {name}: {counts[name] - counts_a.get(name, 0):+d} objects, "
                  f"{(sizes[name] - sizes_a.get(name, 0)) / 1024:+.0f} KB" for name in grown]
        lines += ["", "containers that grew (length then -> now: held by):"]
        objects = {id(obj): obj for obj in gc.get_objects() if id(obj) in big}
        for key in sorted(big, key=lambda k: big_a.get(k, (0, ""))[0] - big[k][0])[:SHOWN]:
            length, name = big[key]
            before = big_a.get(key, (0, name))[0]
            if length > before and key in objects:
                lines.append(f"  {name} {before} -> {length}: {holder_of(objects[key])}")
        self.out.write_text("\n".join(lines) + "\n")
