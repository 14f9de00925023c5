"""Top-level fields of one compact JSON line (as the crawl writes them), read without
parsing the whole line, and replaced in it: a page line's Markdown and links are most of
its bytes, and the readers and rewriters of the output want a few small keys.

`field_at` / `field` find one key (the first `"name":` in the line: right for the crawl's
own lines, whose strings escape every quote, when the key comes before any nested key of
that name); `top_fields` decodes the keys from the line's start up to the last one wanted,
exactly; `spliced` writes changed values back in place (`jsonl.rewrite_jsonl`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from docscrawl.jsonenc import dumps_value

_DECODER = json.JSONDecoder()
Span = tuple[int, int]


def field_at(line: str, name: str) -> tuple[Any, int, int]:
    """The value of the key `name` of a compact JSON line, decoded alone (a page line's
    Markdown is most of it and need not be parsed), and where its text starts and ends in
    `line`: (None, 0, 0) when the key is absent or its value does not decode. The first
    `"name":` in the line is taken: right for the crawl's own lines, whose strings escape
    every quote, when `name` is a top-level key that comes before any nested one."""
    at = line.find(f'"{name}":')
    if at < 0:
        return None, 0, 0
    start = at + len(name) + 3
    while line[start:start + 1] in (" ", "\t"):
        start += 1
    try:
        value, end = _DECODER.raw_decode(line, start)
    except ValueError:
        return None, 0, 0
    return value, start, end


def field(line: str, name: str) -> Any:
    """`field_at`'s value alone: None when the key is absent."""
    return field_at(line, name)[0]


def top_fields(line: str, keys: tuple[str, ...]
               ) -> tuple[dict[str, Any], dict[str, Span]] | None:
    """The values of `keys` at the top level of a compact JSON line, and where each value
    is in it, read from the start up to the last of them (the values before are decoded
    and dropped); None when the line is not one object or lacks one of them."""
    if not line.startswith("{") or not line.endswith("}\n"):
        return None
    wanted = set(keys)
    values: dict[str, Any] = {}
    spans: dict[str, Span] = {}
    at = 1
    try:
        while wanted:
            if line[at] != '"':
                return None
            key, at = _DECODER.raw_decode(line, at)
            if line[at] != ":":
                return None
            value, end = _DECODER.raw_decode(line, at + 1)
            if key in wanted:
                wanted.discard(key)
                values[key], spans[key] = value, (at + 1, end)
            at = end + 1
            if line[end] != "," and (line[end] != "}" or wanted):
                return None
    except (ValueError, IndexError):
        return None
    return values, spans


def spliced(line: str, spans: Mapping[str, Span], values: Mapping[str, Any]) -> str:
    """`line` with the values at `spans` that encode differently now replaced."""
    changed = []
    for key, (start, end) in spans.items():
        text = dumps_value(values[key])
        if text != line[start:end]:
            changed.append((start, end, text))
    if not changed:
        return line
    parts, at = [], 0
    for start, end, text in sorted(changed):
        parts += [line[at:start], text]
        at = end
    parts.append(line[at:])
    return "".join(parts)
