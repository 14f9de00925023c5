"""docscrawl.dedup."""
