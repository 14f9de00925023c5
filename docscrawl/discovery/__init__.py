"""docscrawl.discovery."""
