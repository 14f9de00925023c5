"""docscrawl.pipelines."""
