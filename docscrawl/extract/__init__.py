"""docscrawl.extract."""
