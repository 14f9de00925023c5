"""The `docs` spider is glue that composes parts (issue 28 item 7): it inherits from
Scrapy's spider alone, and no class in `docscrawl/spiders/` reaches a private name
(`self._x`) that the class itself does not define: a part's collaborators are handed to
it and called through public methods, never through a mixin's shared `self`."""

from __future__ import annotations

import ast
from pathlib import Path

import scrapy

import docscrawl.spiders
from docscrawl.spiders.docs import DocsSpider

SPIDERS = Path(docscrawl.spiders.__file__).resolve().parent


def test_the_spider_inherits_from_scrapy_alone() -> None:
    assert DocsSpider.__bases__ == (scrapy.Spider,)


def _defined(cls: ast.ClassDef) -> set[str]:
    """Names a class defines: its methods and class attributes, and what it assigns to
    `self.<name>` anywhere in its body."""
    names: set[str] = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    for node in ast.walk(cls):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            for element in ast.walk(target):
                if (isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name)
                        and element.value.id == "self"):
                    names.add(element.attr)
    return names


def _foreign_private(path: Path) -> list[str]:
    found: list[str] = []
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for cls in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        defined = _defined(cls)
        for node in ast.walk(cls):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "self" and node.attr.startswith("_")
                    and not node.attr.startswith("__") and node.attr not in defined):
                found.append(f"{path.name}:{node.lineno} {cls.name} uses self.{node.attr}")
    return found


def test_no_spider_class_uses_a_private_name_it_does_not_define() -> None:
    found = [line for path in sorted(SPIDERS.glob("*.py")) for line in _foreign_private(path)]
    assert not found, "\n".join(found)
