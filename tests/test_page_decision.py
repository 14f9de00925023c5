"""The table of a page response's exits (`docscrawl.spiders.decision`), without a crawl."""

from __future__ import annotations

import pytest

from docscrawl.incremental.recrawl import body_hash
from docscrawl.spiders.decision import (
    CarryOver,
    End,
    Extract,
    FollowRedirect,
    Inventory,
    Parse,
    Refetch,
    ResponseFacts,
    StoredPage,
    decide_parsed,
    decide_response,
)
from docscrawl.vocab import Event, FailReason, SkipReason, http_failure

URL = "https://docs.example.com/v2/page.html"
HTML = b"<!doctype html><html><body><p>Hello</p></body></html>"
DIGEST = body_hash(HTML)
CARRY = StoredPage(DIGEST, can_carry_over=True)


def facts(**changes: object) -> ResponseFacts:
    values: dict[str, object] = {"url": URL, "status": 200, "body": HTML,
                                 "content_type": "text/html; charset=utf-8"}
    values.update(changes)
    values.setdefault("digest", body_hash(values["body"]))  # type: ignore[arg-type]
    return ResponseFacts(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(("case", "given", "expected"), [
    ("an HTML page", facts(), Parse(DIGEST)),
    ("no Content-Type, HTML body", facts(content_type=""), Parse(DIGEST)),
    ("304 for a stored page", facts(status=304, body=b"", conditional=True, stored=CARRY),
     CarryOver(None)),
    ("304, the state lost the page", facts(status=304, body=b"", conditional=True),
     Refetch()),
    ("304, its lines gone", facts(status=304, body=b"", conditional=True,
                                  stored=StoredPage(DIGEST, can_carry_over=False)),
     Refetch()),
    ("200 with the stored body, its lines gone",
     facts(conditional=True, stored=StoredPage(DIGEST, can_carry_over=False)), Parse(DIGEST)),
    ("304 to an unconditional request", facts(status=304, body=b""),
     End(Event.FAILED, http_failure(304), name_fetch_mode=True, state="kept")),
    ("200 with the stored body", facts(conditional=True, stored=CARRY), CarryOver(DIGEST)),
    ("200 with a changed body", facts(conditional=True,
                                      stored=StoredPage("other", can_carry_over=True)),
     Parse(DIGEST)),
    ("301 with a relative Location", facts(status=301, location="../v3/page.html#top"),
     FollowRedirect("https://docs.example.com/v3/page.html#top")),
    ("308 with an absolute Location", facts(status=308, location="https://x.example/a"),
     FollowRedirect("https://x.example/a")),
    ("302 without Location", facts(status=302),
     End(Event.FAILED, http_failure(302), name_fetch_mode=True, state="kept")),
    ("404: gone", facts(status=404),
     End(Event.FAILED, http_failure(404), name_fetch_mode=True, state="gone")),
    ("410: gone", facts(status=410),
     End(Event.FAILED, http_failure(410), name_fetch_mode=True, state="gone")),
    ("503: kept for the next run", facts(status=503),
     End(Event.FAILED, http_failure(503), name_fetch_mode=True, state="kept")),
    ("a PDF", facts(content_type="application/pdf"),
     End(Event.SKIPPED, SkipReason.NON_HTML, "Content-Type: application/pdf")),
    ("not a text response", facts(content_type="", is_text=False),
     End(Event.SKIPPED, SkipReason.NON_HTML, "Content-Type: unknown")),
    ("download stopped at the headers", facts(download_stopped=True),
     End(Event.SKIPPED, SkipReason.NON_HTML, "Content-Type: text/html; charset=utf-8")),
    ("an empty body", facts(body=b"  \n"),
     End(Event.FAILED, FailReason.EMPTY_BODY, "HTTP 200 with no content")),
])
def test_response_decisions(case: str, given: ResponseFacts, expected: object) -> None:
    assert decide_response(given) == expected, case


def test_binary_body_labelled_html_is_refused() -> None:
    decision = decide_response(facts(body=b"%PDF-1.7\n" + bytes(range(256)) * 8))
    assert isinstance(decision, End)
    assert (decision.event, decision.reason) == (Event.SKIPPED, SkipReason.NON_HTML)
    assert decision.rule and "Content-Type" not in decision.rule


@pytest.mark.parametrize(("refresh", "extract", "expected"), [
    (None, True, Extract()),
    (None, False, Inventory()),
    (URL + "#here", True, Extract()),  # a refresh to the page itself is no redirect
    ("https://docs.example.com/v3/", True,
     FollowRedirect("https://docs.example.com/v3/", reason="meta_refresh")),
    ("https://docs.example.com/v3/", False,
     FollowRedirect("https://docs.example.com/v3/", reason="meta_refresh")),
])
def test_parsed_decisions(refresh: str | None, extract: bool, expected: object) -> None:
    assert decide_parsed(URL, refresh, extract=extract) == expected
