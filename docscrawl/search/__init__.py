"""Search a crawl's output and cite it: an index beside the output (`index`), code-aware
terms (`tokenize`), packaged embedders (`embed`) and ranking (`rank`)."""

from docscrawl.search.hits import Hit, Result
from docscrawl.search.index import IndexError_, SearchIndex
from docscrawl.search.rank import Searcher, VersionError

__all__ = ["Hit", "IndexError_", "Result", "SearchIndex", "Searcher", "VersionError"]
