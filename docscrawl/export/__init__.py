"""The records written: pages.jsonl and structure.jsonl fields, inbound links."""
