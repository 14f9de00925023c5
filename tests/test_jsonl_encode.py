"""`jsonl.dumps_value` writes the same text with or without the `_json` accelerator: a
Python without it has no `json.encoder.c_make_encoder`, and the pure encoder is used."""

from __future__ import annotations

import json
import math

import pytest

from docscrawl import jsonl

VALUES = [
    {"id": "sha256:ab", "n": 3, "ratio": 0.1, "big": 10**20, "none": None, "yes": True},
    {"text": "naïve – “quoted” \\ \"esc\" \n\t\u2028 😀", "nested": [{"a": []}, {}, [1.5e-7]]},
    ["x", 1, -2.25, False, {"k": {"deep": ["é"]}}],
    "a plain string: ü",
    17,
    [],
]


def test_the_pure_encoder_writes_what_the_c_one_writes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with_c = [jsonl.dumps_value(value) for value in VALUES]
    assert jsonl._C_ENCODE is not None  # this Python has the accelerator
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    assert jsonl._c_encoder() is None
    monkeypatch.setattr(jsonl, "_C_ENCODE", jsonl._c_encoder())
    assert [jsonl.dumps_value(value) for value in VALUES] == with_c
    assert jsonl.dumps_line(VALUES[0]) == with_c[0] + "\n"
    assert with_c[0] == json.dumps(VALUES[0], ensure_ascii=False, separators=(",", ":"))
    with pytest.raises(ValueError):
        jsonl.dumps_value({"x": math.nan})
