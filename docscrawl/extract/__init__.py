"""docscrawl.extract: pure functions from a parsed page to its records."""


def compiled() -> bool:
    """True when this install's extraction is the mypyc build (docs/compiled.md): its
    modules are C extensions, not the `.py` files beside them."""
    from docscrawl.extract import markdown

    return not markdown.__file__.endswith(".py")
