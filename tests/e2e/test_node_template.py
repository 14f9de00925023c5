"""A template no known generator rule matches, learned from what the site repeats: Node.js
18's API docs (fixtures/sites/nodejs/: pages of Node's own generator, unchanged).

No element marks the content as main, so the main content falls back to `div#content`,
whose header holds one menu list (`#gtoc`) mixing what every page repeats with each page's
own table of contents picker. The crawl leaves that list out, warns once naming a `main`
selector, and a crawl with that selector gives the same Markdown.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from docscrawl.demo.server import StaticSite
from tests.conftest import SITES, crawl

API = "/docs/latest-v18.x/api/"
PAGES = ("index", "synopsis", "string_decoder", "embedding", "corepack", "documentation",
         "single-executable-applications", "punycode", "wasi")
CHROME = ("\u25ba\u25bc",  # the pickers' arrows: Table of contents, Index, Other versions
          "View as JSON", "Edit on GitHub", "Node.js v18.20.4", "Assertion testing")
WARNING = re.compile(r'template inside their main content .*"main": "([^"]+)"')


def test_the_menu_list_is_learned_and_a_main_selector_is_named(tmp_path: Path) -> None:
    with StaticSite(SITES / "nodejs") as server:
        allow = f"allow=^{re.escape(server.url + API)}(|({'|'.join(PAGES)})\\.html)$"
        learned = crawl(server.url + API, tmp_path / "learned", "render=never", allow)
        [selector] = WARNING.findall(learned.result.stderr)
        profile = tmp_path / "profile.json"
        profile.write_text(json.dumps({"selectors": {"main": selector}}), encoding="utf-8")
        given = crawl(server.url + API, tmp_path / "given", "render=never", allow,
                      f"config={profile}")
    assert len(learned.pages) == len(PAGES)
    by_url = {p["canonical_url"]: p for p in given.pages}
    for page in learned.pages:
        if page["canonical_url"].endswith(API):  # the index: no picker list, no own TOC
            continue
        markdown = page["markdown"]
        assert markdown.startswith("## "), (page["canonical_url"], markdown[:200])
        assert not [c for c in CHROME if c in markdown], page["canonical_url"]
        assert "template_in_main" in [w["code"] for w in page["warnings"]]
        assert by_url[page["canonical_url"]]["markdown"] == markdown, page["canonical_url"]
