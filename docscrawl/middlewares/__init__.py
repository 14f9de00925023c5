"""docscrawl.middlewares."""
