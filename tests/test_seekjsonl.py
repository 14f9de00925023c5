"""`compress_jsonl` writes the files the index reads lines of as gzip members that every
gzip reader reads as one file, and `scan_lines` / `read_lines_at` find a line again by its
offset in the text: in a plain file, a file of members, and a file in one member."""

from __future__ import annotations

import gzip
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from docscrawl import seekjsonl
from docscrawl.jsonl import BadGzip, dumps_line
from docscrawl.seekjsonl import SeekPoints, compress_jsonl, read_lines_at, scan_lines


def _lines(count: int) -> bytes:
    rng = random.Random(7)
    return "".join(dumps_line({"id": f"c{i}", "text": "word " * rng.randrange(1, 90)})
                   for i in range(count)).encode()


def _write(path: Path, text: bytes) -> Path:
    path.write_bytes(text)
    return path


@pytest.mark.parametrize("member", [1, 100, 4096, 1 << 30])
def test_members_break_at_line_ends_and_read_as_one_file(
        tmp_path: Path, member: int, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _lines(300)
    monkeypatch.setattr(seekjsonl, "MEMBER_BYTES", member)
    packed = compress_jsonl(_write(tmp_path / "chunks.jsonl", text))
    assert not (tmp_path / "chunks.jsonl").exists()
    assert gzip.decompress(packed.read_bytes()) == text
    if shutil.which("gzip"):  # the gzip tool reads it unchanged too
        assert subprocess.run(["gzip", "-dc", str(packed)], capture_output=True,
                              check=True).stdout == text
    points = SeekPoints()
    scanned = list(scan_lines(packed, points))
    offsets = [offset for offset, _ in scanned]
    assert b"".join(raw for _, raw in scanned) == text
    assert offsets == [0, *[o + len(r) for o, r in scanned[:-1]]]
    assert points.starts[0] == (0, 0) and set(p[0] for p in points.starts) <= set(offsets)
    expected_members = 300 if member == 1 else 1 if member > len(text) else None
    if expected_members is not None:
        assert len(points.starts) == expected_members
    else:
        assert 1 < len(points.starts) < 300
    wanted = [*offsets[::7], offsets[-1]]
    assert read_lines_at(packed, wanted, points) == {
        o: r.rstrip(b"\n") for o, r in scanned if o in wanted}


def test_a_plain_file_and_a_file_in_one_member_read_the_same(tmp_path: Path) -> None:
    text = _lines(200)
    plain = _write(tmp_path / "chunks.jsonl", text)
    one = _write(tmp_path / "one.jsonl.gz", gzip.compress(text))  # gzipped by hand
    points = SeekPoints()
    scanned = list(scan_lines(plain, points))
    assert points.starts == [] and list(scan_lines(one, points)) == scanned
    assert points.starts == [(0, 0)]
    wanted = [o for o, _ in scanned][3::11]
    got = read_lines_at(plain, wanted, SeekPoints())
    assert got == read_lines_at(one, wanted, points) and len(got) == len(wanted)
    assert read_lines_at(plain, [1], SeekPoints())[1] != got[wanted[0]]  # mid-line: not a line


def test_only_the_files_the_index_reads_are_split_into_members(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seekjsonl, "MEMBER_BYTES", 1000)
    text = _lines(100)
    counts = {}
    for name in ("chunks.jsonl", "pages.jsonl", "structure.jsonl"):
        points = SeekPoints()
        list(scan_lines(compress_jsonl(_write(tmp_path / name, text)), points))
        counts[name] = len(points.starts)
    assert counts["structure.jsonl"] == 1 and counts["chunks.jsonl"] == counts["pages.jsonl"] > 1


def test_a_cut_short_file_raises_after_the_lines_before_the_damage(tmp_path: Path) -> None:
    packed = compress_jsonl(_write(tmp_path / "chunks.jsonl", _lines(3000)))
    packed.write_bytes(packed.read_bytes()[:-5000])
    read = []
    with pytest.raises(BadGzip, match=r"chunks\.jsonl\.gz: truncated or corrupt gzip"):
        read.extend(scan_lines(packed, SeekPoints()))
    assert len(read) > 100
