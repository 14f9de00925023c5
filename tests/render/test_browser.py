"""Which Chromium docscrawl launches, and the one-line error when there is none."""

from __future__ import annotations

import os

import pytest

from docscrawl.render.browser import (
    DEBIAN_CHROMIUM,
    BrowserUnavailable,
    check_chromium,
    configured_path,
    launch_options,
    locate_chromium,
)


def test_an_explicit_path_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCSCRAWL_CHROMIUM_PATH", "/opt/chrome/chrome")
    assert configured_path({}) == "/opt/chrome/chrome"
    assert configured_path({"DOCSCRAWL_CHROMIUM_PATH": "/x/chromium"}) == "/x/chromium"
    assert locate_chromium("/x/chromium") == "/x/chromium"


def test_a_missing_browser_says_how_to_install_one() -> None:
    with pytest.raises(BrowserUnavailable) as error:
        check_chromium("/nonexistent/chromium")
    message = str(error.value)
    assert "\n" not in message
    assert "apt-get install chromium" in message and "render=never" in message


def test_a_broken_browser_is_refused() -> None:
    with pytest.raises(BrowserUnavailable, match="does not start"):
        check_chromium("/bin/false")


@pytest.mark.skipif(not os.access(DEBIAN_CHROMIUM, os.X_OK), reason="Debian chromium missing")
def test_debian_chromium_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DOCSCRAWL_CHROMIUM_PATH", raising=False)
    assert locate_chromium(configured_path({})) == DEBIAN_CHROMIUM
    assert check_chromium(DEBIAN_CHROMIUM).startswith("Chromium")
    assert launch_options(DEBIAN_CHROMIUM)["executable_path"] == DEBIAN_CHROMIUM
    assert "executable_path" not in launch_options(None)  # Playwright's own browser
