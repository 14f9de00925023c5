"""Each stage's Scrapy glue sits beside its logic and takes the crawl's parts it needs:
read from the source (ast) of the item pipelines `settings.ITEM_PIPELINES` names."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import docscrawl
from docscrawl import settings

ROOT = Path(docscrawl.__file__).resolve().parent


def pipeline_modules() -> dict[str, ast.Module]:
    """The module of every item pipeline the crawl runs, parsed."""
    modules = {}
    for path in settings.ITEM_PIPELINES:
        name = path.rsplit(".", 1)[0]
        source = Path(importlib.import_module(name).__file__ or "").read_text(encoding="utf-8")
        modules[name] = ast.parse(source)
    return modules


def test_each_stage_glue_is_a_pipeline_module_in_its_stage_folder() -> None:
    assert not (ROOT / "pipelines").exists()
    for name in pipeline_modules():
        assert name.endswith(".pipeline"), name
        assert name.split(".")[1] in {"extract", "dedup", "export"}, name


def test_pipelines_never_reach_the_spider_or_its_session() -> None:
    """They take `CrawlParts.of(crawler)` in from_crawler, not `crawler.spider.session`."""
    for name, tree in pipeline_modules().items():
        reached = {node.attr for node in ast.walk(tree)
                   if isinstance(node, ast.Attribute) and node.attr in ("session", "spider")}
        assert not reached, f"{name} reaches {sorted(reached)}"


def test_one_stage_writes_a_page_s_terminal_event() -> None:
    """The stages raise PageEnded; only the export stage writes crawl-log events."""
    writers = {name for name, tree in pipeline_modules().items()
               for node in ast.walk(tree)
               if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr == "record"
               and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "log"}
    assert writers == {"docscrawl.export.pipeline"}
