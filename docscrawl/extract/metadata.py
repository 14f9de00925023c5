"""Page identity from <head>: title, description, language, canonical link, base URL."""

from __future__ import annotations

from urllib.parse import urljoin

from lxml import etree


def _clean(text: str | None) -> str | None:
    value = " ".join((text or "").split())
    return value or None


def _head_elements(root: etree._Element, tag: str) -> list[etree._Element]:
    """`tag` elements of <head> (whole document when the parser produced no head)."""
    head = root.find("head")
    scope = head if head is not None else root
    return list(scope.iter(tag))


def document_base(root: etree._Element, url: str) -> str:
    """The URL relative links resolve against: `<base href>` joined to `url`, else `url`."""
    for base in _head_elements(root, "base"):
        href = (base.get("href") or "").strip()
        if href:
            return urljoin(url, href)
    return url


def page_title(root: etree._Element) -> str | None:
    """Text of the document `<title>` (an <svg> title does not count)."""
    for title in _head_elements(root, "title"):
        if all(anc.tag != "svg" for anc in title.iterancestors()):
            return _clean("".join(title.itertext()))
    return None


def page_description(root: etree._Element) -> str | None:
    """`meta name=description`, else `meta property=og:description`."""
    found: dict[str, str | None] = {}
    for meta in _head_elements(root, "meta"):
        key = (meta.get("name") or meta.get("property") or "").strip().lower()
        if key in ("description", "og:description") and key not in found:
            found[key] = _clean(meta.get("content"))
    return found.get("description") or found.get("og:description")


def page_language(root: etree._Element) -> str | None:
    """`html[lang]` (or `xml:lang`), as written."""
    html = root if root.tag == "html" else root.getroottree().getroot()
    lang = (
        html.get("lang")
        or html.get("xml:lang")
        or html.get("{http://www.w3.org/XML/1998/namespace}lang")
    )
    return _clean(lang)


def canonical_href(root: etree._Element, base_url: str) -> str | None:
    """Absolute `link rel=canonical` href, or None."""
    for link in _head_elements(root, "link"):
        rels = (link.get("rel") or "").lower().split()
        href = (link.get("href") or "").strip()
        if "canonical" in rels and href:
            return urljoin(base_url, href)
    return None


def page_metadata(
    root: etree._Element, base_url: str
) -> tuple[str | None, str | None, str | None, str | None]:
    """(title, description, language, canonical_href) of a page; canonical made absolute."""
    base = document_base(root, base_url)
    return (
        page_title(root),
        page_description(root),
        page_language(root),
        canonical_href(root, base),
    )
