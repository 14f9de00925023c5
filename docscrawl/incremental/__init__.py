"""Re-crawls: the state kept across runs (SQLite) and changes.jsonl."""
