"""JSON text of records, as every output line is written: compact, UTF-8 characters kept,
no NaN; the same text with or without the `_json` accelerator, and with or without orjson
(the `fast` extra), which writes plain records several times faster. `docscrawl.jsonl`
writes and reads the lines."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

# One encoder for every value (`json.dumps` with options builds one per call), and its C part
# made once (`encode` makes one per call, with a dict of ids to check for cycles): the same
# text. A Python without the `_json` accelerator has no C part: `encode` then (same text).
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_Encode = Callable[[Any, int], list[str]]


def _c_encoder() -> _Encode | None:
    """`_ENCODER`'s C encoder, made once; None without the `_json` accelerator."""
    make = getattr(json.encoder, "c_make_encoder", None)
    return None if make is None else make(
        None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", *[False] * 3)


_C_ENCODE = _c_encoder()


def _fast_encoder() -> tuple[Callable[[Any], bytes], Callable[[Any], bytes],
                             Callable[[Any], Any]] | None:
    """orjson's `dumps` (UTF-8 bytes), the same with a newline after, and its `Fragment`
    (JSON text written as it is), when installed (the `fast` extra: several times the
    stdlib's speed on records); None without it. Dataclasses and datetimes are passed to
    its `default` (none: it raises), so that what the stdlib refuses it refuses too."""
    try:
        import orjson
    except ImportError:
        return None
    dumps = orjson.dumps
    option = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
    line_option = option | orjson.OPT_APPEND_NEWLINE

    def encode(value: Any) -> bytes:
        return dumps(value, option=option)

    def encode_line(value: Any) -> bytes:
        return dumps(value, option=line_option)
    return encode, encode_line, orjson.Fragment


_FAST = _fast_encoder()
# Containers `_plain` looks into before it gives up (a value that contains itself never
# ends): the stdlib then writes it, or raises as it always did.
PLAIN_CONTAINERS = 1_000_000


def _plain(value: Any) -> bool:
    """True when `value` holds only dicts, lists, tuples, strings, integers, booleans and
    None: the values orjson writes exactly as the stdlib does (not floats: `1e-05` is
    `1e-5` there, NaN `null`; nothing else either). A loop, not a recursion: it costs a
    fraction of what it saves."""
    stack = [value]
    pop, extend = stack.pop, stack.extend
    containers = 0
    while stack:
        item = pop()
        kind = type(item)
        if kind is str or kind is int or item is None or kind is bool:
            continue
        if kind is dict or (kind is not list and kind is not tuple and isinstance(item, dict)):
            extend(item.values())
        elif kind is list or kind is tuple or isinstance(item, list | tuple):
            extend(item)
        elif isinstance(item, str | int):
            continue
        else:
            return False
        containers += 1
        if containers > PLAIN_CONTAINERS:
            return False
    return True


def dumps_value(value: Any, *, plain: bool = False) -> str:
    """Compact JSON of one value, as `dumps_line` writes it (UTF-8 kept, no NaN).

    With orjson installed, a plain value (`_plain`) is encoded by it: the same text, byte
    for byte; anything it refuses (a lone surrogate, an integer over 64 bits, a key that
    is not a string) and every value holding a float go the stdlib's way. `plain`: the
    caller's types say the value is plain (the export's records: `export.records`,
    `chunking.chunker`, typed so and tested), so the walk that would tell is skipped:
    over a page's records it cost as much as orjson's encoding."""
    fast = _fast_value(value, plain)
    return _stdlib_value(value) if fast is None else fast.decode()


def encode_value(value: Any, *, plain: bool = False) -> bytes:
    """`dumps_value` as UTF-8: orjson's own bytes, for a file written in bytes (decoded
    into a str, a written line is encoded again: a generated page's lines are 250 KB,
    few of them ASCII alone)."""
    fast = _fast_value(value, plain)
    return _stdlib_value(value).encode() if fast is None else fast


def dumps_line(record: Mapping[str, Any], encoded: Mapping[str, str | bytes] | None = None,
               *, plain: bool = False) -> str:
    """One JSON line (UTF-8 characters kept, no NaN).

    `encoded` maps keys of `record` to their values already encoded with `dumps_value`
    (or `encode_value`): records that share big values (a page's links in pages.jsonl and
    structure.jsonl) encode them once. The line is the same as without it. `plain`: as
    `dumps_value`'s."""
    fast = _fast_line(record, encoded, plain)
    return _stdlib_line(record, encoded) if fast is None else fast.decode()


def encode_line(record: Mapping[str, Any], encoded: Mapping[str, str | bytes] | None = None,
                *, plain: bool = False) -> bytes:
    """`dumps_line` as UTF-8 (see `encode_value`)."""
    fast = _fast_line(record, encoded, plain)
    return _stdlib_line(record, encoded).encode() if fast is None else fast


def _fast_value(value: Any, plain: bool) -> bytes | None:
    """orjson's bytes for a value it writes as the stdlib does; None for the others."""
    if _FAST is None or _C_ENCODE is None or isinstance(value, str) or not (
            plain or _plain(value)):
        return None
    try:
        return _FAST[0](value)
    except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError
        return None


def _stdlib_value(value: Any) -> str:
    if _C_ENCODE is None or isinstance(value, str):
        return _ENCODER.encode(value)
    return "".join(_C_ENCODE(value, 0))


def _fast_line(record: Mapping[str, Any], encoded: Mapping[str, str | bytes] | None,
               plain: bool) -> bytes | None:
    """orjson's line (newline included) when it writes it as the stdlib does, else None."""
    if _FAST is None:
        return None
    if not encoded:
        if _C_ENCODE is None or not (plain or _plain(record)):
            return None
        value: Mapping[str, Any] = record
    else:
        if not (plain or _plain([v for k, v in record.items() if k not in encoded])):
            return None
        fragment = _FAST[2]  # the values already encoded are written as they are
        value = {key: fragment(encoded[key]) if key in encoded else item
                 for key, item in record.items()}
    try:
        return _FAST[1](value)
    except (TypeError, ValueError):
        return None


def _stdlib_line(record: Mapping[str, Any], encoded: Mapping[str, str | bytes] | None) -> str:
    if not encoded:
        return _stdlib_value(record) + "\n"
    fields = [_stdlib_value(key) + ":" + (_text(encoded[key]) if key in encoded
                                          else dumps_value(value))
              for key, value in record.items()]
    return "{" + ",".join(fields) + "}\n"


def _text(encoded: str | bytes) -> str:
    return encoded if isinstance(encoded, str) else encoded.decode()
