"""`jsonenc.dumps_value` writes the same text with or without the `_json` accelerator (a
Python without it has no `json.encoder.c_make_encoder`: the pure encoder is used), and with
or without orjson (the `fast` extra): byte for byte, floats and refusals included."""

from __future__ import annotations

import dataclasses
import json
import math
import sys

import pytest

from docscrawl import jsonenc, jsonl

VALUES = [
    {"id": "sha256:ab", "n": 3, "ratio": 0.1, "big": 10**20, "none": None, "yes": True},
    {"text": "naïve – “quoted” \\ \"esc\" \n\t\u2028 😀", "nested": [{"a": []}, {}, [1.5e-7]]},
    ["x", 1, -2.25, False, {"k": {"deep": ["é"]}}],
    "a plain string: ü",
    17,
    [],
    {"links": [{"url": "https://e.org/a?b=1#c", "position": 0, "rel": []}], "n": -(2**63)},
    {"tuple": ("a", 1, None), 1: "int key", "max": 2**64 - 1, "over": [2**64]},
    {"floats": [1e-05, 1e16, 123.0, 0.0001, -0.0, 9.265066237858661e-05]},
    ["lone \ud800 surrogate"],
]


def test_the_pure_encoder_writes_what_the_c_one_writes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonenc, "_FAST", None)
    with_c = [jsonl.dumps_value(value) for value in VALUES]
    assert jsonenc._C_ENCODE is not None  # this Python has the accelerator
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    assert jsonenc._c_encoder() is None
    monkeypatch.setattr(jsonenc, "_C_ENCODE", jsonenc._c_encoder())
    assert [jsonl.dumps_value(value) for value in VALUES] == with_c
    assert jsonl.dumps_line(VALUES[0]) == with_c[0] + "\n"
    assert with_c[0] == json.dumps(VALUES[0], ensure_ascii=False, separators=(",", ":"))
    with pytest.raises(ValueError):
        jsonl.dumps_value({"x": math.nan})


def _stdlib(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def test_orjson_writes_what_the_stdlib_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("orjson")
    assert jsonenc._FAST is not None
    every_char = "".join(chr(c) for c in range(sys.maxunicode + 1)
                         if not 0xD800 <= c <= 0xDFFF)
    values = [*VALUES, [every_char], {every_char[:2000]: [every_char[-500:]]}]
    assert [jsonl.dumps_value(value) for value in values] == [_stdlib(v) for v in values]
    assert jsonenc._plain(VALUES[6]) and not jsonenc._plain(VALUES[8])
    assert jsonl.dumps_value(VALUES[8]) == (
        '{"floats":[1e-05,1e+16,123.0,0.0001,-0.0,9.265066237858661e-05]}')
    for refused in ({"x": math.nan}, [math.inf]):
        with pytest.raises(ValueError):
            jsonl.dumps_value(refused)

    @dataclasses.dataclass
    class Point:
        x: int

    for unknown in ([Point(1)], {"when": {1, 2}}):  # the stdlib refuses them: so do we
        with pytest.raises(TypeError):
            jsonl.dumps_value(unknown)


def test_lines_with_values_encoded_apart_are_the_stdlib_lines(
        monkeypatch: pytest.MonkeyPatch) -> None:
    record = {"id": "x", "links": [{"url": "é", "position": 3}], "score": 0.5, "t": None}
    shared = {"links": jsonl.dumps_value(record["links"])}
    assert jsonl.dumps_line(record, shared) == _stdlib(record) + "\n"  # a float: stdlib
    del record["score"]
    assert jsonl.dumps_line(record, shared) == _stdlib(record) + "\n"  # orjson, if there
    loop: list[object] = []
    loop.append(loop)
    monkeypatch.setattr(jsonenc, "PLAIN_CONTAINERS", 100)
    assert not jsonenc._plain(loop)  # gives up: the stdlib raises, as it always did
    with pytest.raises(RecursionError):
        jsonl.dumps_value(loop)
