"""Page tracks <-> queued tasks: what a worker needs to fetch a page another worker claimed.

The queue is shared with whoever can write to Redis, so a task is read as untrusted input:
`track_from_task` accepts only what `task_from_track` writes (the fields, their types, sane
sizes) and raises `BadTask` for anything else; the worker drops such a task unfetched.
Whether a well-formed task may be fetched is the crawl's admission policy
(`docscrawl.distributed.taskcheck`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from docscrawl.discovery.urls import is_crawlable_url

if TYPE_CHECKING:
    from docscrawl.discovery.pagetrack import DiscoveryRecord, PageTrack

MAX_URL_CHARS = 65_536  # one URL field (the crawl's own limit is URLLENGTH_LIMIT)
MAX_ENTRIES = 1_000  # entries of one list field (discovery, observed, redirect_chain)
MAX_TEXT_CHARS = 256  # a discovery reason, a sitemap lastmod
MAX_DEPTH = 1_000_000


class BadTask(ValueError):
    """A queued payload that is not a task: `problem` says why (it never quotes the payload);
    `url` is its URL when it names a usable one (its skip can then be logged)."""

    def __init__(self, problem: str, url: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.url = url


class Task(TypedDict):
    """A queued task as `task_from_track` writes it (`FIELDS` checks one read back)."""

    url: str
    key: str
    depth: int
    discovery: list[DiscoveryRecord]
    lastmod: str | None
    redirect_chain: list[str]
    fetched_url: str | None
    observed: list[str]


def task_from_track(track: PageTrack) -> Task:
    """The task that lets any worker fetch a claimed page (redirect data included)."""
    return {
        "url": track.url,
        "key": track.key,
        "depth": track.depth,
        "discovery": track.discovery_records(),
        "lastmod": track.sitemap_lastmod,
        "redirect_chain": list(track.redirect_chain),
        "fetched_url": track.fetched_url,
        "observed": list(track.observed),
    }


def track_from_task(task: Mapping[str, Any]) -> PageTrack:
    """Rebuild, in the worker that took it, the track of a task made by `task_from_track`.
    Raises `BadTask` for any other payload."""
    from docscrawl.discovery.pagetrack import PageTrack, discovery_entries

    problem = task_problem(task)
    if problem is not None:
        url = task.get("url")
        raise BadTask(problem, url if _is_url(url) else None)
    track = PageTrack(url=task["url"], key=task.get("key") or task["url"],
                      depth=int(task.get("depth") or 0),
                      discovery=discovery_entries(task.get("discovery") or ()),
                      sitemap_lastmod=task.get("lastmod"),
                      redirect_chain=list(task.get("redirect_chain") or ()),
                      fetched_url=task.get("fetched_url"))
    for url in task.get("observed") or (task["url"],):
        track.observe(url)
    return track


def task_problem(task: Any) -> str | None:
    """Why `task` is not a task `task_from_track` could have written, or None."""
    if not isinstance(task, dict):
        return "not a JSON object"
    if "unreadable" in task:  # set by docscrawl.distributed.streams for a payload it cannot read
        return str(task["unreadable"])
    for field, (valid, expected) in FIELDS.items():
        if field in task and not valid(task[field]):
            return f"'{field}' is not {expected}"
    if "url" not in task:
        return "no 'url'"
    return None


def _is_url(value: Any) -> bool:
    """An http(s) URL of sane size: what a worker may request (scope aside)."""
    return (isinstance(value, str) and 0 < len(value) <= MAX_URL_CHARS
            and is_crawlable_url(value))


def _is_text(value: Any, limit: int = MAX_URL_CHARS) -> bool:
    return isinstance(value, str) and 0 < len(value) <= limit


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


def _list_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: (isinstance(value, list) and len(value) <= MAX_ENTRIES
                          and all(check(item) for item in value))


def _is_discovery(value: Any) -> bool:
    return (isinstance(value, dict) and set(value) <= {"reason", "from"}
            and _optional(lambda r: _is_text(r, MAX_TEXT_CHARS))(value.get("reason"))
            and _optional(_is_text)(value.get("from")))


def _is_depth(value: Any) -> bool:
    return type(value) is int and 0 <= value <= MAX_DEPTH


# field -> (check, what it must be): the fields `task_from_track` writes. Other fields are
# ignored (tools may add their own); these must hold what a worker would write.
FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "url": (_is_url, f"an http(s) URL of at most {MAX_URL_CHARS} characters"),
    "key": (_optional(_is_url), f"an http(s) URL of at most {MAX_URL_CHARS} characters"),
    "depth": (_optional(_is_depth), f"a whole number from 0 to {MAX_DEPTH}"),
    "discovery": (_optional(_list_of(_is_discovery)),
                  f"a list of at most {MAX_ENTRIES} {{reason, from}} records"),
    "lastmod": (_optional(lambda v: _is_text(v, MAX_TEXT_CHARS)),
                f"a string of at most {MAX_TEXT_CHARS} characters"),
    "redirect_chain": (_optional(_list_of(_is_text)), f"a list of at most {MAX_ENTRIES} URLs"),
    "fetched_url": (_optional(_is_text), "a URL"),
    "observed": (_optional(_list_of(_is_text)), f"a list of at most {MAX_ENTRIES} URLs"),
}
