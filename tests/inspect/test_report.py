"""`docscrawl report`: one self-contained HTML file whose charts render in headless Chromium."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from docscrawl.inspect.check import CHECKS
from docscrawl.inspect.report import COLORS
from tests.inspect.conftest import docscrawl

pytestmark = pytest.mark.e2e

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Headless Debian Chromium with a throw-away profile."""
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True, text=True, timeout=90)


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA PNG (what Chromium writes) into rows of raw pixel bytes."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = chunk
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", header[:10])
    assert depth == 8 and color in (2, 6)
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], (prev[i - bpp] if i >= bpp else 0)
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line) if bpp == 3 else bytes(
            b for j in range(0, stride, 4) for b in line[j:j + 3]))
        prev = line
    return width, height, rows


@pytest.fixture(scope="module")
def report(demo_out: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "report.html"
    result = docscrawl("report", str(demo_out), "-o", str(path))
    assert result.returncode == 0, result.stderr
    return path


def test_report_is_self_contained(report: Path) -> None:
    text = report.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"<(script|img|link|iframe)[^>]+(src|href)=", text)
    assert "@import" not in text and "url(" not in text
    for chart in ("outcomes", "skips", "statuses", "depth", "times"):
        assert f'data-chart="{chart}"' in text
    assert 'data-check="fragment_resolution"' in text


def test_charts_render_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    result = chromium(tmp_path, "--dump-dom", report.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    charts = re.findall(r'<figure class="chart" data-chart="(\w+)" data-rendered="([^"]+)"', dom)
    assert len(charts) >= 5, dom[:2000]
    for name, rendered in charts:
        size, bars = rendered.split(":")
        width, height = (int(v) for v in size.split("x"))
        drawn, total = (int(v) for v in bars.split("/"))
        assert width > 100 and height > 10 and drawn == total > 0, (name, rendered)
    assert f'data-charts-rendered="{len(charts)}"' in dom
    assert dom.count('data-check="') == len(CHECKS)


def test_chart_bars_are_painted(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    result = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1100,1800",
                      "--hide-scrollbars", report.as_uri())
    assert shot.exists(), result.stderr[-2000:]
    _, _, rows = png_pixels(shot)
    pixels = b"".join(rows)
    for key in ("outcomes", "skips", "statuses", "depth"):
        color = bytes.fromhex(COLORS[key].lstrip("#"))
        count = sum(1 for i in range(0, len(pixels), 3) if pixels[i:i + 3] == color)
        assert count > 500, f"{key} bars ({COLORS[key]}) not painted: {count} pixels"


def test_report_on_missing_directory_is_a_one_line_error(tmp_path: Path) -> None:
    result = docscrawl("report", str(tmp_path / "nope"), "-o", str(tmp_path / "r.html"))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "no such output directory" in result.stderr
    assert not (tmp_path / "r.html").exists()


def test_report_without_pages_says_checks_not_run(make_output, tmp_path: Path) -> None:
    from tests.inspect.conftest import event

    out = make_output(log=[event("http://docs.example/v2/", "discovered",
                                 discovery={"reason": "seed", "from": None}),
                           event("http://docs.example/v2/", "skipped", reason="robots",
                                 rule="Disallow: /v2/")])
    (out / "pages.jsonl").unlink()
    html_file = tmp_path / "r.html"
    result = docscrawl("report", str(out), "-o", str(html_file))
    assert result.returncode == 0, result.stderr
    text = html_file.read_text()
    assert "checks not run" in text and "no pages.jsonl" in text
    assert "<code>Disallow: /v2/</code>" in text
