"""The crawl's words are spelled once, in `docscrawl.vocab`: a crawl-log call or a
`reason=` that writes a bare string fails here, naming the line."""

from __future__ import annotations

import ast
import re

from docscrawl.vocab import (
    DuplicateReason,
    Event,
    FailReason,
    SkipReason,
    UnchangedReason,
)
from tests.conftest import CONTRACT_CHECK, ROOT

PACKAGE = ROOT / "docscrawl"


def bare_names(source: str) -> list[tuple[int, str]]:
    """(line, string) of every crawl-log event passed to `.record(url, EVENT, ...)` and
    every `reason=` / `event=` keyword given as a string literal (also in a conditional)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        values = []
        if name == "record" and len(node.args) >= 2:
            values.append(node.args[1])
        for keyword in node.keywords:
            if keyword.arg in ("reason", "event"):
                value = keyword.value
                values += [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
        found += [(value.lineno, value.value) for value in values
                  if isinstance(value, ast.Constant) and isinstance(value.value, str)]
    return found


def test_no_log_call_writes_a_bare_name() -> None:
    bare = [f"{path.relative_to(ROOT)}:{line}: {text!r}"
            for path in sorted(PACKAGE.rglob("*.py")) if path.name != "vocab.py"
            for line, text in bare_names(path.read_text(encoding="utf-8"))]
    assert bare == [], "spell these with docscrawl.vocab:\n" + "\n".join(bare)


def test_the_scan_sees_a_bare_name() -> None:
    source = ('log.record(url, "skipped", reason="robots")\n'
              'log.record(url, Event.FAILED, reason=FailReason.DNS)\n'
              'x.update(event="duplicate", reason="a" if ok else R.B)\n')
    assert bare_names(source) == [(1, "skipped"), (1, "robots"), (3, "duplicate"), (3, "a")]


def test_skip_reasons_are_the_contracts_closed_list() -> None:
    """A skip reason outside the contract's list makes contract_check fail on the output:
    every other way to end a URL without a page is a `failed` reason."""
    text = CONTRACT_CHECK.read_text(encoding="utf-8") if CONTRACT_CHECK.exists() else ""
    listed = re.search(r"SKIP_REASONS = \{([^}]*)\}", text)
    if listed is None:
        assert set(SkipReason) >= {"robots", "out_of_scope", "trap"}
        return
    assert set(SkipReason) == set(re.findall(r'"([a-z_0-9]+)"', listed.group(1)))


def test_each_reason_has_one_kind() -> None:
    kinds = [set(SkipReason), set(FailReason), set(DuplicateReason)]
    for i, one in enumerate(kinds):
        for other in kinds[i + 1:]:
            assert not one & other, one & other
    assert set(UnchangedReason) == {"not_modified", "same_content"}
    assert "failed" in set(Event)
