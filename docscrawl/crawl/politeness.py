"""Fast on 127.0.0.1, polite elsewhere: AutoThrottle is switched on for remote sites.

`DOCSCRAWL_AUTOTHROTTLE` is `remote` (the default: on unless the site is a loopback host),
`on` or `off`. An explicit `-s AUTOTHROTTLE_ENABLED=...` on the command line wins.
"""

from __future__ import annotations

from ipaddress import ip_address
from typing import Any
from urllib.parse import urlsplit

from scrapy.settings import SETTINGS_PRIORITIES, Settings

AUTOTHROTTLE_MODES = ("remote", "on", "off")


def is_loopback_site(site: str) -> bool:
    """True for `localhost`, `*.localhost` and loopback addresses (127.0.0.0/8, ::1)."""
    host = (urlsplit(site).hostname or "").lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def autothrottle_wanted(mode: str, site: str) -> bool:
    """Whether AutoThrottle runs for `site` under `mode` (ValueError for an unknown mode)."""
    mode = (mode or "remote").strip().lower()
    if mode not in AUTOTHROTTLE_MODES:
        raise ValueError(f"DOCSCRAWL_AUTOTHROTTLE must be one of {'|'.join(AUTOTHROTTLE_MODES)},"
                         f" got {mode!r}")
    return mode == "on" or (mode == "remote" and not is_loopback_site(site))


def apply_politeness(settings: Settings, site: str) -> None:
    """Set AUTOTHROTTLE_ENABLED for this crawl, unless the command line already did."""
    if (settings.getpriority("AUTOTHROTTLE_ENABLED") or 0) >= SETTINGS_PRIORITIES["cmdline"]:
        return
    wanted = autothrottle_wanted(settings.get("DOCSCRAWL_AUTOTHROTTLE"), site)
    settings.set("AUTOTHROTTLE_ENABLED", wanted, priority="spider")


def politeness_summary(settings: Settings) -> dict[str, Any]:
    """What run.json reports about request pacing."""
    enabled = settings.getbool("AUTOTHROTTLE_ENABLED")
    return {
        "autothrottle": enabled,
        "autothrottle_target_concurrency": (
            settings.getfloat("AUTOTHROTTLE_TARGET_CONCURRENCY") if enabled else None),
        "concurrent_requests_per_domain": settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN"),
        "download_delay": settings.getfloat("DOWNLOAD_DELAY"),
    }
