"""Child process for the kill -9 test: writes pages forever, printing each committed index."""

from __future__ import annotations

import sys

from docscrawl.incremental.state import StateStore


def main(directory: str, run_id: str, start: int) -> None:
    store = StateStore.open(directory)
    store.begin_run(run_id)
    i = start
    while True:
        url = f"https://docs.example.test/p{i}/"
        ids = [f"sha256:{i}-{k}" for k in range(i % 7 + 1)]
        store.upsert_page(
            url, run_id=run_id, etag=f'"{i}"', last_modified=None,
            content_hash=f"sha256:h{i}", chunk_ids=ids,
            observed_urls=[url + "index.html"],
            discovery_links=[(f"{url}l{k}.html", "sidebar", k) for k in range(40)],
        )
        print(i, flush=True)
        i += 1


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
