"""The crawl's words, spelled once: crawl-log events, skip and failure reasons, run and
change statuses, request meta keys.

Writers and readers import these names instead of repeating bare strings. They are
`StrEnum`s: a member *is* its string (`Event.SKIPPED == "skipped"`, JSON writes
`"skipped"`), so output is unchanged and records read back compare equal to them. Add a
reason here first, then to the vocabulary table of docs/output-and-contract.md.
"""

from __future__ import annotations

from enum import StrEnum

# The files a crawl writes in its output directory, line by line.
OUTPUT_FILES = ("pages.jsonl", "chunks.jsonl", "structure.jsonl", "crawl_log.jsonl",
                "changes.jsonl", "templates.jsonl")


class Event(StrEnum):
    """`event` of a crawl_log.jsonl line."""

    DISCOVERED = "discovered"
    SKIPPED = "skipped"
    FETCHED = "fetched"
    RENDERED = "rendered"
    EXTRACTED = "extracted"
    DUPLICATE = "duplicate"
    UNCHANGED = "unchanged"
    FAILED = "failed"


EVENTS: tuple[Event, ...] = tuple(Event)
# Every discovered URL ends in exactly one of these (the contract's invariant), listed in
# the order reports show them.
TERMINAL_ORDER: tuple[Event, ...] = (
    Event.EXTRACTED, Event.DUPLICATE, Event.UNCHANGED, Event.SKIPPED, Event.FAILED)
TERMINAL: frozenset[str] = frozenset(TERMINAL_ORDER)
# The terminal events of a page written to the output (its lines come before the event).
WRITTEN: frozenset[str] = frozenset({Event.EXTRACTED, Event.UNCHANGED})


class SkipReason(StrEnum):
    """`reason` of a `skipped` event (policy before and after the fetch): the contract's
    closed list, exactly (contract_check rejects any other). A new way to end a URL
    without a page that is none of these is a `failed` reason."""

    DENIED_BY_RULE = "denied_by_rule"
    OUT_OF_SCOPE = "out_of_scope"
    NOT_ALLOWED_BY_RULE = "not_allowed_by_rule"
    PRIVATE_ADDRESS = "private_address"
    NON_HTML = "non_html"
    MAX_DEPTH = "max_depth"
    ROBOTS = "robots"
    DUPLICATE_URL = "duplicate_url"
    MAX_PAGES = "max_pages"
    TRAP = "trap"
    TOO_LARGE = "too_large"
    OFFSITE_REDIRECT = "offsite_redirect"


class FailReason(StrEnum):
    """`reason` of a `failed` event (besides `http_<status>`, built by `http_failure`)."""

    DNS = "dns"
    TIMEOUT = "timeout"
    CONNECTION = "connection"
    REDIRECT_LOOP = "redirect_loop"
    TOO_MANY_REDIRECTS = "too_many_redirects"
    REDIRECT_TARGET_FAILED = "redirect_target_failed"
    EMPTY_BODY = "empty_body"
    SOFT_404 = "soft_404"
    PARSE_ERROR = "parse_error"
    CRAWL_CLOSED = "crawl_closed"
    RENDER_ERROR = "render_error"
    BROWSER_UNAVAILABLE = "browser_unavailable"
    ROBOTS_UNREACHABLE = "robots_unreachable"
    CANONICAL_CONFLICT = "canonical_conflict"  # two pages claim one canonical URL
    TASK_DROPPED = "task_dropped"  # distributed: a task no worker could rebuild
    UNTRUSTED_TASK = "untrusted_task"  # distributed: a queued payload that is not a task
    WORKER_CRASHED = "worker_crashed"  # the extraction worker holding the page died


def http_failure(status: int) -> str:
    """The failure reason of an HTTP error status (`http_404`)."""
    return f"http_{status}"


class DuplicateReason(StrEnum):
    """`reason` of a `duplicate` event."""

    SAME_CONTENT = "same_content"
    REDIRECT = "redirect"  # an HTTP redirect's source: its target holds the page
    META_REFRESH = "meta_refresh"  # a `<meta http-equiv=refresh>` page's source, likewise
    MERGED = "merged"


class UnchangedReason(StrEnum):
    """`reason` of an `unchanged` event (a re-crawl carried the page over)."""

    NOT_MODIFIED = "not_modified"  # HTTP 304
    SAME_CONTENT = "same_content"  # the body (or its normalized content) is the last one's


class RunStatus(StrEnum):
    """`status` of run.json and of the JOBDIR run marker."""

    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"


class Change(StrEnum):
    """`change` of a changes.jsonl line."""

    ADDED = "added"
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    REMOVED = "removed"


class Meta(StrEnum):
    """Keys docscrawl puts in `Request.meta` (one spelling for the spider, middlewares and
    scheduler)."""

    TRACK = "docscrawl_track"  # the page request's PageTrack
    STATE_CANONICAL = "docscrawl_state_canonical"  # known page: its canonical URL in state
    NOT_BEFORE = "docscrawl_not_before"  # time.time() before which the request waits
    SPARSE_IN_WORKER = "docscrawl_sparse_in_worker"  # the render check left to a worker
