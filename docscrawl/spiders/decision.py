"""What to do with a page response, decided from its facts alone (no Scrapy, no session).

`DocsSpider.parse_page` gathers the facts (`ResponseFacts`), asks `decide_response`, and
acts on the typed answer; after parsing an HTML page it asks `decide_parsed`. Every exit
of a page response is one case of these two functions, so the table of cases is tested
without a crawl (tests/test_page_decision.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urljoin

from docscrawl.discovery.urls import strip_fragment
from docscrawl.extract.quality import binary_reason
from docscrawl.vocab import DuplicateReason, Event, FailReason, SkipReason, http_failure

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
HTML_TYPES = ("text/html", "application/xhtml+xml")
GONE_STATUSES = frozenset({404, 410})


@dataclass(frozen=True, slots=True)
class StoredPage:
    """What the incremental state holds of the page a conditional request asked about.
    `can_carry_over`: its row can be written again and the previous run still holds its
    lines as they were (checked by the glue)."""

    body_hash: str | None
    can_carry_over: bool


@dataclass(frozen=True, slots=True)
class ResponseFacts:
    """The facts of one page response the decision needs (read by the spider's glue)."""

    url: str
    status: int
    body: bytes
    digest: str  # `body_hash(body)`: the glue needs it too, to read a carried page's lines
    content_type: str = ""
    location: str | None = None  # the Location header, as sent
    is_text: bool = True  # Scrapy made a TextResponse of it
    download_stopped: bool = False  # the download was cut short (not HTML: headers)
    conditional: bool = False  # the request asked the state (If-None-Match / -Modified)
    stored: StoredPage | None = None  # the state's row, when asked and found


@dataclass(frozen=True, slots=True)
class CarryOver:
    """Unchanged since the last run: the stored record goes out as is."""

    digest: str | None  # the body's hash (None for a 304: no body)


@dataclass(frozen=True, slots=True)
class Refetch:
    """A 304 for a page whose stored lines are gone (the state lost it, or the previous
    output changed): fetch it again in full, without a conditional request."""


@dataclass(frozen=True, slots=True)
class FollowRedirect:
    """The page points elsewhere (HTTP 3xx or meta refresh): follow it as a discovered link."""

    target: str  # absolute URL, fragment kept (the glue strips it)
    reason: str = "redirect"


@dataclass(frozen=True, slots=True)
class End:
    """The response ends without a page: its terminal event.

    `name_fetch_mode`, `name_chain`: the line names the fetch mode, the redirect chain (as
    each exit always did); `state`: what the incremental state does with the page (`gone`:
    forgotten, `kept`: carried to the next run, None: nothing).
    """

    event: Event
    reason: str
    rule: str | None = None
    name_fetch_mode: bool = False
    name_chain: bool = True
    state: str | None = None


@dataclass(frozen=True, slots=True)
class Parse:
    """An HTML page: parse it (then `decide_parsed`)."""

    digest: str  # the body's hash, stored with the page for the next crawl's shortcut


@dataclass(frozen=True, slots=True)
class Extract:
    """Hand the parsed page to the pipelines (after following its links)."""


@dataclass(frozen=True, slots=True)
class Inventory:
    """Inventory crawl (`-a extract=false`): the `fetched` event ends the page."""


ResponseDecision = CarryOver | Refetch | FollowRedirect | End | Parse
ParsedDecision = FollowRedirect | Extract | Inventory

def decide_response(facts: ResponseFacts) -> ResponseDecision:
    """Before parsing: carried over, redirected, failed, refused, or parse it."""
    if facts.status == 304 and facts.conditional:
        carried = facts.stored is not None and facts.stored.can_carry_over
        return CarryOver(None) if carried else Refetch()
    if facts.status in REDIRECT_STATUSES and facts.location:
        return FollowRedirect(urljoin(facts.url, facts.location))
    if not 200 <= facts.status < 300:
        failure = http_failure(facts.status)
        return End(Event.FAILED, failure, name_fetch_mode=True,
                   state="gone" if facts.status in GONE_STATUSES else "kept")
    digest = facts.digest
    stored = facts.stored
    if stored is not None and stored.can_carry_over and stored.body_hash == digest:
        return CarryOver(digest)  # else parsed again
    refused = body_refusal(facts)
    if refused is not None:
        return refused
    return Parse(digest)


def decide_parsed(url: str, refresh: str | None, *, extract: bool) -> ParsedDecision:
    """After parsing: a meta refresh to another URL is a redirect; else extract, or only
    follow the links (inventory crawl)."""
    if refresh and strip_fragment(refresh) != strip_fragment(url):
        return FollowRedirect(refresh, reason=DuplicateReason.META_REFRESH)
    return Extract() if extract else Inventory()


def is_html_type(content_type: str) -> bool:
    """True for HTML and XHTML media types."""
    return content_type.split(";", 1)[0].strip().lower() in HTML_TYPES


def body_refusal(facts: ResponseFacts) -> End | None:
    """Why a 2xx body is no HTML page, or None when it is one."""
    if facts.download_stopped or not facts.is_text or (
        facts.content_type and not is_html_type(facts.content_type)
    ):
        return End(Event.SKIPPED, SkipReason.NON_HTML,
                   f"Content-Type: {facts.content_type or 'unknown'}")
    if not facts.body.strip():
        return End(Event.FAILED, FailReason.EMPTY_BODY, "HTTP 200 with no content")
    binary = binary_reason(facts.body)
    if binary:
        return End(Event.SKIPPED, SkipReason.NON_HTML, binary)
    return None

