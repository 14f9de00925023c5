"""The numpy files a search maps beside the index (`search.NAME.npy`): each chunk's row id,
version id, coarse and full vectors, and, with a section model, the section vectors
(`docscrawl.search.sections`). Written from the index's tables after an update; the
section vectors are embedded as chunks are written (`embed_sections`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docscrawl.jsonl import replacing
from docscrawl.search.sections import section_text, starts_section, text_sig

if TYPE_CHECKING:
    from docscrawl.search.index import SearchIndex

VECTOR_FILES = ("rowids", "versions", "coarse", "full")
SECTION_FILES = ("sections", "chunksec", "secfirst")  # see `docscrawl.search.sections`


def vector_paths(out: Path, sections: bool) -> dict[str, Path]:
    """The numpy files of output directory `out` (with section vectors or without)."""
    names = VECTOR_FILES + (SECTION_FILES if sections else ())
    return {name: Path(out) / f"search.{name}.npy" for name in names}


def vector_files_exist(index: SearchIndex) -> bool:
    return all(path.exists() for path in index.vector_files().values())


def write_vector_files(index: SearchIndex) -> None:
    """Rewrite the vector files from the chunks table (written to temporary names and
    renamed, so a search that maps the old ones keeps working)."""
    import numpy as np

    rows = index.db.execute("SELECT rowid, version, vec FROM chunks "
                            "WHERE vec IS NOT NULL ORDER BY rowid").fetchall()
    names = sorted({r[1] or "" for r in rows})
    position = {name: i for i, name in enumerate(names)}
    full = (np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float16)
            .reshape(len(rows), -1) if rows else np.zeros((0, 1), dtype=np.float16))
    arrays: dict[str, np.ndarray] = {"rowids": np.array([r[0] for r in rows], dtype=np.int64),
              "versions": np.array([position[r[1] or ""] for r in rows], dtype=np.int32),
              "coarse": np.ascontiguousarray(full[:, :coarse_dims(index, full)],
                                             dtype=np.float32),
              "full": full}
    if index.sections is not None:
        arrays.update(section_arrays(index, [r[0] for r in rows]))
    for name, path in index.vector_files().items():
        with replacing(path, binary=True) as handle:
            np.save(handle, arrays[name])
    index.set_meta("vector_versions", json.dumps(names))


def section_arrays(index: SearchIndex, rowids: list[int]) -> dict[str, Any]:
    """The section matrix (float32, one row per section), each chunk's section row
    (in `rowids` order) and each section's first chunk (a position in `rowids`)."""
    import numpy as np

    rows = index.db.execute("SELECT section_key, vec FROM sections "
                            "WHERE vec IS NOT NULL ORDER BY section_key").fetchall()
    at = {key: i for i, (key, _) in enumerate(rows)}
    matrix = (np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16)
              .reshape(len(rows), -1).astype(np.float32)
              if rows else np.zeros((0, 1), dtype=np.float32))
    keys = dict(index.db.execute("SELECT rowid, section_key FROM chunks"))
    chunksec = np.array([at.get(keys.get(r), -1) for r in rowids], dtype=np.int32)
    first = np.zeros(len(rows) + 1, dtype=np.int32)  # 0 for a section no chunk holds
    for position, row in reversed(list(enumerate(chunksec.tolist()))):
        first[row] = position
    # a chunk whose section has no vector reads the last row, zeros: cosine 0; so
    # does a section no chunk holds (its `first` would be no chunk of it)
    matrix = np.vstack([matrix, np.zeros((1, matrix.shape[1]), dtype=np.float32)])
    chunksec[chunksec < 0] = len(rows)
    held = np.zeros(len(rows) + 1, dtype=bool)
    held[chunksec] = True
    matrix[~held] = 0.0
    return {"sections": matrix, "chunksec": chunksec, "secfirst": first}


def coarse_dims(index: SearchIndex, full: Any) -> int:
    """How many leading dimensions the first search stage scans (see `Embedder`)."""
    dims = getattr(index.embedder, "coarse_dims", 0)
    return dims if 0 < dims < full.shape[1] else full.shape[1]


def embed_sections(index: SearchIndex, records: list[Any]) -> None:
    """Vectors of the sections these chunks belong to that have none, or whose text
    changed (their opening chunk is among them): one text per section (`sections`)."""
    texts: dict[str, tuple[str, bool]] = {}   # section key -> text, from its opener
    for record, *_, fields in records:
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
    index.db.executemany("INSERT OR REPLACE INTO sections VALUES(?,?,?)",
                        [(key, text_sig(text), vectors[i].tobytes())
                         for i, (key, text) in enumerate(wanted)])
    every = getattr(model, "progress_every", 0)
    before, index.embedded_sections = (index.embedded_sections,
                                       index.embedded_sections + len(wanted))
    if every and index.embedded_sections // every > before // every:
        print(f"docscrawl: {index.out.name}: {index.embedded_sections:,} sections embedded "
              f"({model.name})", file=sys.stderr, flush=True)
