"""One home for each local/distributed pair (issue 28 item 3): the admission and the
redirect waits are each a protocol with a local and a Redis implementation side by side
in one package, and both implementations answer every method of the protocol with the
same parameters (the spider never asks which one it has)."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from docscrawl.admission.base import Admission
from docscrawl.admission.local import LocalAdmission
from docscrawl.admission.redis import RedisAdmission
from docscrawl.redirects.base import Redirects
from docscrawl.redirects.local import LocalRedirects
from docscrawl.redirects.redis import SharedRedirects


def _methods(protocol: type) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(member) for name, member in vars(protocol).items()
            if inspect.isfunction(member) and not name.startswith("_")}


def _parameters(signature: inspect.Signature) -> list[tuple[str, Any]]:
    return [(p.name, p.kind) for p in signature.parameters.values()]


@pytest.mark.parametrize(("protocol", "implementations"), [
    (Admission, (LocalAdmission, RedisAdmission)),
    (Redirects, (LocalRedirects, SharedRedirects)),
])
def test_both_homes_answer_the_protocol(protocol: type, implementations: tuple[type, ...]
                                        ) -> None:
    methods = _methods(protocol)
    assert methods
    for cls in implementations:
        assert cls.__module__.rsplit(".", 1)[0] == protocol.__module__.rsplit(".", 1)[0]
        for name, signature in methods.items():
            assert _parameters(inspect.signature(getattr(cls, name))) == \
                _parameters(signature), f"{cls.__name__}.{name}"


def test_each_admission_says_what_applies_to_it() -> None:
    for cls in (LocalAdmission, RedisAdmission):
        for name in ("resumable", "budget_here"):
            assert isinstance(getattr(cls, name), bool), f"{cls.__name__}.{name}"
    assert isinstance(inspect.getattr_static(RedisAdmission, "redirects"), property)
