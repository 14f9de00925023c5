"""One crawl: its session, crawl log, scheduling, scratch storage (ledger, spill map) and the
JOBDIR journal (pause and resume)."""
