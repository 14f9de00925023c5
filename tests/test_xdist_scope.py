"""`make test` runs on two xdist workers (tests/conftest.py): files that share a session
fixture's crawl must land on one worker, every other file is a unit of its own."""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

from tests.conftest import ROOT, SHARE_A_WORKER, slow_rank, xdist_scope


def test_files_that_share_a_crawl_are_one_unit() -> None:
    assert (xdist_scope("tests/e2e/test_faults.py::test_text_is_decoded_right")
            == xdist_scope("tests/e2e/test_track_spill.py::test_records_are_the_same_either_way")
            == "fault-site")


def test_other_files_are_units_of_their_own() -> None:
    assert xdist_scope("tests/test_ledger.py::test_x[a::b]") == "tests/test_ledger.py"
    assert xdist_scope("tests/e2e/test_faults.py") != xdist_scope("tests/e2e/test_resume.py")


def test_every_grouped_file_exists() -> None:
    """A renamed file would silently lose its group (and its crawl be made twice)."""
    assert [path for path in SHARE_A_WORKER if not (ROOT / path).is_file()] == []


def test_the_scheduler_hook_overrides_what_it_relies_on() -> None:
    """xdist's scope-based scheduler still splits scopes with `_split_scope`."""
    assert callable(getattr(LoadScopeScheduling, "_split_scope", None))


def test_files_that_crawl_are_handed_out_first() -> None:
    assert slow_rank("tests/e2e/test_faults.py::test_text_is_decoded_right") == 0
    assert slow_rank("tests/distributed/test_crawl_workers.py::test_x") == 0
    assert slow_rank("tests/extract/test_page.py::test_x") == 1
    assert slow_rank("tests/test_ledger.py::test_x") == 1
