"""A worker process imports the crawler's own docscrawl (`crawl.pool.boot_code`): from the
folder or egg the crawler's came from, whatever the interpreter would find first, and never
from the working directory."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from docscrawl.crawl.pool import CODE_ROOT, boot_code

PATH = "print(repr(sys.path))"
REPORT = boot_code(f"import docscrawl\nprint(docscrawl.__file__)\n{PATH}")


def _run(code: str, root: str, cwd: Path, env: dict[str, str] | None) -> list[str]:
    done = subprocess.run([sys.executable, "-P", "-c", code, root], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True, timeout=120)
    return done.stdout.splitlines()


def _boot(root: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[str, str, str]:
    """(the `docscrawl.__file__` a worker booted with `root` imports, its `sys.path`, and
    the `sys.path` of the same interpreter without the boot code)."""
    imported, path = _run(REPORT, root, cwd, env)
    return imported, path, _run(f"import sys\n{PATH}", root, cwd, env)[0]


def _shadow(tmp_path: Path) -> Path:
    """A working directory holding another `docscrawl` package (a checkout of other code)."""
    cwd = tmp_path / "elsewhere"
    (cwd / "docscrawl").mkdir(parents=True)
    (cwd / "docscrawl" / "__init__.py").write_text("", encoding="utf-8")
    return cwd


def test_a_worker_imports_the_deployed_egg_not_the_installed_package(tmp_path: Path) -> None:
    """Scrapyd's case: the crawler runs the deployed egg; the virtualenv also has docscrawl."""
    egg = tmp_path / "docscrawl-1.egg"
    package = Path(CODE_ROOT) / "docscrawl"
    with zipfile.ZipFile(egg, "w") as archive:
        for source in package.rglob("*.py"):
            archive.write(source, source.relative_to(CODE_ROOT).as_posix())
    imported, path, plain = _boot(str(egg), _shadow(tmp_path))
    assert imported == str(egg / "docscrawl" / "__init__.py")
    assert path == repr([str(egg), *ast.literal_eval(plain)])


def test_a_worker_of_the_found_package_leaves_the_path_as_it_is(tmp_path: Path) -> None:
    """The usual case: the interpreter finds the crawler's docscrawl itself; nothing goes
    ahead of the standard library, and the working directory's package is not read."""
    cwd = _shadow(tmp_path)
    found_first = {**os.environ, "PYTHONPATH": CODE_ROOT}
    imported, path, plain = _boot(CODE_ROOT, cwd, found_first)
    assert imported == str(Path(CODE_ROOT) / "docscrawl" / "__init__.py")
    assert path == plain and str(cwd) not in path
