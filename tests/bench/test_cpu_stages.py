"""The CPU tools of issue 26 item 7 work on real crawls and pages; figures are not judged.

`stages.py` must find every stage's entry point in a real profiled crawl (a stage that
moved to another module would silently read 0%), and `pool_probe.py` must run the work a
second core would take over through a real process pool.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCALE = ROOT / "benchmarks" / "scale"


@pytest.mark.e2e
def test_stages_of_a_profiled_crawl(tmp_path: Path) -> None:
    """`run.py --profile --cprofile`: a generated site, one crawl under cProfile, stages."""
    result = subprocess.run(
        [sys.executable, str(SCALE / "run.py"), "--profile", "--cprofile", "--n", "60",
         "--scratch", str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (tmp_path / "work" / "profile-60.prof").is_file()
    shares = {m["stage"]: float(m["share"]) for m in re.finditer(
        r"^\| (?P<stage>[^|]+?) \| (?P<share>[\d.]+)% \|$", result.stdout, re.M)}
    sys.path.insert(0, str(SCALE))
    import stages

    for stage in stages.STAGES:
        if stage != "render middleware check":  # the demo site has no page to render
            assert shares[stage] > 0, f"{stage}: entry point not found\n{result.stdout}"
    assert 99 <= sum(shares.values()) <= 101
    assert "by self time" in result.stdout


def test_nested_entry_points_of_a_stage_count_once(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The session's `finish` calls `CrawlEnd.finish`: both match "end of crawl", and the
    stage's time is the outer one's, not the sum (it once read 32.7% for about 15%)."""
    import cProfile
    import importlib.util

    crawl = tmp_path / "docscrawl" / "crawl"
    crawl.mkdir(parents=True)
    (crawl / "finish.py").write_text("def finish():\n    return sum(range(300_000))\n")
    (crawl / "session.py").write_text(
        "from end import finish as end_finish\n\ndef finish():\n    return end_finish()\n")
    modules = {}
    for name, path in (("end", crawl / "finish.py"), ("session", crawl / "session.py")):
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        modules[name] = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, modules[name])
        spec.loader.exec_module(modules[name])
    profile = cProfile.Profile()
    profile.runcall(modules["session"].finish)
    profile.dump_stats(tmp_path / "nested.prof")
    sys.path.insert(0, str(SCALE))
    import pstats

    import stages

    seconds, total = stages.stage_seconds(pstats.Stats(str(tmp_path / "nested.prof")))
    assert 0.5 * total < seconds["end of crawl"] <= total


def test_stages_names_a_missing_profile(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, str(SCALE / "stages.py"), str(tmp_path / "no")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == f"stages.py: no profile at {tmp_path / 'no'}"


def test_pool_probe_runs_pages_through_a_process_pool(tmp_path: Path) -> None:
    sys.path.insert(0, str(SCALE))
    import gensite

    gensite.generate(tmp_path / "site", 30, seed=5)
    result = subprocess.run(
        [sys.executable, str(SCALE / "pool_probe.py"), str(tmp_path / "site"),
         "--pages", "24", "--reps", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert out.startswith("24 pages")
    for stage in ("parse", "structure", "links", "extract", "pickle", "unpickle"):
        assert float(re.search(rf"^  {stage} +([\d.]+)$", out, re.M)[1]) >= 0
    assert float(re.search(r"^  result_kb +([\d.]+)$", out, re.M)[1]) > 1
    pool = re.search(r"^  pool +parent_ms ([\d.]+) +workers_ms ([\d.]+)", out, re.M)
    assert pool is not None and float(pool[2]) > 0  # the workers did the work
    assert re.search(r"^  inline +cpu_ms [\d.]+", out, re.M)
    assert re.search(r"^  threads +cpu_ms [\d.]+", out, re.M)


def test_path_probe_times_every_stage_with_its_digest(tmp_path: Path) -> None:
    """`path_probe.py` on real generator pages: every stage timed, the stages with an
    output print its digest, and two runs print the same digests (what compares two
    checkouts)."""
    site = tmp_path / "site"
    for source in sorted((ROOT / "fixtures" / "pages" / "generators").rglob("*.html"))[:14]:
        (site / source.parent.name).mkdir(parents=True, exist_ok=True)
        (site / source.parent.name / source.name).write_bytes(source.read_bytes())
    runs = [subprocess.run([sys.executable, str(SCALE / "path_probe.py"), str(site),
                            "--pages", "14", "--reps", "1"],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    for result in runs:
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    rows = [dict(re.findall(r"^  (\w+)\s+[\d.]+  ([0-9a-f]{12})$", r.stdout, re.M))
            for r in runs]
    assert set(rows[0]) == {"parse", "page_structure", "classify", "link_facts",
                            "extract_page", "records", "chunk_page", "json"}
    empty = "e3b0c44298fc"  # sha256 of nothing: a stage timed without a digest
    assert rows[0]["json"] != empty and rows[0]["link_facts"] != empty
    assert rows[0] == rows[1]


def test_structure_harnesses_compare_a_checkout_with_itself(tmp_path: Path) -> None:
    """`structure_ab.py` and `extract_cpu.py --stage structure` against this very
    checkout: every page's structure, discovery links and result the same."""
    sys.path.insert(0, str(SCALE))
    import gensite

    gensite.generate(tmp_path / "site", 12, seed=5)
    common = ["--generated", str(tmp_path / "site"), "--gen-pages", "12", "--per-site", "0"]
    ab = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "structure_ab.py"), str(ROOT), *common,
         "--reps", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert ab.returncode == 0, ab.stdout[-3000:] + ab.stderr[-3000:]
    assert ab.stdout.startswith("12 pages x 1 reps") and "identical results" in ab.stdout
    staged = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "extract_cpu.py"), "--stage", "structure",
         *common, "--passes", "2", "--code", str(ROOT)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert staged.returncode == 0, staged.stdout[-3000:] + staged.stderr[-3000:]
    assert "identical: 12 of 12 pages of 1 families" in staged.stdout
