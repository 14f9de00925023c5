"""Reading a crawl output directory: validation, streamed JSON Lines, progress on stderr.

Every inspection command goes through `OutputDir`: a missing directory, a missing or
malformed `run.json`, or a JSONL line that is not a JSON object raises `OutputError`,
whose message is the one line the command prints. Files are read line by line, never
whole, so a crawl log of millions of events costs memory only for what is kept.

The last line of a JSONL file may be cut short when the crawl was killed while writing
it (the contract allows losing the line in flight): it is skipped with a note on stderr.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from docscrawl.export.templates import TemplateLinks
from docscrawl.jsonl import UnreadableJsonl, jsonl_path, read_jsonl
from docscrawl.runs import published_dir, unfinished_dir

__all__ = ["EXAMPLES", "OutputDir", "OutputError", "Progress"]

EXAMPLES = 5  # offending examples a check of `docscrawl check` reports
JSONL_FILES = ("pages.jsonl", "chunks.jsonl", "structure.jsonl", "crawl_log.jsonl")
LINKED_FILES = ("pages.jsonl", "structure.jsonl")  # records whose links join templates


class OutputError(Exception):
    """The output directory cannot be read; the message is one line."""


class Progress:
    """Counts lines read and prints a line on stderr at most once a second, after the first
    second: short commands stay silent, long ones show they are alive."""

    def __init__(self, stream: TextIO | None = None, *, enabled: bool = True,
                 interval: float = 1.0) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._enabled = enabled
        self._interval = interval
        self._start = time.monotonic()
        self._last = self._start
        self._shown = False

    def tick(self, label: str, count: int) -> None:
        """Called for each line read; prints `label: N lines read` now and then."""
        if not self._enabled or count % 500:
            return
        now = time.monotonic()
        if now - self._last >= self._interval and now - self._start >= self._interval:
            self._last = now
            self._shown = True
            self._stream.write(f"docscrawl: {label}: {count:,} lines read\n")
            self._stream.flush()

    def note(self, message: str) -> None:
        """One line on stderr (always shown when enabled)."""
        if self._enabled:
            self._stream.write(f"docscrawl: {message}\n")
            self._stream.flush()


class OutputDir:
    """A crawl output directory, checked on open.

    Its files are read from one run directory (`docscrawl.runs`), resolved on open: the
    published run, or with `unfinished` the run a crawl left unfinished there (a killed
    distributed worker's part, for `docscrawl merge`) when there is one."""

    def __init__(self, path: Path, *, progress: Progress | None = None,
                 unfinished: bool = False) -> None:
        self.path = Path(path)
        self.progress = progress or Progress(enabled=False)
        if not self.path.exists():
            raise OutputError(f"{self.path}: no such output directory")
        if not self.path.is_dir():
            raise OutputError(f"{self.path}: not a directory")
        left = unfinished_dir(self.path) if unfinished else None
        self.files = (left if left is not None and (left / "run.json").is_file()
                      else published_dir(self.path))
        run_path = self.files / "run.json"
        if not run_path.is_file():
            raise OutputError(f"{self.path}: no run.json (not a docscrawl output directory)")
        try:
            run = json.loads(run_path.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            raise OutputError(f"{run_path}: not UTF-8") from None
        except ValueError as exc:
            raise OutputError(f"{run_path}: not valid JSON ({exc})") from None
        if not isinstance(run, dict) or not isinstance(run.get("site"), str):
            raise OutputError(f"{run_path}: not a docscrawl run.json (no \"site\")")
        self.run: dict[str, Any] = run
        self._templates: TemplateLinks | None = None

    def has(self, name: str) -> bool:
        """True when the file exists (plain, or compressed: `name.gz`)."""
        return jsonl_path(self.files, name).is_file()

    def require(self, *names: str) -> None:
        """Raise OutputError naming the first missing file."""
        for name in names:
            if not self.has(name):
                raise OutputError(f"{self.path}: no {name}")

    def records(self, name: str) -> Iterator[dict[str, Any]]:
        """Stream the JSON objects of one JSONL file (missing file: nothing). Page and
        structure records come with their full link list, template blocks joined back
        (`export.templates`)."""
        if name in LINKED_FILES:
            templates = self.templates
            for record in self._records(name):
                yield templates.join(record)
            return
        yield from self._records(name)

    @property
    def templates(self) -> TemplateLinks:
        """The run's template blocks (templates.jsonl), read once on first use."""
        if self._templates is None:
            self._templates = TemplateLinks(self.files)
        return self._templates

    def _records(self, name: str) -> Iterator[dict[str, Any]]:
        path = self.files / name
        try:
            yield from read_jsonl(
                path, strict=True, on_line=lambda lineno: self.progress.tick(name, lineno),
                on_torn=lambda lineno: self.progress.note(
                    f"{name} line {lineno}: incomplete last line ignored "
                    "(crawl killed while writing it)"))
        except UnreadableJsonl as exc:  # a bad line, a truncated .gz: one line
            raise OutputError(str(exc)) from None
