"""Redirect sources end with the outcome of the page their redirect chain leads to.

A URL that redirects is only a `duplicate` of a page that exists. So its terminal event
waits until the URL it redirects to has ended: a page (`extracted`, `unchanged`, or a
`duplicate` of a page) makes it a `duplicate` of that page; a failure or a skip is passed
back along the chain with the source's own `redirect_chain` (`failed` `http_404`,
`redirect_loop`, `too_many_redirects`...). Sources waiting on each other in a circle
(`a -> b` and `b -> a` fetched as two pages) are a `redirect_loop`.

One protocol, two homes side by side, chosen with the admission (`docscrawl.admission`):

- `base`: `Redirects` (the protocol), `Waiter`, `Outcome`, `source_outcome`;
- `local`: one process: the crawl log waits (`RedirectWaits`, `LocalRedirects`);
- `redis`: distributed mode: the waits are shared by the workers in Redis
  (`SharedRedirects`, made by the worker when its admission opens).

Importing this package imports neither Scrapy nor redis.
"""
