"""JSON Lines: written a line at a time (every line complete and flushed when written), and
read back by one reader (`read_jsonl`) for every file the crawl and its tools read.

An output file may also be stored gzip-compressed (`pages.jsonl.gz`, `-a compress=gzip`:
`seekjsonl.compress_jsonl` at the end of a crawl); the reader finds either name (`jsonl_path`,
`open_jsonl`), so a caller names the plain file and never needs to know which it is."""

from __future__ import annotations

import gzip
import json
import logging
import os
import tempfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from io import BufferedIOBase, BufferedReader, FileIO, StringIO
from pathlib import Path
from typing import Any, TextIO

# encoded in `jsonenc`; named here too, for the writers and readers of lines
from docscrawl.jsonenc import dumps_line as dumps_line
from docscrawl.jsonenc import dumps_value as dumps_value
from docscrawl.jsonenc import encode_line as encode_line
from docscrawl.jsonenc import encode_value as encode_value
from docscrawl.jsonfields import spliced, top_fields

logger = logging.getLogger(__name__)

GZIP_SUFFIX = ".gz"

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

    def write(self, record: Mapping[str, Any]) -> None:
        """Write one record as one line and flush it to the OS."""
        if self._file is None:
            raise ValueError(f"{self.path} is closed")
        self._file.write(dumps_line(record))
        self._file.flush()
        self.count += 1

    def write_raw(self, line: str | bytes) -> None:
        """Write one already serialized JSON record (no newline inside) as one line: text,
        or its UTF-8 (`jsonenc.encode_line`)."""
        if isinstance(line, bytes):
            if not line.endswith(b"\n") or line.endswith(b"\n\n"):
                line = line.rstrip(b"\n") + b"\n"
        elif not line.endswith("\n") or line.endswith("\n\n"):  # else: written as it is
            line = line.rstrip("\n") + "\n"
        self._write(line)
        self.count += 1

    def write_lines(self, lines: list[str]) -> None:
        """Write serialized records (each one line ending in a newline) in one write and
        one flush: a page's chunks go out together."""
        if self._file is None:
            raise ValueError(f"{self.path} is closed")
        self.write_joined("".join(lines), len(lines))

    def write_joined(self, text: str | bytes, count: int) -> None:
        """Write `count` serialized records already joined into one text (each line ending
        in a newline; or their UTF-8) in one write and one flush, without joining them
        again."""
        if text:
            self._write(text)
            self.count += count
        elif self._file is None:
            raise ValueError(f"{self.path} is closed")

    def _write(self, data: str | bytes) -> None:
        """Write and flush to the OS. UTF-8 goes past the text layer, to its buffer: every
        write is flushed, so no text waits there to come first; the bytes are those the
        text layer writes where a newline is `\\n` (POSIX)."""
        if self._file is None:
            raise ValueError(f"{self.path} is closed")
        if isinstance(data, bytes):
            self._file.buffer.write(data)
        else:
            self._file.write(data)
        self._file.flush()

    def close(self) -> None:
        """Flush to disk and close; safe to call twice."""
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None


# The buffer of a file the end of a crawl reads or rewrites whole: lines are tens of KB
# (a page record), and the default 8 KB buffer made one system call per 4-5 KB (2 GB of
# reads and writes in 4-5 KB calls at the end of a 2,000-page crawl, docs/performance.md).
IO_BUFFER = 1 << 20


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
        with (os.fdopen(fd, "wb", buffering=IO_BUFFER) if binary else
              os.fdopen(fd, "w", encoding="utf-8", buffering=IO_BUFFER)) as handle:
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


def write_json_atomic(path: Path, data: Any, *, compact: bool = False) -> None:
    """Replace `path` with `data` as pretty JSON, or compact (`dumps_value`), atomically
    (`replacing`)."""
    text = dumps_value(data) if compact else json.dumps(data, ensure_ascii=False, indent=2)
    with replacing(path) as handle:
        handle.write(text + "\n")


class UnreadableJsonl(ValueError):
    """A JSONL file that cannot be read whole; the message is one line naming the file."""


class BadLine(UnreadableJsonl):
    """A JSONL line that is not a JSON object (and not the cut-short last line)."""

    def __init__(self, path: Path, lineno: int, raw: bytes) -> None:
        sample = raw[:60].decode("utf-8", errors="replace").rstrip()
        super().__init__(f"{path} line {lineno}: not a JSON object ({sample!r})")
        self.path, self.lineno = path, lineno


class BadGzip(UnreadableJsonl):
    """A .jsonl.gz file cut short or corrupt: the lines before the damage were read."""

    def __init__(self, path: Path, lineno: int, exc: Exception) -> None:
        detail = str(exc) or type(exc).__name__
        super().__init__(f"{path}: truncated or corrupt gzip after line {lineno} ({detail})")
        self.path, self.lineno = path, lineno


def resolve_jsonl(path: Path) -> Path:
    """The file a JSONL name stands for: `path` itself, or `path.gz` when only the
    compressed file is there (a missing file: `path`)."""
    if path.name.endswith(GZIP_SUFFIX) or path.is_file():
        return path
    zipped = path.with_name(path.name + GZIP_SUFFIX)
    return zipped if zipped.is_file() else path


def jsonl_path(directory: Path, name: str) -> Path:
    """The file `name` (`pages.jsonl`) of an output directory, plain or compressed."""
    return resolve_jsonl(directory / name)


def open_jsonl(path: Path) -> BufferedIOBase:
    """A JSONL file opened for reading bytes, decompressed when it is a .gz (seekable in
    uncompressed offsets either way)."""
    path = resolve_jsonl(path)
    if path.name.endswith(GZIP_SUFFIX):
        return gzip.open(path, "rb")
    return BufferedReader(FileIO(path), buffer_size=IO_BUFFER)


def _raw_lines(handle: BufferedIOBase, path: Path) -> Iterator[bytes]:
    """The lines of an open JSONL file; a damaged gzip stream raises `BadGzip` after the
    lines before the damage."""
    lineno = 0
    try:
        for raw in handle:
            yield raw
            lineno += 1
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise BadGzip(path, lineno, exc) from None


def text_lines(path: Path) -> Iterator[str]:
    """The lines of a plain UTF-8 file as `open(path, encoding="utf-8")` gives them
    (universal newlines), read in binary through the 1 MB buffer: a text-mode file reads
    8 KB at a time whatever its buffer and decodes in its own layer, 1.6 times the CPU of
    this over a 2,000-page pages.jsonl (docs/performance.md)."""
    with path.open("rb", buffering=IO_BUFFER) as handle:
        for raw in handle:
            if b"\r" in raw:  # `\r\n` and a lone `\r` end lines in text mode too
                yield from StringIO(raw.decode("utf-8"), newline=None)
            else:
                yield raw.decode("utf-8")


def read_raw_lines(path: Path) -> Iterator[bytes]:
    """Every line of a JSONL file (plain or .gz) as bytes, unparsed (a reader that parses
    only some fields, or keeps offsets: uncompressed ones); a damaged gzip stream raises
    `BadGzip` after the lines before the damage. A missing file: nothing."""
    path = resolve_jsonl(path)
    if not path.is_file():
        return
    with open_jsonl(path) as handle:
        yield from _raw_lines(handle, path)


def parse_object(raw: str | bytes) -> dict[str, Any] | None:
    """One line as a JSON object; None when it is not one (torn, blank, not an object)."""
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def rewrite_jsonl(path: Path, transform: Callable[[dict[str, Any]], dict[str, Any] | None], *,
                  fields: tuple[str, ...] = ()) -> None:
    """Apply `transform` to every line of a JSONL file, streaming into a file that
    replaces it atomically (`replacing`); torn lines, and lines for which it returns None,
    are dropped.

    `fields`: the top-level keys `transform` reads or changes, and the only ones it is
    given: the line is read from its start up to the last of them, and only the values
    that changed are written again, the rest of the line copied as it is (a page line's
    Markdown and links are most of it; keys near the start cost least). A line without
    them all is parsed whole."""
    if not path.exists():
        return
    with replacing(path) as dst:
        for raw in text_lines(path):
            found = top_fields(raw, fields) if fields else None
            if found is not None:
                values, spans = found
                updated = transform(values)
                if updated is None:
                    continue
                if updated.keys() == spans.keys():
                    dst.write(spliced(raw, spans, updated))
                elif (record := parse_object(raw)) is not None:  # keys added or removed
                    for key in spans.keys() - updated.keys():
                        del record[key]
                    dst.write(dumps_line({**record, **updated}))
                continue
            record = parse_object(raw)
            if record is None:
                continue
            result = transform(record)
            if result is not None:
                dst.write(dumps_line(result))


def read_jsonl(path: Path, *, strict: bool = False,
               on_line: Callable[[int], None] | None = None,
               on_torn: Callable[[int], None] | None = None) -> Iterator[dict[str, Any]]:
    """Every JSON object line of a file, streamed (a missing file: nothing; blank lines are
    skipped).

    Lenient by default: a line that is not a JSON object is skipped (the crawl reading its
    own files back after a kill). `strict` (the inspection commands): such a line raises
    `BadLine`, except the last line when it has no newline, the line in flight when a
    crawl was killed (the contract allows losing it): it is passed to `on_torn(lineno)`.
    `on_line(lineno)` is called for every line read (progress).

    `path` may name the plain file of a compressed one (`pages.jsonl` for
    `pages.jsonl.gz`). A gzip stream cut short or corrupt: strict, `BadGzip` (one line
    naming the file) after the lines before the damage; lenient, a logged warning and
    those lines."""
    path = resolve_jsonl(path)
    if not path.is_file():
        return
    with open_jsonl(path) as handle:
        pending: tuple[int, bytes] | None = None
        try:
            for lineno, raw in enumerate(_raw_lines(handle, path), 1):
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
        except BadGzip as exc:
            if strict:
                raise
            logger.warning("docscrawl: %s; the lines before it are read", exc)
            return
        if pending is not None and on_torn is not None:
            on_torn(pending[0])


def expand_jsonl(path: Path) -> None:
    """Make `path` the plain file again when a kill left only its compressed copy
    (`compress_jsonl` renames the .gz in before it removes the plain file: a plain file
    there is whole, and the .gz beside it is dropped), so a resumed run appends to it."""
    zipped = path.with_name(path.name + GZIP_SUFFIX)
    if not zipped.is_file():
        return
    if not path.is_file():
        with replacing(path, binary=True) as dst:
            for raw in read_raw_lines(zipped):
                dst.write(raw)
    zipped.unlink()


def read_json_object(path: Path) -> dict[str, Any]:
    """A JSON object file (run.json, a marker); {} when missing, unreadable or no object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
