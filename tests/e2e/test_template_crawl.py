"""A crawl learns the site's template: real HTTP server, real `scrapy crawl`, real state.

The site is built from the hand-written Sphinx-header fixture (tests/template_sites.py):
every page's main element holds the site header, previous/next links and a footer.
"""

from __future__ import annotations

import json
from pathlib import Path

from docscrawl.demo.server import StaticSite
from docscrawl.extract.template.warmup import SAMPLE_PAGES
from docscrawl.inspect.check import run_checks
from docscrawl.inspect.output import OutputDir
from tests.conftest import crawl, read_jsonl
from tests.template_sites import SITE_TITLES, build_site


def test_crawl_leaves_the_template_out_of_every_page(tmp_path: Path) -> None:
    site = build_site("sphinx_header", tmp_path / "site")
    out = tmp_path / "out"
    with StaticSite(site) as server:
        first = crawl(server.url + "/index.html", out, settings={"CONCURRENT_REQUESTS": "2"})
        assert len(first.pages) == 10
        for page in first.pages:  # the first pages too: held until the model was warm
            assert SITE_TITLES["sphinx_header"] not in page["markdown"], page["canonical_url"]
            assert "Previous:" not in page["markdown"]
            assert page["headings"][0]["path"] == [page["main_heading"]]
            assert "template_in_main" in [w["code"] for w in page["warnings"]]
        structure = read_jsonl(out / "structure.jsonl")
        assert all(any(r.get("template") for r in s["regions"]) for s in structure)
        saved = json.loads((out / "site_model.json").read_text(encoding="utf-8"))
        assert saved["template"]["frozen"]  # learned from the warm-up sample, then fixed
        assert 6 <= saved["template"]["pages"] <= SAMPLE_PAGES
        assert {"versions", "fragment_params"} <= set(saved)  # one state file
        report = run_checks(OutputDir(out))
        by_name = {c["name"]: c for c in report["checks"]}
        assert by_name["heading_roots"]["value"] is None  # fewer than 20 pages: not judged
        # An incremental re-crawl starts from the saved model: warm from its first page.
        crawl(server.url + "/index.html", out, settings={"CONCURRENT_REQUESTS": "2"})
        again = json.loads((out / "site_model.json").read_text(encoding="utf-8"))
        assert again["template"] == saved["template"]  # judged by the same table
        assert not (out / "site_template.json").exists()
