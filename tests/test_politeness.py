"""AutoThrottle on for remote sites, off for loopback ones; the command line wins."""

from __future__ import annotations

import pytest
from scrapy.settings import Settings

from docscrawl.crawl.politeness import apply_politeness, autothrottle_wanted, is_loopback_site


@pytest.mark.parametrize(("site", "loopback"), [
    ("http://127.0.0.1:8000/docs/", True), ("http://127.8.9.1/", True),
    ("http://[::1]:9/", True), ("http://localhost/", True), ("http://docs.localhost/", True),
    ("https://docs.python.org/3/", False), ("http://10.0.0.5/docs/", False),
    ("http://192.168.1.2/", False), ("http://localhost.example.com/", False),
])
def test_loopback_sites(site: str, loopback: bool) -> None:
    assert is_loopback_site(site) is loopback


def test_modes() -> None:
    assert autothrottle_wanted("remote", "https://docs.example.com/") is True
    assert autothrottle_wanted("remote", "http://127.0.0.1:1/") is False
    assert autothrottle_wanted("ON", "http://127.0.0.1:1/") is True
    assert autothrottle_wanted("off", "https://docs.example.com/") is False
    with pytest.raises(ValueError, match="DOCSCRAWL_AUTOTHROTTLE"):
        autothrottle_wanted("sometimes", "https://docs.example.com/")


def test_apply_keeps_a_command_line_choice() -> None:
    settings = Settings({"DOCSCRAWL_AUTOTHROTTLE": "remote", "AUTOTHROTTLE_ENABLED": False})
    apply_politeness(settings, "https://docs.example.com/")
    assert settings.getbool("AUTOTHROTTLE_ENABLED") is True
    settings.set("AUTOTHROTTLE_ENABLED", False, priority="cmdline")
    apply_politeness(settings, "https://docs.example.com/")
    assert settings.getbool("AUTOTHROTTLE_ENABLED") is False
