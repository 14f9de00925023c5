"""Which pages the template table learns from, so that every crawl of a site judges its
pages by the same table, whatever order they arrive in and however many workers fetch them.

A table learned from "the first pages that arrived" depends on fetch order: two crawls of
one site (one process or several workers, a resume) would leave different blocks out.
So the table learns from a sample every crawl agrees on: the seed page and in-scope pages
it links to, spread evenly over its links in document order (`SAMPLE_PAGES` in all),
chosen by the spider when it parses the seed (`sample_of`), which fetches them first. Pages are held
(`docscrawl.extract.pipeline`) until every page of the sample was counted or ended
otherwise (failed, skipped: `settle`); then the table is frozen and every page, the held
ones first, is judged by it. The frozen table is kept in the crawl state, so resumed and
incremental crawls judge by it too. In distributed mode the sample and the counts live in
Redis (`docscrawl.distributed.template_counts`): the worker that parsed the seed stores the sample,
every worker counts the sample pages it extracts, and each freezes the same table.

If the sample cannot be completed (the seed is no HTML page, the crawl goes quiet, too
many pages are held), the table is frozen with what it counted (`give_up`): then, and only
then, the verdicts depend on fetch order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

from docscrawl.discovery.urls import normalize_url
from docscrawl.extract.template.table import TemplateTable

__all__ = ["SAMPLE_PAGES", "Warmup", "sample_of"]

SAMPLE_PAGES = 12  # the seed and the first pages it links to


def _norm(url: str) -> str | None:
    try:
        return normalize_url(url)
    except ValueError:
        return None


def url_key(url: str) -> int:
    """The key a sample page is counted under (its normalized URL)."""
    return int.from_bytes(hashlib.blake2b(url.encode("utf-8", "surrogatepass"),
                                          digest_size=8).digest(), "big")


def sample_of(seed: str, urls: Iterable[str], key_of: Callable[[str], str | None]
              ) -> list[str]:
    """The seed and up to SAMPLE_PAGES - 1 distinct pages it links to (`urls` in document
    order, as the crawl keys them; `key_of` is None for a URL out of scope), spread evenly
    over its links: a seed's first links are often one section (a crate's modules before
    its types), its links as a whole stand for the site."""
    keys: list[str] = []
    seen = {seed}
    for url in urls:
        key = key_of(url)
        if key and key not in seen:
            seen.add(key)
            keys.append(key)
    wanted = SAMPLE_PAGES - 1
    if len(keys) > wanted:
        keys = [keys[round(i * (len(keys) - 1) / (wanted - 1))] for i in range(wanted)]
    return [seed, *keys]


class Warmup:
    """Feeds the sample pages to the table and freezes it when the sample is complete."""

    def __init__(self, table: TemplateTable) -> None:
        self.table = table
        self.sample: list[str] | None = None
        self._waiting: list[tuple[set[str], list[int]]] = []  # offered before the sample

    @property
    def ready(self) -> bool:
        return self.table.frozen

    def offer(self, urls: Iterable[str], signatures: list[int],
              sample: list[str] | None = None) -> None:
        """A page arrived (its URLs: requested, key, final): count it when it is in the
        sample. `sample`: the spider's, once it parsed the seed."""
        forms = {*urls, *(u for u in map(_norm, urls) if u)}
        if self.sample is None and sample is not None:
            self._define(sample)
        if self.sample is None:
            self._waiting.append((forms, signatures))
        else:
            self._count(forms, signatures)

    def settle(self, url: str) -> None:
        """`url` ended (its terminal event): a sample URL that was not extracted (failed,
        skipped, redirected elsewhere) is done all the same. Only the URL itself: another
        spelling of it (a tracking variant) ends as a duplicate before the page arrives."""
        if self.sample is not None and url in self.sample and not self.ready:
            self.table.settle(url_key(url))

    def check(self) -> bool:
        """True once the table is frozen (freezing it when the sample is complete)."""
        if self.ready:
            return True
        shared = self.table.shared
        if self.sample is None and shared is not None:
            stored = shared.sample()
            if stored:
                self._define(stored)
        self.table.refresh()
        if self.sample is not None and all(self.table.settled(url_key(u)) for u in self.sample):
            self.table.freeze()
        return self.ready

    def give_up(self) -> None:
        """Freeze the table with what it counted (the sample could not be completed)."""
        self.table.freeze()

    def _define(self, sample: list[str]) -> None:
        shared = self.table.shared
        self.sample = (shared.sample(sample) or sample) if shared is not None else sample
        waiting, self._waiting = self._waiting, []
        for forms, signatures in waiting:
            self._count(forms, signatures)

    def _count(self, forms: set[str], signatures: list[int]) -> None:
        """Count a page reached from sample URLs once (by its content), settling them."""
        assert self.sample is not None
        settles = [url_key(url) for url in self.sample if url in forms]
        if settles:
            self.table.observe(signatures, settles=settles)
