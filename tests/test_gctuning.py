"""The crawl-time garbage-collector settings are applied at engine start and undone after."""

from __future__ import annotations

import gc

import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from docscrawl.extensions.gctuning import GcTuning


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
