"""One page's work off the crawler's core: text in, everything the crawl needs out.

`page_facts(job, setup)` parses the page once and, from that one tree, answers what the
render middleware, the spider and the extraction pipeline would each have read from it in
the crawler: the sparse-page verdict (`render.policy`), a meta refresh, the generator,
the links discovery follows (`LinkFacts`), the extracted page (with the frozen template
table) and, when the crawler samples the page for them (`PageJob.signals`), the page's
site-version signals. It is pure (no Scrapy, no I/O), so the result
is the same in a worker process (`docscrawl.crawl.pool`) as in the crawler, which is what
`tests/extract/test_worker.py` checks. Everything crossing the process boundary pickles.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lxml import etree

from docscrawl.discovery.budget import declared_indexes, is_link_listing
from docscrawl.discovery.refresh import meta_refresh_target
from docscrawl.extract.links import discovery_links
from docscrawl.extract.metadata import canonical_href
from docscrawl.extract.model import PageExtract, pickled_by_fields
from docscrawl.extract.page import PageStructure, extract_page, page_structure
from docscrawl.extract.site_versions import (
    Signal,
    home_link_texts,
    home_urls,
    page_signals,
    scope_numbers,
)
from docscrawl.extract.template.table import TemplateTable
from docscrawl.extract.tree import html_root
from docscrawl.render.policy import complete_scripts, sparse_reason
from docscrawl.spiders.decision import FollowRedirect, decide_parsed


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class LinkFacts:
    """What link discovery reads from a page's tree (`spiders.links.PageLinks`)."""

    base_url: str  # the page's base URL (`<base href>`, else its URL)
    declared_indexes: tuple[str, ...]  # hrefs of `<link rel="index">`
    link_listing: bool  # the main content is mostly links
    canonical: str | None  # the declared canonical href, resolved
    links: tuple[tuple[str, str], ...]  # (URL, region) of `discovery_links`


def link_facts(root: etree._Element, structure: PageStructure) -> LinkFacts:
    """The page's `LinkFacts`, read from its tree and structure."""
    base_url = structure.base_url
    return LinkFacts(
        base_url=base_url,
        declared_indexes=tuple(declared_indexes(root)),
        link_listing=is_link_listing(structure.main_el),
        canonical=canonical_href(root, base_url),
        links=tuple((link.url, link.region) for link in
                    discovery_links(root, base_url, region_map=structure.regions,
                                    texts=False)))


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class SparseCheck:
    """The render middleware's sparse-page check, asked of the worker (`render=auto`)."""

    main_selector: str | None
    min_text_chars: int
    inert_scripts: frozenset[str]
    learn: bool  # also say which scripts a complete page loads (`complete_scripts`)

    def judge(self, root: etree._Element, *, body_bytes: int) -> tuple[str | None, frozenset[str]]:
        """Why the page needs rendering (None: it does not), and, for a complete page while
        `learn`, the scripts it loads: the one check, in the middleware or in a worker."""
        reason = sparse_reason(root, body_bytes=body_bytes, main_selector=self.main_selector,
                               min_text_chars=self.min_text_chars,
                               inert_scripts=self.inert_scripts)
        if reason is not None or not self.learn:
            return reason, frozenset()
        return None, complete_scripts(root, self.main_selector)


@dataclass(frozen=True, slots=True)
class WorkerSetup:
    """What every page's work shares: given to a worker once, when it starts."""

    site_url: str
    profile: Mapping[str, Any] | None
    template: dict[str, Any] | None  # the frozen `TemplateTable.to_json()`
    # the crawler's `DOCSCRAWL_GC_GEN0_THRESHOLD`, applied in the worker too
    # (`collector.tune`); 0 leaves its collector alone
    gc_gen0_threshold: int = 0

    def table(self) -> TemplateTable | None:
        return TemplateTable.from_json(self.template) if self.template is not None else None


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class PageJob:
    """One HTML response: its decoded text and what the crawler already knows of it."""

    url: str  # the response URL
    text: str
    base_url: str  # `get_base_url(response)`
    body_bytes: int
    extract: bool  # False: an inventory crawl (links only)
    sparse: SparseCheck | None = None
    # read the site-version signals: the crawler samples pages for them
    # (`SiteVersions.wants`) and asks when it sends the page
    signals: bool = True


@pickled_by_fields
@dataclass(slots=True)
class PageFacts:
    """The answer for one page. `sparse` set: nothing else was done (it is rendered);
    `refresh` leading elsewhere: nothing after it; `error`: the structure failed."""

    sparse: str | None = None
    complete_scripts: frozenset[str] = frozenset()
    refresh: str | None = None
    error: str | None = None
    generator: str | None = None
    links: LinkFacts | None = None
    extract: PageExtract | None = None
    extract_error: str | None = None
    signals: set[Signal] | None = None  # None: not asked for (`PageJob.signals`)


class Worker:
    """A worker's state: the setup's tables, built once, read for every page."""

    def __init__(self, setup: WorkerSetup) -> None:
        self.setup = setup
        self.table = setup.table()
        self.home = home_urls(setup.site_url)
        self.scope = scope_numbers(setup.site_url)

    def run(self, job: PageJob) -> PageFacts:
        return page_facts(job, self)


def _error(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}"[:300]


def page_facts(job: PageJob, worker: Worker) -> PageFacts:
    """Parse `job` once and read everything from that tree (see the module doc)."""
    facts = PageFacts()
    try:
        root = html_root(job.text, job.base_url)
    except Exception as exc:  # the spider ends the page with it
        facts.error = _error(exc)
        return facts
    if job.sparse is not None:
        facts.sparse, facts.complete_scripts = job.sparse.judge(root, body_bytes=job.body_bytes)
        if facts.sparse is not None:
            return facts
    facts.refresh = meta_refresh_target(root, job.base_url)
    if isinstance(decide_parsed(job.url, facts.refresh, extract=job.extract), FollowRedirect):
        return facts
    try:
        structure = page_structure(root, job.url, profile=worker.setup.profile)
    except Exception as exc:  # one broken page must not stop the crawl
        facts.error = _error(exc)
        return facts
    facts.generator = structure.profile
    facts.links = link_facts(root, structure)
    if not job.extract:
        return facts
    try:
        extract = facts.extract = extract_page(root, job.url, structure=structure,
                                               template_table=worker.table)
    except Exception as exc:  # the pipeline ends the page with it
        facts.extract_error = _error(exc)
        return facts
    if job.signals:
        facts.signals = site_signals(root, structure, extract, job.url, worker.home,
                                     worker.scope)
    return facts


def site_signals(root: etree._Element, structure: PageStructure | None, extract: PageExtract,
                 url: str, home: frozenset[str], scope: list[str]) -> set[Signal]:
    """The page's site-version signals (`extract.site_versions.page_signals`)."""
    homes = (link.text for link in extract.links if link.url in home)
    index = structure.index if structure is not None else None
    base = structure.base_url if structure is not None else url
    return page_signals(root, homes, scope,
                        classes=index.classes if index is not None else (),
                        ids=index.ids if index is not None else (),
                        home_attributes=home_link_texts(root, base, home),
                        front_matter=url in home)
