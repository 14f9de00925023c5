"""Build hooks pyproject.toml cannot declare: the Scrapyd egg's entry point, and the
compiled build of the extraction (`DOCSCRAWL_COMPILE=1`, docs/compiled.md).

All metadata comes from pyproject.toml. Scrapyd finds a project's settings module through
the egg's `scrapy` entry point (`settings = docscrawl.settings`); pyproject.toml does not
declare it, so it is added here when the egg's metadata is written (`scrapyd-deploy` runs
`python setup.py bdist_egg` here; without this file it would write its own setup.py, whose
entry point setuptools ignores when pyproject.toml has a [project] table).

With `DOCSCRAWL_COMPILE=1` in the environment, `pip install .` compiles the modules
`compiled_sources` names with mypyc into C extensions beside their sources; without it the
build is pure Python, as before. The compiled build needs mypy (pip installs it into the
isolated build environment, named by `setup_requires`), a C compiler and the Python
headers.
"""

import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.egg_info import egg_info

SCRAPY_ENTRY_POINT = "settings = docscrawl.settings"
COMPILE_ENV = "DOCSCRAWL_COMPILE"
MYPY = "mypy>=2.4,<2.5"  # the minor release the sources are typed and checked against

# What mypyc compiles: the extraction a worker runs on every page, and the chunker the
# crawler runs on every page. Left interpreted: package markers, Scrapy glue (the
# pipelines) and the worker's entry, `model` (its dataclasses are given methods after they
# are created, which a native class refuses) and `main_content` (mypyc 2.4 stops on it
# with an internal error).
COMPILED_PACKAGES = ("docscrawl/extract", "docscrawl/extract/template", "docscrawl/chunking")
INTERPRETED = frozenset({"pipeline.py", "worker.py", "model.py", "main_content.py"})


class EggInfoWithScrapySettings(egg_info):
    """egg_info that also writes the `scrapy` entry point Scrapyd reads."""

    def run(self) -> None:
        entry_points = dict(self.distribution.entry_points or {})
        entry_points["scrapy"] = [SCRAPY_ENTRY_POINT]
        self.distribution.entry_points = entry_points
        super().run()


def compiled_sources() -> list[str]:
    """The module files mypyc compiles, relative to this directory, sorted."""
    here = Path(__file__).parent
    return sorted(str(path.relative_to(here))
                  for package in COMPILED_PACKAGES for path in (here / package).glob("*.py")
                  if path.name != "__init__.py" and path.name not in INTERPRETED)


def compile_options() -> dict:
    """setup() arguments for the compiled build, or none for the pure one."""
    value = os.environ.get(COMPILE_ENV, "")
    if value in ("", "0"):
        return {}
    if value != "1":
        sys.exit(f"docscrawl: {COMPILE_ENV}={value!r}: set it to 1 (compile) or 0 (do not)")
    if "editable_wheel" in sys.argv:
        sys.exit(f"docscrawl: {COMPILE_ENV}=1 builds a regular install, not an editable one "
                 "(a compiled module would hide every later edit of its .py); drop -e")
    try:
        from mypyc.build import mypycify
    except ImportError:
        if "bdist_wheel" in sys.argv or "build_ext" in sys.argv:
            sys.exit(f"docscrawl: {COMPILE_ENV}=1 needs mypy ({MYPY}) where the build runs: "
                     "let pip build in isolation, or install it first")
        return {"setup_requires": [MYPY]}  # pip's first pass asks what the build requires
    return {"setup_requires": [MYPY],
            "ext_modules": mypycify(compiled_sources(), opt_level="3", debug_level="1")}


if __name__ == "__main__":
    setup(cmdclass={"egg_info": EggInfoWithScrapySettings}, **compile_options())
