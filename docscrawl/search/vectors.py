"""The numpy files a search maps beside the index (`search.NAME.npy`): each chunk's row id,
version id and vector (int8, with a float32 scale per row: `quantize`), and, with a section
model, the section vectors (`docscrawl.search.sections`).

The vector files are the only copy of the chunk vectors (schema 13; before, `chunks.vec`
held each one again): an update rebuilds them from themselves, each chunk's row taken from
the old files by row id, the chunks written by this update from their fresh vectors
(`SearchIndex.fresh`). The `meta` table keeps the digest of the files it committed
(`vector_files`); files that are not those (deleted, or written by an update that did not
commit) make the index rebuild (`vectors_sound`). The first search stage's coarse matrix
(the embedder's `coarse_dims` prefix, float32) is derived at load (`load_vectors`), not
stored. Schema 14 keeps each vector as int8 times its row's scale (its largest component
over 127): half the bytes of float16, the ranking unchanged (docs/performance.md). The
section vectors are embedded as chunks are written (`embed_sections`)."""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docscrawl.jsonl import replacing
from docscrawl.search.fields import SITE_INDEX
from docscrawl.search.sections import section_text, starts_section, text_sig

if TYPE_CHECKING:
    from docscrawl.search.index import SearchIndex

VECTOR_FILES = ("rowids", "versions", "full", "scales")
SECTION_FILES = ("sections", "chunksec", "secfirst")  # see `docscrawl.search.sections`
OLD_FILES = ("coarse",)  # written by schema 12 and before; removed on the rebuild


class StaleVectors(RuntimeError):
    """The vector files are not the ones the index committed: the index is rebuilt."""


def vector_paths(out: Path, sections: bool) -> dict[str, Path]:
    """The numpy files of output directory `out` (with section vectors or without)."""
    names = VECTOR_FILES + (SECTION_FILES if sections else ())
    return {name: Path(out) / f"search.{name}.npy" for name in names}


def _digest(rowids: Any, full: Any = None, scales: Any = None) -> str:
    """What identifies the vector files: their row count and ids (cheap to check on every
    search), and, when `full` is given, the vectors' bytes and their scales."""
    head = f"{len(rowids)}:{zlib.crc32(rowids.tobytes()):08x}"
    if full is None:
        return head
    crc = zlib.crc32(scales.tobytes()) if scales is not None else 0
    for start in range(0, len(full), 4096):
        crc = zlib.crc32(full[start:start + 4096].tobytes(), crc)
    return f"{head}:{crc:08x}"


def quantize(matrix: Any) -> tuple[Any, Any]:
    """int8 rows and each row's float32 scale (its largest component over 127; 1 for a
    zero row): a vector is stored in a byte a dimension instead of float16's two."""
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float32)
    scales = np.abs(matrix).max(axis=1, initial=0.0) / 127.0
    scales[scales == 0] = 1.0
    rows = np.clip(np.rint(matrix / scales[:, None]), -127, 127).astype(np.int8)
    return rows, scales.astype(np.float32)


class Dequantized:
    """The stored int8 matrix read as float32 rows (`full[rows]`, `full[:, :dims]`), each
    times its scale: what ranking rescores with, without a float copy of the whole."""

    def __init__(self, rows: Any, scales: Any) -> None:
        self.rows, self.scales = rows, scales
        self.shape = rows.shape
        self.ndim = rows.ndim

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, key: Any) -> Any:
        import numpy as np

        picked, scales = self.rows[key], self.scales[key[0] if isinstance(key, tuple) else key]
        scales = np.asarray(scales, dtype=np.float32)
        return picked.astype(np.float32) * (scales[..., None] if picked.ndim > scales.ndim
                                            else scales)


def vectors_sound(index: SearchIndex, *, whole: bool = False) -> bool:
    """True when the index needs no vector files (no embedder, or nothing built yet) or
    its files are the ones it committed: row ids checked (`whole`: the vectors too)."""
    if index.embedder is None or index.meta("signature") is None:
        return True  # (numpy, of the search extra, is imported only with an embedder)
    import numpy as np

    stored = index.meta("vector_files")
    paths = index.vector_files()
    if stored is None or not all(path.exists() for path in paths.values()):
        return False
    try:  # mapping reads a file's header only: a damaged or cut file fails here, cheaply
        mapped = {name: np.load(path, mmap_mode="r") for name, path in paths.items()}
    except (OSError, ValueError, EOFError):
        return False
    rowids, versions, full, scales = (mapped[name] for name in VECTOR_FILES)
    if full.ndim != 2 or not len(full) == len(rowids) == len(versions) == len(scales):
        return False
    found = _digest(rowids, full, scales) if whole else _digest(rowids)
    return stored == found if whole else stored.rsplit(":", 1)[0] == found


def load_vectors(index: SearchIndex) -> tuple[Any, Any, Any, Any]:
    """Row ids, version names, the coarse matrix (the embedder's `coarse_dims` prefix of
    each unit vector, float32, derived here: scanned whole per query) and the full
    matrix (rescoring: the int8 file memory mapped, read as float32, `Dequantized`)."""
    import numpy as np

    files = index.vector_files()
    rowids = np.load(files["rowids"])
    full = Dequantized(np.load(files["full"], mmap_mode="r"), np.load(files["scales"]))
    coarse = np.ascontiguousarray(full[:, :coarse_dims(index, full)], dtype=np.float32)
    names = np.array(json.loads(index.meta("vector_versions") or "[]") or [""], dtype=object)
    versions = names[np.load(files["versions"])] if len(rowids) else names[:0]
    return rowids, versions, coarse, full


def write_vector_files(index: SearchIndex) -> None:
    """Rewrite the vector files: each chunk's vector from the old files by row id, or,
    for the chunks this update wrote, its fresh one (`index.fresh`); raises StaleVectors
    when a chunk has neither. Written to temporary names and renamed, so a search that
    maps the old ones keeps working."""
    import numpy as np

    rows = index.db.execute("SELECT rowid, version FROM chunks ORDER BY rowid").fetchall()
    names = sorted({r[1] or "" for r in rows})
    position = {name: i for i, name in enumerate(names)}
    rowids = np.array([r[0] for r in rows], dtype=np.int64)
    full, scales = _gather(index, rowids)
    arrays: dict[str, np.ndarray] = {
        "rowids": rowids,
        "versions": np.array([position[r[1] or ""] for r in rows], dtype=np.int32),
        "full": full, "scales": scales}
    if index.sections is not None:
        arrays.update(section_arrays(index, rowids.tolist()))
    for name, path in index.vector_files().items():
        with replacing(path, binary=True) as handle:
            np.save(handle, arrays[name])
    for name in OLD_FILES:
        (index.out / f"search.{name}.npy").unlink(missing_ok=True)
    index.set_meta("vector_versions", json.dumps(names))
    index.set_meta("vector_files", _digest(rowids, full, scales))
    index.fresh = {}


def _gather(index: SearchIndex, rowids: Any) -> tuple[Any, Any]:
    """The int8 matrix of `rowids` and its scales: fresh vectors (`index.fresh`: row id ->
    (int8 row, scale)), else the old files' rows, bit for bit."""
    import numpy as np

    fresh = index.fresh
    dims = len(next(iter(fresh.values()))[0]) if fresh else 0
    old_ids, old, old_scales = np.zeros(0, dtype=np.int64), None, None
    paths = index.vector_files()
    if index.meta("vector_files") is not None and paths["full"].exists():
        old_ids = np.load(paths["rowids"])
        old = np.load(paths["full"], mmap_mode="r")
        old_scales = np.load(paths["scales"])
        dims = dims or old.shape[1]
    full = np.zeros((len(rowids), dims or 1), dtype=np.int8)
    scales = np.ones(len(rowids), dtype=np.float32)
    at = np.clip(np.searchsorted(old_ids, rowids), 0, max(len(old_ids) - 1, 0))
    kept = (old_ids[at] == rowids) if len(old_ids) else np.zeros(len(rowids), dtype=bool)
    if old is not None and old_scales is not None and kept.any():
        full[kept] = old[at[kept]]
        scales[kept] = old_scales[at[kept]]
    for i, rowid in enumerate(rowids.tolist()):
        vector = fresh.get(rowid)
        if vector is not None:
            full[i], scales[i] = vector
            kept[i] = True
    if not kept.all():
        raise StaleVectors(f"{int((~kept).sum())} chunks have no vector")
    return full, scales


def section_arrays(index: SearchIndex, rowids: list[int]) -> dict[str, Any]:
    """The section matrix (one row per section in key order, then a zero row; float32,
    the float16 rounding of each vector, so a search maps it and multiplies, with no
    widening of the whole matrix per process: 0.1 s of CPU on 28,000 sections),
    each chunk's section row (in `rowids` order) and each section's first chunk (a
    position in `rowids`). The matrix is the section vectors' only copy: a section's
    vector is its fresh one (`index.fresh_sections`) or its row of the old file (the
    `sections` table's `row`, renumbered here); raises StaleVectors when it has neither.
    The files are written together and only when chunks changed, so a file left by an
    update that did not commit fails the chunk files' digest too (`vectors_sound`)."""
    import numpy as np

    # (a section no chunk holds any more was forgotten by `chunkrows.sync_chunks`)
    rows = index.db.execute("SELECT section_key, row FROM sections "
                            "ORDER BY section_key").fetchall()
    fresh = index.fresh_sections
    old = None
    path = index.vector_files()["sections"]
    if index.meta("vector_files") is not None and path.exists():
        old = np.load(path, mmap_mode="r")
    dims = (len(next(iter(fresh.values()))) if fresh else
            old.shape[1] if old is not None else 1)
    matrix = np.zeros((len(rows) + 1, dims), dtype=np.float32)
    for i, (key, row) in enumerate(rows):
        vector = fresh.get(key)
        if vector is None:
            if old is None or row is None or not 0 <= row < len(old) - 1:
                raise StaleVectors(f"section {key} has no vector")
            vector = old[row]
        matrix[i] = vector
    index.db.executemany("UPDATE sections SET row=? WHERE section_key=?",
                         [(i, key) for i, (key, _) in enumerate(rows)])
    index.fresh_sections = {}
    at = {key: i for i, (key, _) in enumerate(rows)}
    keys = dict(index.db.execute("SELECT rowid, section_key FROM chunk_pages"))
    chunksec = np.array([at.get(keys.get(r), -1) for r in rowids], dtype=np.int32)
    first = np.zeros(len(rows) + 1, dtype=np.int32)  # 0 for a section no chunk holds
    for position, row in reversed(list(enumerate(chunksec.tolist()))):
        first[row] = position
    # a chunk whose section has no vector (a back-of-book index's) reads the last row,
    # zeros: cosine 0
    chunksec[chunksec < 0] = len(rows)
    return {"sections": matrix, "chunksec": chunksec, "secfirst": first}


def coarse_dims(index: SearchIndex, full: Any) -> int:
    """How many leading dimensions the first search stage scans (see `Embedder`)."""
    dims = getattr(index.embedder, "coarse_dims", 0)
    return dims if 0 < dims < full.shape[1] else full.shape[1]


def embed_sections(index: SearchIndex, records: list[Any]) -> None:
    """Vectors of the sections these chunks belong to that have none, or whose text
    changed (their opening chunk is among them): one text per section (`sections`).
    A back-of-book index's sections are never answers (ranking drops them): not
    embedded, their chunks read a zero vector (5-9 % of the sections of Sphinx sites)."""
    texts: dict[str, tuple[str, bool]] = {}   # section key -> text, from its opener
    for record, *_, fields in records:
        if fields.rank[2] == SITE_INDEX:
            continue
        meta = record.get("metadata") or {}
        markdown = str(record.get("markdown") or "")
        key, opener = fields.rank[3], starts_section(markdown)
        if key not in texts or (opener and not texts[key][1]):
            title = index.affixes.without(str(meta.get("title") or ""))
            texts[key] = (section_text(title, meta.get("heading_path") or [], markdown),
                          opener)
    marks = ",".join("?" * len(texts))
    known = dict(index.db.execute(
        f"SELECT section_key, sig FROM sections WHERE section_key IN ({marks})",
        list(texts)))
    wanted = [(key, text) for key, (text, opener) in texts.items()
              if key not in known or (opener and known[key] != text_sig(text))]
    if not wanted:
        return
    model = index.sections
    assert model is not None  # called only when the index has section vectors
    vectors = model.embed([text for _, text in wanted]).astype("float16")
    index.db.executemany("INSERT OR REPLACE INTO sections VALUES(?,?,NULL)",
                        [(key, text_sig(text)) for key, text in wanted])
    index.fresh_sections.update((key, vectors[i]) for i, (key, _) in enumerate(wanted))
    before = index.embedded_sections
    index.embedded_sections += len(wanted)
    report_embedded(index, model, "sections", before, index.embedded_sections)


def report_embedded(index: SearchIndex, model: Any, noun: str, before: int, after: int) -> None:
    """A stderr line each time a build passes a multiple of the model's `progress_every`
    texts embedded, for a slow model's long build (wordllama names none: a whole site
    takes it seconds)."""
    every = getattr(model, "progress_every", 0)
    if every and after // every > before // every:
        print(f"docscrawl: {index.out.name}: {after:,} {noun} embedded ({model.name})",
              file=sys.stderr, flush=True)
