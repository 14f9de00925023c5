"""A page's facts cross the extraction pool's pipe pickled as their constructors'
arguments (`extract.model.pickled_by_fields`): the same values come back, and every
dataclass a worker answers with is pickled that way."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import asdict, dataclass, field
from typing import Any

import pytest

from docscrawl.extract.model import pickled_by_fields
from docscrawl.extract.worker import PageJob, Worker, WorkerSetup, page_facts
from tests.extract.test_worker import PAGES, SITE


def dataclass_types(value: Any, found: set[type]) -> set[type]:
    """The dataclass types in `value`, walked through containers and fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        found.add(type(value))
        for f in dataclasses.fields(value):
            dataclass_types(getattr(value, f.name), found)
    elif isinstance(value, dict):
        for item in value.values():
            dataclass_types(item, found)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            dataclass_types(item, found)
    return found


def test_every_pages_facts_come_back_the_same() -> None:
    worker = Worker(WorkerSetup(site_url=SITE, profile=None, template=None))
    types: set[type] = set()
    for url, text in PAGES:
        job = PageJob(url=url, text=text, base_url=url, body_bytes=len(text), extract=True)
        facts = page_facts(job, worker)
        back = pickle.loads(pickle.dumps(facts, protocol=pickle.DEFAULT_PROTOCOL))
        assert asdict(back) == asdict(facts), url  # type: ignore[call-overload]
        kinds = dataclass_types(facts, set())
        assert dataclass_types(back, set()) == kinds, url
        types |= kinds
        job_back = pickle.loads(pickle.dumps(job))
        assert job_back == job
    assert len(types) >= 10  # pages, links, blocks, headings, code, regions, versions...
    plain = {t.__name__ for t in types | {PageJob} if t.__reduce__ is object.__reduce__}
    assert not plain, f"pickled field by field in Python: {plain}"


def test_a_class_its_constructor_does_not_rebuild_is_refused() -> None:
    @dataclass
    class Derived:
        a: int
        b: int = field(init=False, default=0)

    @dataclass
    class Checked:
        a: int

        def __post_init__(self) -> None:
            self.a = abs(self.a)

    for cls in (Derived, Checked):
        with pytest.raises(TypeError, match="constructor"):
            pickled_by_fields(cls)


@pickled_by_fields
@dataclass(slots=True)
class One:
    items: list[str]


def test_a_one_field_class_and_shared_values_survive() -> None:
    shared = ["a", "b"]
    back = pickle.loads(pickle.dumps([One(shared), One(shared)]))
    assert back[0].items == ["a", "b"] and back[0].items is back[1].items
