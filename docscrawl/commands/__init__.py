"""docscrawl.commands."""
