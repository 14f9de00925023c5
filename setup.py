"""Egg build for `scrapyd-deploy` (it runs `python setup.py bdist_egg` here).

All metadata comes from pyproject.toml. Scrapyd finds a project's settings module through
the egg's `scrapy` entry point (`settings = docscrawl.settings`); pyproject.toml does not
declare it, so it is added here when the egg's metadata is written. Without this file
scrapyd-deploy would write its own setup.py, whose entry point setuptools ignores when
pyproject.toml has a [project] table.
"""

from setuptools import setup
from setuptools.command.egg_info import egg_info

SCRAPY_ENTRY_POINT = "settings = docscrawl.settings"


class EggInfoWithScrapySettings(egg_info):
    """egg_info that also writes the `scrapy` entry point Scrapyd reads."""

    def run(self) -> None:
        entry_points = dict(self.distribution.entry_points or {})
        entry_points["scrapy"] = [SCRAPY_ENTRY_POINT]
        self.distribution.entry_points = entry_points
        super().run()


setup(cmdclass={"egg_info": EggInfoWithScrapySettings})
