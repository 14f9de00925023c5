"""The browser for rendering: which Chromium, how it is launched, how a page is awaited.

Which Chromium (`locate_chromium`), first match wins:

1. the `DOCSCRAWL_CHROMIUM_PATH` setting, else the environment variable of that name;
2. `chromium` (or `chromium-browser`) on `PATH`: Debian's package installs
   `/usr/bin/chromium`;
3. Playwright's own Chromium when `playwright install chromium` put one in
   `$PLAYWRIGHT_BROWSERS_PATH` or `~/.cache/ms-playwright` (Playwright then picks it).

`check_chromium` runs `<path> --version` once (about 0.2 s) so that a missing or broken
browser stops the crawl at start with one line saying how to install one.

Nothing here imports Playwright: `docscrawl.render.playwright_handler` uses these, and
`docscrawl.render.download` imports it only when a page is rendered.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

__all__ = [
    "CONTEXT_KWARGS",
    "DEBIAN_CHROMIUM",
    "INSTALL_HINT",
    "BrowserUnavailable",
    "check_chromium",
    "configured_path",
    "is_launch_failure",
    "launch_options",
    "locate_chromium",
    "playwright_installed",
]

DEBIAN_CHROMIUM = "/usr/bin/chromium"
PATH_SETTING = "DOCSCRAWL_CHROMIUM_PATH"
INSTALL_HINT = ("install Debian's Chromium (apt-get install chromium), set "
                "DOCSCRAWL_CHROMIUM_PATH to a Chromium binary, or crawl with -a render=never")
# No background traffic of Chromium's own (updates, sync, field trials): the crawl's
# browser talks to the site and nothing else.
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-extensions",
               "--mute-audio", "--blink-settings=imagesEnabled=false",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run", "--disable-quic"]
# The one browser context of a crawl: no downloads, no service workers.
CONTEXT_KWARGS: dict[str, Any] = {"accept_downloads": False, "service_workers": "block",
                                  "java_script_enabled": True}


class BrowserUnavailable(RuntimeError):
    """No usable Chromium; the message is one line that says how to get one."""


def configured_path(settings: Any = None) -> str | None:
    """The explicit Chromium path: the setting, else the environment variable."""
    value = settings.get(PATH_SETTING) if settings is not None else None
    return (value or os.environ.get(PATH_SETTING) or "").strip() or None


def playwright_chromium_installed() -> bool:
    """True when Playwright's own Chromium build was installed (`playwright install`)."""
    root = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or str(
        Path.home() / ".cache" / "ms-playwright")
    return bool(glob.glob(os.path.join(root, "chromium*-*")))


def locate_chromium(configured: str | None) -> str | None:
    """Path of the Chromium to launch; None means Playwright's own browser.

    Raises BrowserUnavailable when nothing is found (see the module doc for the order).
    """
    if configured:
        return configured
    for name in ("chromium", "chromium-browser"):
        candidate = shutil.which(name)
        if candidate:
            return candidate
    if playwright_chromium_installed():
        return None
    raise BrowserUnavailable(f"no Chromium found for rendering; {INSTALL_HINT}")


def playwright_installed() -> bool:
    """True when the `playwright` and `scrapy_playwright` packages can be imported (checked
    without importing them)."""
    return all(importlib.util.find_spec(name) is not None
               for name in ("playwright", "scrapy_playwright"))


def check_chromium(path: str | None, *, timeout: float = 30) -> str:
    """Run `<path> --version`; return the version line or raise BrowserUnavailable."""
    if not playwright_installed():
        raise BrowserUnavailable("Playwright is not installed (pip install playwright "
                                 f"scrapy-playwright); {INSTALL_HINT}")
    if path is None:
        return "Playwright's Chromium"
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise BrowserUnavailable(f"Chromium not found at {path}; {INSTALL_HINT}")
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True,
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BrowserUnavailable(f"Chromium at {path} does not start ({exc}); "
                                 f"{INSTALL_HINT}") from None
    version = done.stdout.strip().splitlines()[:1]
    if done.returncode != 0 or not version:
        raise BrowserUnavailable(f"Chromium at {path} does not start (exit status "
                                 f"{done.returncode}); {INSTALL_HINT}")
    return version[0]


def launch_options(path: str | None) -> dict[str, Any]:
    """Playwright launch options: headless, no sandbox flag needed as root, no GPU."""
    options: dict[str, Any] = {"headless": True, "args": list(LAUNCH_ARGS)}
    if path is not None:
        options["executable_path"] = path
    return options


def is_launch_failure(exc: BaseException) -> bool:
    """True when an exception says the browser (or Playwright's driver) did not start."""
    text = str(exc)
    return any(needle in text for needle in (
        "BrowserType.launch", "Executable doesn't exist", "Failed to launch",
        "Browser closed.\n==================== Browser output:",
    ))
