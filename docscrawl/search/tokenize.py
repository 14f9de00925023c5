"""Code-aware terms for the lexical index and for queries.

Documentation questions mix prose with identifiers: `json.dumps`, `--save-exact`,
`SQLSTATE 23505`, `Iterator<E>`, `std::vector`, `$HOME`. Each such token is indexed whole
(so a query for it matches it exactly, with the rarity of the whole token) and also as
its parts, split at punctuation, CamelCase and snake_case (so `dumps` or `save exact`
still find it).

FTS5's own tokenizer (unicode61: letters and digits) reads the text itself and gives the
plain words and the parts split at punctuation, in C. `index_text` only appends what it
cannot produce: each compound whole, encoded as one alphanumeric term (`json.dumps` ->
`jsonx2exdumps`, see `encode`), and CamelCase words (`HTTPServerError` -> http server
error). Queries encode their terms the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache

# Punctuation that joins a compound identifier (kept in the whole term).
TOKENCHARS = "._-<>:/$@#"
_ENCODED = re.compile(r"[\W_]")

# A compound token: an optional flag dash run, then word characters joined by the
# punctuation identifiers use (dots, colons, slashes, dashes, generics).
_COMPOUND = re.compile(
    r"(?:--?|\$|@|#)?[^\W_][\w]*(?:(?:\.|::|:|/|-|->)[\w]+)*(?:<[\w,.:]+>)?",
)
_PART = re.compile(r"[^\W_]+")
# CamelCase and letter/digit boundaries: `HTTPServerError2` -> HTTP Server Error 2.
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")

# English function words and the words every how-to question carries; dropped from
# queries (never from the index) so an OR query stays about what the question names.
_STOPWORDS = """
a an the and or but if of to in on at by for with from as into onto about over under
is are was were be been being do does did done doing have has had having can could
should would will shall may might must i me my we our you your it its this that these
those there here what which who whom whose when where why how not no yes so than then
too very just also any all some each every other such only own same both few more most
get gets use using used want need make way there's i'm it's don't doesn't let lets
"""
STOPWORDS = frozenset(_STOPWORDS.split())



def terms(text: str) -> Iterator[str]:
    """Every index term of `text`, lower case: whole compounds, then their parts."""
    for token in _COMPOUND.findall(text):
        if token.isalnum():  # a plain word, the common case: split CamelCase only
            if token.islower() or token.isdigit():
                yield token
                continue
            words = _CAMEL.findall(token)
            yield token.lower()
            if len(words) > 1:
                yield from (word.lower() for word in words)
            continue
        parts = _PART.findall(token)
        if not parts:
            continue
        whole = token.lower().rstrip(".:-/")
        if len(parts) > 1 or whole != parts[0].lower():
            yield whole
        for part in parts:
            words = _CAMEL.findall(part)
            if len(words) > 1:
                yield part.lower()
            for word in words:
                yield word.lower()


_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "ed", "es", "er", "s")


@lru_cache(maxsize=1 << 16)
def stem(term: str) -> str:
    """A light suffix stem for matching query words to heading words: `registering`,
    `registers`, `register` -> `regist`; `writes`, `write` -> `writ`; `queries`, `query`
    -> `queri`. Consistent rather than linguistic; identifiers and short words are kept."""
    if len(term) <= 3 or not term.isalpha():
        return term
    for _ in range(2):
        for suffix in _SUFFIXES:
            if (term.endswith(suffix) and len(term) - len(suffix) >= 3
                    and not (suffix == "s" and term.endswith("ss"))):
                term = term[: -len(suffix)] + ("i" if suffix in ("ies", "ied") else "")
                break
        else:
            break
    if len(term) > 3 and term[-1] in "ey":
        term = term[:-1] + ("i" if term[-1] == "y" else "")
    return term


def encode(term: str) -> str:
    """A term as FTS5 stores it: letters and digits only, every other character written
    as `x<hex>x` (`--save-exact` -> `x2dxx2dxsavex2dxexact`), so one compound is one term."""
    if term.isalnum():
        return term
    return _ENCODED.sub(lambda m: f"x{ord(m.group()):x}x", term)


def _plain(token: str) -> bool:
    """A token FTS5 reads right by itself: letters/digits, not CamelCase."""
    return token.isalnum() and (token.islower() or token.isupper() or token.isdigit()
                                or (token[:1].isupper() and token[1:].islower()))


def index_text(text: str) -> str:
    """`text` as stored in an FTS5 column: the text itself, then the encoded compound
    wholes and CamelCase words FTS5's tokenizer would not produce.

    A compound never spans white space, so the text's tokens are those of its
    space-separated words, in order; a site repeats its words, so each word's tokens are
    found once (`_word_tokens`) instead of scanning every text with the regex."""
    seen: set[str] = set()
    added: list[str] = []
    cache = _WORD_TOKENS
    for word in dict.fromkeys(text.split()):
        tokens = cache.get(word)
        for token in _word_tokens(word) if tokens is None else tokens:
            if token not in seen and (extra := _added_terms(token)):
                seen.add(token)
                added.append(extra)
    return text + "\n" + " ".join(added) if added else text


_WORD_TOKENS: dict[str, tuple[str, ...]] = {}
_WORD_CACHE = 200_000   # bound on the word -> tokens cache


def _word_tokens(word: str) -> tuple[str, ...]:
    """The tokens of one space-free word that `index_text` appends terms for (the
    compounds and CamelCase words, not the plain words FTS5 reads right itself)."""
    found = _WORD_TOKENS.get(word)
    if found is None:
        if len(_WORD_TOKENS) >= _WORD_CACHE:
            _WORD_TOKENS.clear()
        found = () if _plain(word) else tuple(
            token for token in _COMPOUND.findall(word) if not _plain(token))
        _WORD_TOKENS[word] = found
    return found


@lru_cache(maxsize=1 << 16)
def _added_terms(token: str) -> str:
    """What `index_text` appends for one token that is not a plain word; a site repeats
    its identifiers, so each is worked out once."""
    found = list(terms(token))
    return " ".join([encode(term) for term in found if not term.isalnum()]
                    + [term for term in found if term.isalnum()])


def query_terms(query: str, known: Callable[[str], bool] | None = None) -> list[str]:
    """The distinct terms of a query, stopwords dropped (all kept if nothing is left).

    A CamelCase word is searched whole: the index holds it whole as well as split, so
    its words as well would count one query word three or four times over the others
    ("Markdown instead of reStructuredText" found every reStructuredText page first).
    Its words are searched only when `known` says the index does not hold the whole."""
    found: list[str] = []
    for token in _COMPOUND.findall(query):
        if token.isalnum() and not (token.islower() or token.isdigit()):
            whole = token.lower()
            found.append(whole)
            if known is not None and not known(whole):
                found += [word.lower() for word in _CAMEL.findall(token)]
        else:
            found += terms(token)
    found = list(dict.fromkeys(found))
    kept = [term for term in found if term not in STOPWORDS]
    return kept or found


def is_compound(term: str) -> bool:
    """True for a whole identifier kept with its punctuation (`json.dumps`)."""
    return any(ch in TOKENCHARS for ch in term)


# plain lower-case words joined by hyphens or slashes: "user-typed", "yes/no"
_JOINED_WORDS = re.compile(r"[a-z]+(?:[-/][a-z]+)+")


def names_identifier(term: str) -> bool:
    """Whether a query term names something the docs define (`json.dumps`, `--verbose`,
    `snake_case`, `1.4.46`): a compound, except plain words joined by hyphens or slashes,
    which are the asker's own English ("user-typed text", "a yes/no outcome",
    "without zero-filling"). Ranking reads a question naming an identifier as exact:
    its words are the page's own (`rank.Searcher._section_weight`, `structure`'s
    listing factor); bm25 still searches the compound whole either way."""
    return is_compound(term) and not _JOINED_WORDS.fullmatch(term)


def fts_phrase(term: str) -> str:
    """One term, encoded as stored, quoted for an FTS5 MATCH expression."""
    return '"' + encode(term).replace('"', '""') + '"'


def command_like(query: str) -> bool:
    """A query written as a command line: a flag, a `$ ` prompt, backticks, a KEY=VALUE
    or a pipe. Code blocks answer it best."""
    stripped = query.strip()
    return bool(stripped.startswith(("$ ", "`")) or _COMMAND_MARK.search(stripped))


_COMMAND_MARK = re.compile(r"(^|\s)--?[A-Za-z]|\w=\S|\s\|\s")


def words(texts: Iterable[str]) -> set[str]:
    """The set of terms of several texts (heading paths, titles)."""
    found: set[str] = set()
    for text in texts:
        found.update(terms(text))
    return found
