"""Line-at-a-time JSON Lines writing: every line is complete and flushed when written."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TextIO

# One encoder for every value: `json.dumps` with options builds a new one per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def dumps_value(value: Any) -> str:
    """Compact JSON of one value, as `dumps_line` writes it (UTF-8 kept, no NaN)."""
    return _ENCODER.encode(value)


def dumps_line(record: dict[str, Any], encoded: dict[str, str] | None = None) -> str:
    """One JSON line (UTF-8 characters kept, no NaN).

    `encoded` maps keys of `record` to their values already encoded with `dumps_value`:
    records that share big values (a page's links in pages.jsonl and structure.jsonl)
    encode them once. The line is the same as without it."""
    if not encoded:
        return dumps_value(record) + "\n"
    fields = [
        dumps_value(key) + ":" + (encoded[key] if key in encoded else dumps_value(value))
        for key, value in record.items()
    ]
    return "{" + ",".join(fields) + "}\n"


class JsonlWriter:
    """Appends records to a .jsonl file, one `write` per line, flushed at once.

    A process killed at any moment leaves only whole lines behind, apart from at most the
    one line being written (never an earlier one).
    """

    def __init__(self, path: Path, *, append: bool = False) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: TextIO | None = path.open("a" if append else "w", encoding="utf-8")
        self.count = 0

    def write(self, record: dict[str, Any]) -> None:
        """Write one record as one line and flush it to the OS."""
        if self._file is None:
            raise ValueError(f"{self.path} is closed")
        self._file.write(dumps_line(record))
        self._file.flush()
        self.count += 1

    def write_raw(self, line: str) -> None:
        """Write one already serialized JSON record (no newline inside) as one line."""
        if self._file is None:
            raise ValueError(f"{self.path} is closed")
        if not line.endswith("\n") or line.endswith("\n\n"):  # else: written as it is
            line = line.rstrip("\n") + "\n"
        self._file.write(line)
        self._file.flush()
        self.count += 1

    def write_lines(self, lines: list[str]) -> None:
        """Write serialized records (each one line ending in a newline) in one write and
        one flush: a page's chunks go out together."""
        if self._file is None:
            raise ValueError(f"{self.path} is closed")
        if lines:
            self._file.write("".join(lines))
            self._file.flush()
            self.count += len(lines)

    def close(self) -> None:
        """Flush to disk and close; safe to call twice."""
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None


def write_json_atomic(path: Path, data: Any) -> None:
    """Replace `path` with `data` as pretty JSON, atomically (temp file + rename)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
