"""The crawl-time garbage-collector settings are applied at engine start and undone after,
and an extraction worker applies the crawler's setting in its own process."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from docscrawl.extensions.gctuning import GcTuning, gen0_threshold


def test_engine_start_freezes_and_raises_the_threshold_then_stop_restores() -> None:
    before = gc.get_threshold()
    extension = GcTuning.from_crawler(get_crawler(settings_dict={
        "DOCSCRAWL_GC_GEN0_THRESHOLD": 12_345}))
    extension.engine_started()
    try:
        assert gc.get_threshold() == (12_345, before[1], before[2])
        assert gc.get_freeze_count() > 0
    finally:
        extension.engine_stopped()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_zero_switches_it_off() -> None:
    with pytest.raises(NotConfigured):
        GcTuning.from_crawler(get_crawler(settings_dict={"DOCSCRAWL_GC_GEN0_THRESHOLD": 0}))


# A worker's `serve` in a fresh interpreter: its setup, then the end of its jobs; what its
# collector was left with is printed.
_SERVE = """
import gc, socket, sys
from multiprocessing.connection import Connection
from docscrawl.crawl.pool import serve
from docscrawl.extract.worker import WorkerSetup
a, b = socket.socketpair()
parent, child = Connection(a.detach()), Connection(b.detach())
parent.send(WorkerSetup(site_url="http://d.example/", profile=None, template=None,
                        gc_gen0_threshold=int(sys.argv[1])))
parent.send(None)
serve(child)
print(gc.get_threshold()[0], gc.get_freeze_count() > 0)
"""


@pytest.mark.parametrize(("threshold", "printed"), [(12_345, "12345 True"), (0, "700 False")])
def test_an_extraction_worker_applies_the_crawlers_setting(threshold: int, printed: str) -> None:
    done = subprocess.run([sys.executable, "-c", _SERVE, str(threshold)], capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == printed


def test_the_pool_is_given_the_crawlers_setting() -> None:
    assert gen0_threshold(get_crawler().settings) == 50_000
    assert gen0_threshold(get_crawler(settings_dict={
        "DOCSCRAWL_GC_GEN0_THRESHOLD": -5}).settings) == 0
