"""The compiled build (`DOCSCRAWL_COMPILE=1`, docs/compiled.md): what setup.py builds when,
and a compiled build made here from this checkout passing the extraction and chunking
tests and crawling a site into what the interpreted crawl writes.

The build is real: setup.py through `pip wheel` with mypyc, gcc and the Python headers
(`make test` installs gcc and python3-dev), unpacked beside the interpreted checkout and
put first on `PYTHONPATH` (`PYTHONSAFEPATH`: not behind the working directory)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from docscrawl.demo.server import FixtureServer
from tests.conftest import ROOT, assert_log_invariants, crawl
from tests.support.crawlcompare import FILES, generated_site, records, stat

pytestmark = pytest.mark.e2e


def _setup_module() -> ModuleType:
    """The repository's setup.py, imported (its `setup()` runs only as a script)."""
    spec = importlib.util.spec_from_file_location("docscrawl_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


setup = _setup_module()


def test_a_build_is_pure_python_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(setup.COMPILE_ENV, raising=False)
    assert setup.compile_options() == {}
    monkeypatch.setenv(setup.COMPILE_ENV, "0")
    assert setup.compile_options() == {}


def test_an_unclear_compile_setting_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(setup.COMPILE_ENV, "yes")
    with pytest.raises(SystemExit, match="set it to 1"):
        setup.compile_options()


def test_an_editable_compiled_build_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(setup.COMPILE_ENV, "1")
    monkeypatch.setattr(sys, "argv", ["setup.py", "editable_wheel", "--dist-dir", "x"])
    with pytest.raises(SystemExit, match="not an editable one"):
        setup.compile_options()


def test_the_compiled_modules_are_the_extraction_and_the_chunker() -> None:
    sources = setup.compiled_sources()
    assert "docscrawl/extract/markdown.py" in sources
    assert "docscrawl/chunking/chunker.py" in sources
    assert "docscrawl/extract/template/table.py" in sources
    for interpreted in ("model.py", "main_content.py", "pipeline.py", "worker.py",
                        "__init__.py"):
        assert not any(s.endswith(f"/{interpreted}") for s in sources), interpreted
    assert all((ROOT / s).is_file() for s in sources)


def _toolchain_missing() -> str | None:
    """Why no C extension can be built here, or None."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler}): apt-get install gcc"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        return "no Python headers (Python.h): apt-get install python3-dev"
    return None


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout built with DOCSCRAWL_COMPILE=1 and unpacked: a directory to put
    first on PYTHONPATH. The build runs in this environment (mypy and setuptools come
    with the test extras), from a copy of the sources."""
    missing = _toolchain_missing()
    if missing:
        pytest.skip(missing)
    base = tmp_path_factory.mktemp("compiled")
    source = base / "src"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "docscrawl", source / "docscrawl",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(base / "wheel"), str(source)],
        capture_output=True, text=True, timeout=1800, cwd=base,
        env={**os.environ, setup.COMPILE_ENV: "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    (wheel,) = (base / "wheel").glob("docscrawl-*.whl")
    assert "-none-any" not in wheel.name  # a platform wheel: C extensions inside
    package = base / "package"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(package)
    return package


def compiled_env(package: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(package), "PYTHONSAFEPATH": "1"}


def test_the_compiled_build_passes_the_extraction_and_chunking_tests(compiled: Path) -> None:
    """The same tests, on the C extensions: mypyc also checks argument types at run time,
    so a value the annotations do not allow fails here, not in a user's crawl."""
    code = (
        "import sys, pytest\n"
        "status = pytest.main(['-q', '-n', '0', '--import-mode=append', "
        "'tests/extract', 'tests/chunking'])\n"
        "from docscrawl.extract import compiled, markdown\n"
        "print('compiled:', compiled(), markdown.__file__)\n"
        "sys.exit(int(status) or (0 if compiled() else 99))\n")
    env = {k: v for k, v in compiled_env(compiled).items()
           if not k.startswith("PYTEST_")}  # a session of its own, not this xdist worker's
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=1800, env=env)
    assert run.returncode == 0, run.stdout[-5000:] + run.stderr[-3000:]
    assert f"compiled: True {compiled}" in run.stdout
    assert " passed" in run.stdout and " failed" not in run.stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureServer]:
    """A generated 60-page docs site."""
    with generated_site(tmp_path_factory.mktemp("gensite")) as server:
        yield server


def test_a_compiled_crawl_writes_what_the_interpreted_one_writes(
    compiled: Path, site: FixtureServer, tmp_path: Path,
) -> None:
    interpreted = crawl(f"{site.url}/", tmp_path / "interpreted", "workers=1")
    native = crawl(f"{site.url}/", tmp_path / "compiled", "workers=1",
                   env=compiled_env(compiled))
    assert "'docscrawl/extract_compiled': 0" in interpreted.result.stderr
    assert "'docscrawl/extract_compiled': 1" in native.result.stderr
    assert stat(native, "pages_in_workers") > 0  # the worker process ran compiled too
    assert_log_invariants(native)
    for name in FILES:
        assert records(native, name) == records(interpreted, name), name
