"""JSON Lines: written a line at a time (every line complete and flushed when written), and
read back by one reader (`read_jsonl`) for every file the crawl and its tools read."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
        self._file: TextIO | None = open_nofollow(path, append=append)
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
        self.write_joined("".join(lines), len(lines))

    def write_joined(self, text: str, count: int) -> None:
        """Write `count` serialized records already joined into one text (each line ending
        in a newline) in one write and one flush, without joining them again."""
        if self._file is None:
            raise ValueError(f"{self.path} is closed")
        if text:
            self._file.write(text)
            self._file.flush()
            self.count += count

    def close(self) -> None:
        """Flush to disk and close; safe to call twice."""
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None


def open_nofollow(path: Path, *, append: bool = False) -> TextIO:
    """Open an output file for writing (truncated, or for appending) without following a
    symlink at its name: a link planted there raises instead of sending the writes (and
    the truncation) to its target."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    flags |= os.O_APPEND if append else os.O_TRUNC
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if path.is_symlink():
            raise OSError(f"{path}: is a symlink; docscrawl does not write through one") \
                from exc
        raise
    return os.fdopen(fd, "a" if append else "w", encoding="utf-8")


@contextmanager
def replacing(path: Path, *, binary: bool = False) -> Iterator[Any]:
    """A text (or `binary`) file that replaces `path` atomically once the block ends
    without an error: written under a unique temporary name in the same directory (never
    a fixed name a link could wait at), flushed to disk, then renamed over `path` (a
    symlink there is replaced, its target left alone). On an error the temporary file is
    removed."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(name)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with (os.fdopen(fd, "wb") if binary else
              os.fdopen(fd, "w", encoding="utf-8")) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def current_umask() -> int:
    """The process's umask (read by setting it and back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json_atomic(path: Path, data: Any) -> None:
    """Replace `path` with `data` as pretty JSON, atomically (`replacing`)."""
    with replacing(path) as handle:
        handle.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


class BadLine(ValueError):
    """A JSONL line that is not a JSON object (and not the cut-short last line)."""

    def __init__(self, path: Path, lineno: int, raw: bytes) -> None:
        sample = raw[:60].decode("utf-8", errors="replace").rstrip()
        super().__init__(f"{path} line {lineno}: not a JSON object ({sample!r})")
        self.path, self.lineno = path, lineno


def parse_object(raw: str | bytes) -> dict[str, Any] | None:
    """One line as a JSON object; None when it is not one (torn, blank, not an object)."""
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def read_jsonl(path: Path, *, strict: bool = False,
               on_line: Callable[[int], None] | None = None,
               on_torn: Callable[[int], None] | None = None) -> Iterator[dict[str, Any]]:
    """Every JSON object line of a file, streamed (a missing file: nothing; blank lines are
    skipped).

    Lenient by default: a line that is not a JSON object is skipped (the crawl reading its
    own files back after a kill). `strict` (the inspection commands): such a line raises
    `BadLine`, except the last line when it has no newline, the line in flight when a
    crawl was killed (the contract allows losing it): it is passed to `on_torn(lineno)`.
    `on_line(lineno)` is called for every line read (progress)."""
    if not path.is_file():
        return
    with path.open("rb") as handle:
        pending: tuple[int, bytes] | None = None
        for lineno, raw in enumerate(handle, 1):
            if on_line is not None:
                on_line(lineno)
            if pending is not None:  # a bad line followed by more lines: corrupt
                raise BadLine(path, *pending)
            record = parse_object(raw)
            if record is not None:
                yield record
            elif strict and raw.strip():
                if raw.endswith(b"\n"):
                    raise BadLine(path, lineno, raw)
                pending = (lineno, raw)  # maybe the cut-short last line
        if pending is not None and on_torn is not None:
            on_torn(pending[0])


def read_json_object(path: Path) -> dict[str, Any]:
    """A JSON object file (run.json, a marker); {} when missing, unreadable or no object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
