"""Code blocks: exact text, language from markup, and kind (command/output/config/source).

Works on the element the Markdown walker meets: a `pre`, or a table that holds a
line-number gutter next to the code (Sphinx/Pygments `highlighttable`, Hugo `lntable`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from lxml import etree

from docscrawl.extract.clean import class_tokens

# ---- markup tables -------------------------------------------------------------------

# Elements removed from the code text: gutters, copy buttons, language labels.
CODE_CHROME_CLASSES = frozenset({
    "linenos", "lineno", "linenodiv", "ln", "lnt", "line-numbers-rows", "src-line-numbers",
    "rouge-gutter", "hljs-ln-numbers", "react-syntax-highlighter-line-number", "copybtn",
    "copy-button", "md-clipboard", "lang", "code-annotation__index",
    # source views: javadoc's line numbers (JDK 16+, older), Sphinx viewcode's "[docs]" link
    "source-line-no", "sourcelineno", "viewcode-back",
})
CODE_CHROME_TAGS = frozenset({"button", "script", "style", "template", "svg", "input"})
# Per-line wrappers (Shiki, Prism/Docusaurus, Expressive Code, Chroma).
LINE_CLASSES = frozenset({"line", "token-line", "ec-line", "code-line"})
# Table classes (or cell classes) that mean "code with a line-number gutter".
CODE_TABLE_CLASSES = frozenset({
    "highlighttable", "lntable", "rouge-table", "hljs-ln", "codehilitetable",
})
CODE_CELL_CLASSES = frozenset({"code", "lntd", "rouge-code", "hljs-ln-code"})
GUTTER_CELL_CLASSES = frozenset({"linenos", "gutter", "rouge-gutter", "hljs-ln-numbers"})
LANG_PREFIXES = ("language-", "lang-", "highlight-", "brush:")
# Prefixes that name a language only when the rest is a language this module knows:
# erl_docgen's `div.example.example-erl` (`example-none` for plain text), while themes use
# `example-` for anything (`example-buttons`).
KNOWN_ONLY_PREFIXES = ("example-",)
# `pre`/`code` elements inside the code element read for its language: mdBook wraps the
# `<code>` pulldown-cmark wrote in its own `<pre class="playground">`, inside the first `pre`
# (`<pre><pre class="playground"><code class="language-rust">`).
MAX_INNER_CODE = 3
LANG_ATTRS = ("data-lang", "data-language", "lang")
DECLARED_CACHE = 1024  # distinct (tag, class, language attributes) remembered
ANCESTOR_LEVELS = 4
# Class tokens on `pre`/`code` that are language names on their own (rustdoc `pre.rust`,
# Pandoc `pre.sourceCode.python`, highlight.js `code.hljs.python`).
BARE_LANGUAGES = frozenset({
    "rust", "python", "bash", "sh", "shell", "console", "javascript", "js", "typescript",
    "ts", "json", "yaml", "yml", "toml", "ini", "xml", "html", "css", "java", "kotlin", "c",
    "cpp", "go", "ruby", "php", "sql", "dockerfile", "nginx", "output", "log", "text",
    "powershell", "haskell", "scala", "swift", "lua", "perl", "r", "csharp", "diff",
})
ALIASES: dict[str, str | None] = {
    "py": "python", "py3": "python", "python3": "python", "ipython": "python",
    "ipython3": "python", "sh": "bash", "shell": "bash", "zsh": "bash",
    "js": "javascript", "node": "javascript", "ts": "typescript", "yml": "yaml",
    "shell-session": "console", "sh-session": "console", "shellsession": "console",
    "bash-session": "console", "terminal": "console", "c++": "cpp", "cs": "csharp",
    "rs": "rust", "golang": "go", "ps1": "powershell", "pwsh": "powershell",
    "docker": "dockerfile", "md": "markdown", "rb": "ruby", "erl": "erlang",
    "text": None, "none": None, "default": None, "plaintext": None, "plain": None,
    "txt": None, "nohighlight": None, "output": None, "log": None, "raw": None,
}

# ---- kind tables ---------------------------------------------------------------------

COMMAND_LANGUAGES = frozenset({
    "console", "pycon", "doscon", "ps1con", "pwsh-session", "powershell-session",
    "psql", "mysql-console", "irb", "gdb",
})
SHELL_LANGUAGES = frozenset({"bash", "powershell", "bat", "batch", "cmd", "fish", "csh"})
OUTPUT_HINTS = frozenset({"text", "output", "log", "plaintext", "txt", "none", "console-output"})
CONFIG_LANGUAGES = frozenset({
    "yaml", "toml", "ini", "cfg", "conf", "properties", "nginx", "apacheconf", "apache",
    "dockerfile", "json", "jsonc", "json5", "xml", "dotenv", "env", "hcl", "editorconfig",
    "gitignore", "systemd", "caddyfile", "htaccess",
})
SOURCE_LANGUAGES = frozenset({
    "python", "javascript", "typescript", "jsx", "tsx", "rust", "go", "java", "kotlin", "c",
    "cpp", "csharp", "ruby", "php", "swift", "scala", "haskell", "lua", "perl", "r", "sql",
    "html", "css", "scss", "less", "vue", "svelte", "dart", "elixir", "erlang", "clojure",
    "ocaml", "fsharp", "zig", "nim", "julia", "graphql", "cmake", "makefile", "groovy",
    "objective-c", "matlab", "vim", "diff", "proto", "protobuf", "solidity", "bash",
    "powershell", "jinja", "django", "markdown", "rst", "latex", "tex", "asm", "nasm",
    "elisp", "lisp", "scheme", "fortran", "pascal", "ada", "cobol", "octave",
})
KNOWN_CLIS = frozenset({
    "pip", "pip3", "pipx", "python", "python3", "py", "uv", "poetry", "conda", "mamba",
    "npm", "npx", "yarn", "pnpm", "bun", "deno", "node", "curl", "wget", "http", "git",
    "docker", "docker-compose", "podman", "kubectl", "helm", "minikube", "kind", "cargo",
    "rustup", "rustc", "go", "make", "cmake", "brew", "apt", "apt-get", "yum", "dnf",
    "apk", "pacman", "snap", "sudo", "gem", "bundle", "rails", "composer", "mvn", "gradle",
    "./gradlew", "dotnet", "aws", "gcloud", "az", "terraform", "ansible", "ssh", "scp",
    "cd", "ls", "mkdir", "export", "set", "source", "echo", "cat", "chmod", "cp", "mv",
    "rm", "tar", "unzip", "scrapy", "mkdocs", "sphinx-build", "sphinx-quickstart",
    "pytest", "tox", "nox", "ruff", "black", "mypy", "jq", "systemctl", "openssl",
    "gh", "hugo", "vitepress", "docusaurus", "mdbook", "javac", "java", "ninja", "meson",
})
PROMPT_RE = re.compile(r"^(\$|%|>>>|❯|PS( [^>]*)?>|[A-Za-z]:\\[^>]*>|\w+@[\w.-]+:[^$#]*[$#])\s")
COMMENT_RE = re.compile(r"^\s*(#|//|--|;|REM\b)")
CONFIG_LINE_RE = re.compile(r"^\s*(\[[\w.\- \"]+\]|[\w.\-\"]+\s*[:=](\s|$)|- [\w\"])")
SOURCE_HINT_RE = re.compile(
    r"[;{}]\s*$|^\s*(def|class|import|from|function|const|let|var|fn|pub|package|public|"
    r"private|return|if|for|while|#include|using|func)\b|\w\(|=>|->|::"
)


@dataclass(slots=True)
class CodeInfo:
    """What the markup says about one code block."""

    code: str
    language: str | None  # normalized
    raw_language: str | None  # as declared (lower case), e.g. "text", "shell-session"


def is_code_table(table: etree._Element) -> bool:
    """True for a table that lays out a line-number gutter next to code."""
    if class_tokens(table) & CODE_TABLE_CLASSES:
        return True
    for row in table.iter("tr"):
        cells = {tok for cell in row for tok in class_tokens(cell)} if len(row) else set()
        return bool(cells & GUTTER_CELL_CLASSES and cells & CODE_CELL_CLASSES)
    return False


# Code written as a `div` of per-line `div`s, without a `pre`: Doxygen's fragments
# (`div.fragment > div.line`: `\code` snippets and the source browser's `*_source.html`).
LINE_DIV_HOLDERS = frozenset({"fragment"})


def is_code_div(el: etree._Element) -> bool:
    """True for a LINE_DIV_HOLDERS `div` whose first element is a `div.line`."""
    if el.tag != "div" or not class_tokens(el) & LINE_DIV_HOLDERS:
        return False
    first = next((c for c in el if isinstance(c.tag, str)), None)
    return first is not None and first.tag == "div" and "line" in class_tokens(first)


def code_info(el: etree._Element) -> CodeInfo:
    """Exact code text and language of a `pre` or a code table."""
    source = _code_element(el)
    raw = _declared_language(el, source) or source_view_language(source)
    code = code_text(source)
    language = normalize_language(raw)
    if raw == SPHINX_DEFAULT:
        language = _sphinx_default(source, code)
    return CodeInfo(code=code, language=language, raw_language=raw)


# Sphinx's `highlight_language = "default"` (`div.highlight-default`) is Python 3, falling
# back to no highlighting when Pygments cannot lex the block; `>>>` sessions become pycon.
SPHINX_DEFAULT = "default"
_TOKEN_SPAN = etree.XPath("boolean(.//span[@class])")


def _sphinx_default(source: etree._Element, code: str) -> str | None:
    """`pycon`, `python`, or None when Pygments left the block unhighlighted."""
    if code.lstrip().startswith(">>>"):
        return "pycon"
    return "python" if _TOKEN_SPAN(source) else None


def _code_element(el: etree._Element) -> etree._Element:
    """The `pre` that holds the code (for tables: the one in the code cell)."""
    if el.tag != "table":
        return el
    pres = [pre for pre in el.iter("pre") if not _in_gutter(pre, el)]
    return pres[-1] if pres else el


def _in_gutter(pre: etree._Element, stop: etree._Element) -> bool:
    node = pre
    while node is not None and node is not stop:
        if class_tokens(node) & (GUTTER_CELL_CLASSES | CODE_CHROME_CLASSES):
            return True
        node = node.getparent()
    return False


# Elements that may be code chrome, line breaks or per-line wrappers (`_is_code_chrome`,
# `br`, LINE_CLASSES): a loose C-level test, so the common block (Pygments spans only)
# takes its text in one `itertext` call instead of a Python walk.
CODE_MARKUP_NEEDLES = ("lin", "ln", "gutter", "copy", "clipboard", "lang", "annotation",
                       "viewcode")
_MARKUP_ELEMENTS = etree.XPath(
    "boolean(.//br | .//*[@hidden] | "
    + " | ".join(f".//{tag}" for tag in sorted(CODE_CHROME_TAGS)) + ")"
)
_CLASS_VALUES = etree.XPath(".//@class", smart_strings=False)


def _maybe_code_markup(pre: etree._Element) -> bool:
    classes = " ".join(_CLASS_VALUES(pre)).lower()
    return any(needle in classes for needle in CODE_MARKUP_NEEDLES) or _MARKUP_ELEMENTS(pre)


# Class tokens inside a code element that only one generator's source view writes, and the
# one language that view shows; their markup declares none. Sphinx viewcode wraps each
# documented object of a `_modules/` page (viewcode reads Python modules only); javadoc's
# SourceToHTMLConverter numbers the lines of `src-html/` pages (Java sources only); HsColour
# and Haddock's hyperlinker (Haddock `src/` pages) write Haskell token classes.
SOURCE_VIEW_CLASSES: dict[str, str] = {
    "viewcode-block": "python", "source-line-no": "java", "sourcelineno": "java",
    **dict.fromkeys((
        "hs-keyword", "hs-comment", "hs-keyglyph", "hs-conid", "hs-varid", "hs-layout",
        "hs-identifier", "hs-glyph", "hs-pragma",
    ), "haskell"),
}


def source_view_language(source: etree._Element) -> str | None:
    """The language of a generator's source view, read from the classes inside `source`."""
    tokens = " ".join(_CLASS_VALUES(source)).lower().split()
    hits = SOURCE_VIEW_CLASSES.keys() & set(tokens)  # C-level: most blocks have none
    if not hits:
        return None
    return SOURCE_VIEW_CLASSES[next(t for t in tokens if t in hits)]


def code_text(pre: etree._Element) -> str:
    """Text of a code element exactly as shown, without gutters and buttons."""
    if not _maybe_code_markup(pre):
        text = "".join(pre.itertext())
    else:
        parts: list[str] = []
        _raw_text(pre, parts)
        text = "".join(parts)
        lines = _line_elements(pre)
        if len(lines) > 1 and text.count("\n") < len(lines) - 1:
            text = "\n".join(_line_text(line) for line in lines)
    if text.startswith("\r\n"):
        text = text[2:]
    elif text.startswith("\n"):
        text = text[1:]  # browsers drop the newline right after <pre>
    return text.rstrip("\n")


def _raw_text(el: etree._Element, parts: list[str]) -> None:
    if el.text:
        parts.append(el.text)
    for child in el:
        if isinstance(child.tag, str) and not _is_code_chrome(child):
            if child.tag == "br":
                parts.append("\n")
            else:
                _raw_text(child, parts)
        if child.tail:
            parts.append(child.tail)


def _is_code_chrome(el: etree._Element) -> bool:
    if el.tag in CODE_CHROME_TAGS or el.get("hidden") is not None:
        return True
    return bool(class_tokens(el) & CODE_CHROME_CLASSES)


def _line_elements(pre: etree._Element) -> list[etree._Element]:
    holder = pre
    if len(pre) == 1 and pre[0].tag == "code":
        holder = pre[0]
    return [c for c in holder if isinstance(c.tag, str) and class_tokens(c) & LINE_CLASSES]


def _line_text(line: etree._Element) -> str:
    parts: list[str] = []
    _raw_text(line, parts)
    return "".join(parts).rstrip("\n")


def _declared_language(el: etree._Element, source: etree._Element) -> str | None:
    """First language declared by the code element, the `pre`/`code` inside it, or its
    wrappers."""
    wrappers: list[etree._Element] = [] if source is el else [el]
    node = el.getparent()
    while node is not None and len(wrappers) < ANCESTOR_LEVELS + 1:
        wrappers.append(node)
        node = node.getparent()
    for node in _own_elements(source):
        found = _language_of(node, bare=True)
        if found is not None:
            return found
    for node in wrappers:
        found = _language_of(node, bare=False)
        if found is not None:
            return found
    return _label_language(source)


def _own_elements(source: etree._Element) -> list[etree._Element]:
    """The code element and the first `pre`/`code` elements inside it (MAX_INNER_CODE)."""
    own = [source]
    for node in source.iter("pre", "code"):
        if node is not source:
            own.append(node)
            if len(own) > MAX_INNER_CODE:
                break
    return own


# Class tokens that name their element's language outright: Redoc's JSON samples,
# gi-docgen's C declarations (`div.docblock.c-decl > pre > code`).
LANGUAGE_CLASSES = {"redoc-json": "json", "c-decl": "c"}
# Tokens that sit next to a language and are not one: rustdoc/mdBook test attributes
# (`language-rust ignore no_run edition2021`, `rust,ignore`), playground and highlighter
# markers. They never hide a language given by another token.
CODE_ATTRIBUTE_TOKENS = frozenset({
    "ignore", "no_run", "should_panic", "compile_fail", "does_not_compile", "test_harness",
    "noplayground", "noplaypen", "mdbook-runnable", "editable", "playground", "hljs",
    "hide-boring", "boring", "standalone_crate",
})
EDITION_RE = re.compile(r"^edition\d{4}$|^hidelines=")
_TOKEN_SPLIT = re.compile(r"[\s,]+")
# Languages this module knows by name: a known one wins over any unknown token. (Sets, not a
# dict's keys view: mypyc types `frozenset | dict_keys` as a frozenset, and the compiled
# build, docs/compiled.md, would fail at import.)
KNOWN_LANGUAGES = frozenset(
    set(BARE_LANGUAGES) | set(ALIASES) | SOURCE_LANGUAGES | CONFIG_LANGUAGES | COMMAND_LANGUAGES
    | SHELL_LANGUAGES
)


def _is_attribute(token: str) -> bool:
    return token in CODE_ATTRIBUTE_TOKENS or bool(EDITION_RE.match(token))


def _class_tokens(node: etree._Element) -> list[str]:
    """Class tokens in order, split on spaces and commas; SyntaxHighlighter's
    `brush: js; gutter: false` gives `brush:js`."""
    return _tokens_of(node.get("class"))


def _tokens_of(cls: str | None) -> list[str]:
    """`_class_tokens` of a class attribute's value."""
    value = (cls or "").lower()
    if "brush:" in value:
        value = _BRUSH_SPACE.sub("brush:", value).replace(";", " ")
    return [t for t in _TOKEN_SPLIT.split(value) if t]


_BRUSH_SPACE = re.compile(r"brush:\s+")


def _candidates(tag: str, cls: str | None, values: tuple[str | None, ...], *,
                bare: bool) -> list[str]:
    """Every language a node's attributes (`values`: its LANG_ATTRS) and class tokens
    name, in document order."""
    found: list[str] = []
    for attr, raw in zip(LANG_ATTRS, values, strict=True):
        value = (raw or "").strip().lower()
        if value and (attr != "lang" or tag in {"pre", "code"}):
            found.extend(t for t in _TOKEN_SPLIT.split(value) if t)
    tokens = _tokens_of(cls)
    for i, token in enumerate(tokens):
        if token in LANGUAGE_CLASSES:
            found.append(LANGUAGE_CLASSES[token])
            continue
        for prefix in LANG_PREFIXES:
            if token.startswith(prefix) and len(token) > len(prefix):
                found.append(token[len(prefix):])
                break
        else:
            if token == "sourcecode" and i + 1 < len(tokens):
                found.append(tokens[i + 1])
            elif bare and token in BARE_LANGUAGES:
                found.append(token)
            elif (known := _known_only(token)) is not None:
                found.append(known)
    return found


def _known_only(token: str) -> str | None:
    """The language after a KNOWN_ONLY_PREFIXES prefix, when it is a known one."""
    for prefix in KNOWN_ONLY_PREFIXES:
        if token.startswith(prefix) and token[len(prefix):] in KNOWN_LANGUAGES:
            return token[len(prefix):]
    return None


def _language_of(node: etree._Element, *, bare: bool) -> str | None:
    """The language a node declares: a known language first, then a known "no language"
    (`text`, `none`), else the first token that is not a test attribute."""
    cls = node.get("class")
    values = tuple(map(node.get, LANG_ATTRS))
    if cls is None and not any(values):
        return None  # nothing declared (most wrappers of a code block)
    return _declared(node.tag, cls, values, bare)


@lru_cache(maxsize=DECLARED_CACHE)
def _declared(tag: str, cls: str | None, values: tuple[str | None, ...],
              bare: bool) -> str | None:
    """`_language_of` from the attributes it reads: pure, so memoized (a site writes the
    same few code wrappers on every page)."""
    found = _candidates(tag, cls, values, bare=bare)
    if not found:
        return None
    known = [t for t in found if t in KNOWN_LANGUAGES]
    named = next((t for t in known if ALIASES.get(t, t) is not None), None)
    if named is not None or known:
        return named or known[0]  # a language before "text"/"none"
    return next((t for t in found if not _is_attribute(t)), None)


# Class tokens of a label element that shows the block's language (VitePress
# `span.lang`, other themes' `code-lang`/`language-label`), next to the `pre`.
LABEL_CLASSES = frozenset({"lang", "code-lang", "language-label", "code-language",
                           "codeblock-language", "code-block-language"})
MAX_LABEL_CHARS = 24


# Every LABEL_CLASSES token holds "lang": a C-level test over the siblings first, so a
# `pre` among thousands of siblings (Texinfo's flat `body`) is not a Python loop over them.
_MAYBE_LABEL = etree.XPath(
    "boolean(../*[@class][contains(translate(@class, 'LANG', 'lang'), 'lang')])")


def _label_language(source: etree._Element) -> str | None:
    """A known language shown by a label beside the code (a sibling of the `pre`)."""
    parent = source.getparent()
    if parent is None or not _MAYBE_LABEL(source):
        return None
    for sibling in parent:
        if sibling is source or not isinstance(sibling.tag, str):
            continue
        if class_tokens(sibling) & LABEL_CLASSES:
            text = "".join(sibling.itertext()).strip().lower()
            if text and len(text) <= MAX_LABEL_CHARS and text in KNOWN_LANGUAGES:
                return text
    return None


def normalize_language(raw: str | None) -> str | None:
    """Canonical language name (`py` -> `python`); None for text/none/default."""
    if not raw:
        return None
    name = raw.strip().lower()
    return ALIASES.get(name, name) or None


def classify_kind(
    code: str,
    language: str | None,
    raw_language: str | None = None,
    *,
    after_command: bool = False,
) -> str:
    """One of CODE_KINDS: command, output, config, source, unknown."""
    lines = [line for line in code.splitlines() if line.strip()]
    if not lines:
        return "unknown"
    raw = (raw_language or "").lower()
    if language in COMMAND_LANGUAGES or raw in COMMAND_LANGUAGES or _has_prompt(lines, language):
        return "command"
    if raw in {"output", "log", "console-output"}:
        return "output"
    shellish = language is None or language in SHELL_LANGUAGES
    if shellish and raw not in OUTPUT_HINTS and _all_cli(lines):
        return "command"
    if after_command and language is None:
        return "output"
    if language in CONFIG_LANGUAGES:
        return "config"
    if language in SOURCE_LANGUAGES:
        return "source"
    if language is not None:
        return "source"  # a declared language we do not list is still code
    if all(CONFIG_LINE_RE.match(line) or COMMENT_RE.match(line) for line in lines):
        return "config"
    if any(SOURCE_HINT_RE.search(line) for line in lines):
        return "source"
    return "unknown"


def _has_prompt(lines: list[str], language: str | None) -> bool:
    """`$ `, `>>> `, `PS>`... prompts; `# ` only before a known CLI in shell code."""
    first = lines[0].lstrip()
    if PROMPT_RE.match(first):
        return True
    if language is not None and language not in SHELL_LANGUAGES:
        return False
    words = first.split()
    return len(words) > 1 and words[0] == "#" and words[1] in KNOWN_CLIS


def _all_cli(lines: list[str]) -> bool:
    """Every non-comment line starts with a known command-line tool."""
    commands = [line for line in lines if not COMMENT_RE.match(line)]
    if not commands:
        return False
    previous_continues = False
    for line in commands:
        if previous_continues:
            previous_continues = line.rstrip().endswith(("\\", "`", "^"))
            continue
        words = line.split()
        word = words[1] if words[0] == "sudo" and len(words) > 1 else words[0]
        if word not in KNOWN_CLIS:
            return False
        previous_continues = line.rstrip().endswith(("\\", "`", "^"))
    return True


# ---- what the markup names, read independently of `code_info` --------------------------

# A class token that names a language by a prefix (`language-rust`, `highlight-python3`,
# `lang-go`, `brush-js`, `sourcecode-haskell`).
NAMING_CLASS = re.compile(r"^(?:language|lang|highlight|brush|sourcecode)[-:_]([\w+#.-]+)$")
NAMING_ATTRS = ("data-lang", "data-language")
NOT_LANGUAGES = frozenset({"default", "none", "text", "plain", "plaintext", "txt",
                           "nohighlight", "output", "notranslate", "raw", "log"})


def named_language(el: etree._Element) -> str | None:
    """The markup that names a language for the code element `el` (a class token or an
    attribute, as written), looked for on `el`, the `pre`/`code` inside it and its
    wrappers up to ANCESTOR_LEVELS; None when nothing names one.

    A second reading, broader and simpler than `code_info`'s: the renderer warns
    (`code_language_unread`) when this names a language and `code_info` found none, so
    `docscrawl check` counts the blocks whose language the markup states but the record
    lacks."""
    source = _code_element(el)
    nodes = _own_elements(source)
    if source is not el:
        nodes.append(el)
    node = el.getparent()
    for _ in range(ANCESTOR_LEVELS):
        if node is None:
            break
        nodes.append(node)
        node = node.getparent()
    for node in nodes:
        for attr in NAMING_ATTRS:
            value = (node.get(attr) or "").strip().lower()
            if value and value not in NOT_LANGUAGES:
                return f'{attr}="{value}"'
        for token in _class_tokens(node):
            if token in LANGUAGE_CLASSES:
                return token
            match = NAMING_CLASS.match(token)
            name = match.group(1) if match else _known_only(token)
            if (name and name not in NOT_LANGUAGES and not _is_attribute(name)
                    and ALIASES.get(name, name) is not None):
                return token
    return None
