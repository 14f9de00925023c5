"""The site's template, learned across pages: what it repeats is left out of each page.

`table` counts block signatures over the warm-up sample (`warmup`) and says which blocks
are template; `content` takes them out of a page's main content; `tracker` relabels
navigation regions that repeat; `pipeline` is the Scrapy glue of the tracker.
"""
