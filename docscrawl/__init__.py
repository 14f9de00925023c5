"""docscrawl: crawl one documentation site into provenance-rich JSON Lines."""

__version__ = "0.1.0"
__all__ = ["__version__"]
