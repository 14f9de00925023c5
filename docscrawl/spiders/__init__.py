"""docscrawl.spiders."""
