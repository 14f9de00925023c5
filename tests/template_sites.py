"""Sites built from the hand-written template fixtures of fixtures/sites/template_chrome.

Each family's template (`sphinx_header.html`, `book_menubar.html`) holds the generator's
chrome around `{body}`; `pages.json` holds ten pages (slug, title, body). `build_site`
writes them as static files, linked in a ring by previous/next and a sidebar.
"""

from __future__ import annotations

import json
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent.parent / "fixtures" / "sites" / "template_chrome"
FAMILIES = ("sphinx_header", "book_menubar")
SITE_TITLES = {"sphinx_header": "Lockstep 2.1 Manual", "book_menubar": "The Lockstep Book"}


def site_pages(family: str) -> dict[str, str]:
    """file name -> HTML of every page of one family's site."""
    template = (TEMPLATES / f"{family}.html").read_text(encoding="utf-8")
    pages = json.loads((TEMPLATES / "pages.json").read_text(encoding="utf-8"))
    sidebar = "".join(f'<li><a href="{slug}.html">{title}</a></li>' for slug, title, _ in pages)
    out = {}
    for i, (slug, title, body) in enumerate(pages):
        prev_slug, prev_title, _ = pages[i - 1]
        next_slug, next_title, _ = pages[(i + 1) % len(pages)]
        out[f"{slug}.html"] = (
            template.replace("{title}", title).replace("{slug}", slug).replace("{body}", body)
            .replace("{prev}", prev_slug).replace("{prev_title}", prev_title)
            .replace("{next}", next_slug).replace("{next_title}", next_title)
            .replace("{sidebar}", sidebar)
        )
    return out


def build_site(family: str, directory: Path) -> Path:
    """Write one family's site into `directory`; returns it."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, html in site_pages(family).items():
        (directory / name).write_text(html, encoding="utf-8")
    return directory
