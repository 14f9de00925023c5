"""Page tracks <-> queued tasks: what a worker needs to fetch a page another worker claimed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docscrawl.discovery.pagetrack import PageTrack


def task_from_track(track: PageTrack) -> dict[str, Any]:
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


def track_from_task(task: dict[str, Any]) -> PageTrack:
    """Rebuild, in the worker that took it, the track of a task made by `task_from_track`."""
    from docscrawl.discovery.pagetrack import PageTrack, discovery_entries

    track = PageTrack(url=task["url"], key=task.get("key") or task["url"],
                      depth=int(task.get("depth") or 0),
                      discovery=discovery_entries(task.get("discovery") or ()),
                      sitemap_lastmod=task.get("lastmod"),
                      redirect_chain=list(task.get("redirect_chain") or ()),
                      fetched_url=task.get("fetched_url"))
    for url in task.get("observed") or (task["url"],):
        track.observe(url)
    return track
