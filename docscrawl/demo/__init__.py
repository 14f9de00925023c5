"""`make demo`: the bundled demo site, its fixture server, the crawl."""
