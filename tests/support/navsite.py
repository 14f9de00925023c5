"""Small documentation sites for discovery tests, built from a generator's real page.

Each page keeps the generator fixture's chrome byte for byte where it matters to
discovery (head, regions, classes) and gets its own title and main content; anchors
outside the main content lose their `href` (the fixture's chrome points at pages these
sites do not have), and the head keeps only its stylesheets plus an optional
`<link rel="index">`, as Sphinx writes it.
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree, html

from docscrawl.extract.page import page_structure


def build_site(root: Path, template: Path, pages: dict[str, tuple[str, str]], *,
               index_href: str | None = None) -> None:
    """Write `pages` (path under `root` -> (title, main content HTML)) using `template`'s
    markup; `index_href`: the `<link rel="index">` every page's head gets (relative to
    the site root, made relative to each page)."""
    source = template.read_bytes()
    for path, (title, body) in pages.items():
        tree = html.fromstring(source)
        structure = page_structure(tree, "http://site.test/" + path)
        main = structure.main_el
        for a in tree.iter("a"):
            if a.get("href") is not None and not _inside(a, main):
                del a.attrib["href"]
        for child in list(main):
            main.remove(child)
        main.text = None
        for fragment in html.fragments_fromstring(body):
            if isinstance(fragment, str):
                main.text = (main.text or "") + fragment
            else:
                main.append(fragment)
        head = tree.find("head")
        assert head is not None
        for link in list(head.iter("link")):
            if "stylesheet" not in (link.get("rel") or ""):
                link.getparent().remove(link)
        title_el = head.find("title")
        if title_el is not None:
            title_el.text = title
        if index_href is not None:
            depth = path.count("/")
            head.append(etree.Element("link", rel="index", title="Index",
                                      href="../" * depth + index_href))
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"<!DOCTYPE html>\n" + html.tostring(tree, encoding="utf-8"))


def _inside(el: etree._Element, ancestor: etree._Element) -> bool:
    return any(parent is ancestor for parent in el.iterancestors())
