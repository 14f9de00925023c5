"""The version a manual states in prose on its start page: "This manual is for R, version
4.2.2." (Texinfo's `@copying` text in the Top node), "This is the official documentation
for Python 3.11.2." (a Sphinx start page), "This document describes version 2.4 of Acme."

Some sites state their release nowhere else: no title, link, label or URL carries it
(the R manuals). `front_matter_versions` reads the first paragraphs of a page's main
content and keeps a number only from a sentence that speaks of the documentation itself
and names it as the documented release; `docscrawl.extract.site_versions` uses it on the
start page only, and only where the pages share no other version.

Not the site's version (each sentence is rejected whole): a sentence about changes
("describes changes between Acme version 1.3 and 1.4"), a number after "since", "requires",
"with", "before"... ("requires Python 3.8", "built with GCC version 12"), a number naming a
product the page's title and top heading do not name ("describes version 3.0 of the
protocol" on a page titled "Overview"), an edition number ("This is Edition 0.13"), a date.
Only the first candidate number of a sentence is judged: a sentence whose first number is
not the site's version says nothing about it.
"""

from __future__ import annotations

import re

from lxml import etree

__all__ = ["FRONT_PARAGRAPHS", "front_matter_versions", "stated_version"]

FRONT_PARAGRAPHS = 12  # paragraphs of the main content read: a start page's front matter
MAX_PARAGRAPH_CHARS = 600
MAX_LEAD_WORDS = 4  # "This is the official documentation": the noun within four words
# A sentence speaks of the documentation itself: "This" and, within a few words, one of these.
SELF_NOUNS = frozenset({"manual", "documentation", "docs", "document", "guide", "book",
                        "handbook", "reference", "tutorial", "edition", "file", "text"})
# A number right after one of these words (or after a product named after one) is not the
# documented release: "since version 2.0", "requires Python 3.8", "built with GCC 12".
NOT_THE_RELEASE = frozenset({"since", "before", "after", "from", "until", "till", "than",
                             "requires", "require", "required", "requiring", "with",
                             "using", "needs", "need", "on", "between", "and", "or",
                             "prior", "older", "newer", "pre", "through", "by", "in",
                             "edition", "updated"})
# Sentences about changes or other releases state no release of their own.
CHANGE_WORDS = re.compile(r"\b(chang\w*|differen\w*|migrat\w*|upgrad\w*|deprecat\w*|"
                          r"new in|what's new|release notes|history|obsolete)\b", re.IGNORECASE)
# Words that connect the subject to what it documents: "is for", "covers", "of".
CONNECTORS = frozenset({"for", "of", "covers", "describes", "documents", "is", "about",
                        "applies", "to"})
# Words of a product phrase that name no product: "the Nettle library" names Nettle.
GENERIC = frozenset({"the", "a", "an", "this", "its", "library", "manual", "program",
                     "package", "software", "project", "toolkit", "user", "users",
                     "official", "release", "documentation", "current"})
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\u201c\"(])")
_WORDS = re.compile(r"[\w+']+")
# A candidate: "version 4.2.2", "release 2.1", "v3.1", or a dotted number ("Python 3.11.2").
_CANDIDATE = re.compile(r"(?<![\w.-])(?:(?P<kw>version|release)\s+|v)?"
                        r"(?P<n>\d+(?:\.\d+)+|\d+)(?P<after>[\w-]?)", re.IGNORECASE)
_MAIN = etree.XPath("//*[@role='main'] | //main | //article")
_CHROME = frozenset({"nav", "header", "footer", "aside", "pre", "code", "table"})


def front_matter_versions(root: etree._Element) -> list[str]:
    """Version numbers the page's front matter states as the documented release, in page
    order (usually one)."""
    names = _name_words(root)
    scope = _MAIN(root)
    top = scope[0] if scope else root.find("body")
    if top is None:
        return []
    found: list[str] = []
    read = 0
    for p in top.iter("p"):
        if any(anc.tag in _CHROME for anc in p.iterancestors()):
            continue
        text = " ".join("".join(p.itertext()).split())
        if not text:
            continue
        read += 1
        if len(text) <= MAX_PARAGRAPH_CHARS:
            for sentence in _SENTENCE_END.split(text):
                value = stated_version(sentence, names)
                if value and value not in found:
                    found.append(value)
        if read >= FRONT_PARAGRAPHS:
            break
    return found


def stated_version(sentence: str, names: frozenset[str]) -> str | None:
    """The release `sentence` says the documentation is for, or None (see the module doc).
    `names`: casefolded words of the page's title and top heading, which a product named
    in the sentence must share."""
    words = [w.casefold() for w in _WORDS.findall(sentence)]
    if not words or words[0] != "this" or not SELF_NOUNS & set(words[1:1 + MAX_LEAD_WORDS]):
        return None
    if CHANGE_WORDS.search(sentence):
        return None
    for match in _CANDIDATE.finditer(sentence):
        number, keyword = match.group("n"), match.group("kw")
        before = [w.casefold() for w in _WORDS.findall(sentence[:match.start()])]
        if match.group("after") or (before and before[-1] == "edition"):
            continue  # a date (2022-11-10), an edition number: not a candidate
        prefixed = keyword is not None or sentence[match.start():match.start("n")].lower() == "v"
        if "." not in number:
            continue  # a bare number is a chapter, a count or a year more often than a release
        return number if _names_the_site(before, sentence[match.end():], prefixed, names) \
            else None
    return None


def _names_the_site(before: list[str], after: str, prefixed: bool,
                    names: frozenset[str]) -> bool:
    """The words between the sentence's connector and the number name this site's product
    (or nothing: the documentation itself), and no word there denies it is the release."""
    if before and before[-1] in NOT_THE_RELEASE:
        return False
    cut = max((i for i, w in enumerate(before) if w in CONNECTORS | NOT_THE_RELEASE),
              default=len(before) - 1)
    if before[cut] in NOT_THE_RELEASE:
        return False  # "built with GCC version 12", "requires Python 3.8"
    product = [w for w in before[cut + 1:] if w not in GENERIC]
    if not product and prefixed:  # "describes version 3.0 of the protocol"
        of = re.match(r"\s+of\s+([\w+' -]{1,60})", after)
        product = [w.casefold() for w in _WORDS.findall(of.group(1))][:4] if of else []
        product = [w for w in product if w not in GENERIC]
    if not product:
        return prefixed  # "This manual describes version 2.4." ("for 2.4": no release named)
    return any(w in names for w in product)


def _name_words(root: etree._Element) -> frozenset[str]:
    """Casefolded words of the page's `<title>` and its first `h1`: what the site is called."""
    texts = []
    title = next(root.iter("title"), None)
    if title is not None:
        texts.append("".join(title.itertext()))
    h1 = next(root.iter("h1"), None)
    if h1 is not None:
        texts.append("".join(h1.itertext()))
    return frozenset(w.casefold() for text in texts for w in re.findall(r"\w+", text))
