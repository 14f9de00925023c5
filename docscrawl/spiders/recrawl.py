"""The spider's side of an incremental re-crawl: what the previous run knows of a page.

A page the state knows is requested with conditional headers (`page_request` in the
spider). Its response is read here into the facts `decide_response` decides on
(`ResponseFacts`: the body's hash, the state's row, whether the previous output still
holds the page's lines); a 304 whose lines are gone is asked for again in full.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from scrapy.http import Request, Response, TextResponse

from docscrawl.crawl.items import CarriedPage
from docscrawl.incremental.recrawl import body_hash
from docscrawl.spiders.decision import ResponseFacts, StoredPage
from docscrawl.spiders.site_resources import latency_ms
from docscrawl.vocab import Meta

if TYPE_CHECKING:
    from docscrawl.crawl.session import CrawlSession
    from docscrawl.discovery.pagetrack import PageTrack
    from docscrawl.incremental.carry import CarriedLines
    from docscrawl.incremental.rows import StateRow
    from docscrawl.spiders.offers import Offers

STATE_CANONICAL = Meta.STATE_CANONICAL


def response_facts(session: CrawlSession, response: Response
                   ) -> tuple[ResponseFacts, StateRow | None, CarriedLines | None]:
    """What `decide_response` needs of a response, the state's row it asked about and
    that page's lines in the previous output (None when they are gone)."""
    conditional = STATE_CANONICAL in response.meta
    row = (session.incremental.row_for(response.meta[STATE_CANONICAL])
           if conditional else None)
    digest = body_hash(response.body)
    # The previous run's lines, read only when the page can be carried over (a 304, or
    # the body the state holds): a changed page never needs them.
    lines = (session.incremental.lines_for(row) if row is not None and (
        response.status == 304 or row.body_hash == digest) else None)
    if lines is not None and not session.templates.available(lines.page):
        lines = None  # its template blocks are gone: fetched and extracted in full
    location = response.headers.get("Location")
    facts = ResponseFacts(
        url=response.url, status=response.status, body=response.body, digest=digest,
        content_type=(response.headers.get("Content-Type") or b"").decode("latin-1"),
        location=location.decode("latin-1") if location else None,
        is_text=isinstance(response, TextResponse),
        download_stopped="download_stopped" in response.flags,
        conditional=conditional,
        stored=(StoredPage(row.body_hash, row.can_carry_over and lines is not None)
                if row is not None else None))
    return facts, row, lines


def refetch(response: Response) -> Request:
    """A 304 for a page the state or the previous output no longer holds as it was:
    the same request again, in full, without its conditional headers."""
    request = response.request
    assert request is not None  # a response the engine hands a callback has its request
    return request.replace(
        headers={key: value for key, value in request.headers.items()
                 if key.lower() not in (b"if-none-match", b"if-modified-since")},
        meta={key: value for key, value in response.meta.items()
              if key != STATE_CANONICAL},
        dont_filter=True)


def header(response: Response, name: str) -> str | None:
    """A response header as text (ETag, Last-Modified), None when absent."""
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None


def carry_over(offers: Offers, track: PageTrack, response: Response, row: StateRow,
               digest: str | None, lines: CarriedLines) -> Iterable[Any]:
    """An unchanged page: its lines go out again as the previous output holds them;
    its stored links are followed as if the page had been parsed."""
    track.observe(response.url)
    # The links the page had when it was parsed, head links included: the re-crawl
    # reaches every page the page itself would lead to.
    follow = offers.follow(row.discovery_links or [], response.url, track.depth + 1)
    yield CarriedPage(
        track=track, row=row, lines=lines, final_url=response.url, status=response.status,
        etag=header(response, "ETag"), last_modified=header(response, "Last-Modified"),
        fetch_mode="http", body_digest=digest, elapsed_ms=latency_ms(response),
        size=len(response.body),
    )
    yield from follow
