"""Generate a deterministic documentation site of N pages for the scale benchmark.

    python benchmarks/scale/gensite.py OUT_DIR --n 2000 [--seed 8] [--origin http://127.0.0.1:8080]

Pages look like the Python documentation (Sphinx, classic "pydoctheme"): a header bar with
breadcrumbs and prev/next, a main body with headings down to h4, paragraphs with inline
code and cross-references, code blocks with language classes, tables and admonitions, a
sidebar of 50 site links plus the page's local table of contents (fragment links), and a
footer bar repeating the navigation. About 190 `<a>` per page (40% of them fragment
links), ~54 KB of HTML.

Layout: `index.html`, then sections of 100 pages, `request-request/index.html`,
`request-request/request-request-response.html` ...: paths are words, never digit runs
(docscrawl's trap guard caps URLs that differ only in numbers at 1,000). Every page is
reachable by links alone (prev/next chain the whole site; sidebars and section indexes
shorten the depth). `sitemap.xml` lists every page and
`robots.txt` names it; both need absolute URLs, so they are written for one origin by
`write_site_files` (the runner calls it again once it knows the server's port).

Same N and seed, same bytes: `random.Random(seed * 1_000_003 + page)` drives each page.
"""

from __future__ import annotations

import argparse
import html
import json
import random
from pathlib import Path

SECTION_SIZE = 100  # pages per section, its index included
SIDEBAR_LINKS = 50
STAMP = ".gensite.json"
_VOCABULARY = (
    "request response parser module function argument default value return raise error "
    "encoder decoder stream buffer socket thread process event loop handler callback "
    "object instance attribute method class type string bytes integer float list tuple "
    "mapping sequence iterator generator context manager protocol interface option flag "
    "configuration setting environment path file directory archive format encoding "
    "timeout retry connection session cookie header body status cache index schema "
    "record field column table query cursor transaction commit rollback lock queue "
    "signal logging level message format filter record traceback warning deprecated "
    "platform version release feature support compatible behaviour example note see also"
)
WORDS = tuple(dict.fromkeys(_VOCABULARY.split()))  # unique: slugs must not collide
TOPICS = (
    "Basic usage", "Installation", "Configuration", "Command line interface", "Examples",
    "Reference", "Exceptions", "Encoders and decoders", "Performance", "Security",
    "Compatibility", "Advanced topics", "Migration guide", "Frequently asked questions",
    "Data model", "Customising behaviour", "Thread safety", "Logging", "Testing",
)
LANGUAGES = ("python3", "pycon", "shell", "json", "ini", "c", "yaml")
CODE_SAMPLES = {
    "python3": (
        '<span class="kn">import</span> <span class="nn">{m}</span>\n'
        '<span class="n">data</span> <span class="o">=</span> <span class="n">{m}</span>'
        '<span class="o">.</span><span class="n">{f}</span><span class="p">(</span>'
        '<span class="s1">&#39;{w}&#39;</span><span class="p">,</span> '
        '<span class="n">{a}</span><span class="o">=</span><span class="kc">True</span>'
        '<span class="p">)</span>\n'
        '<span class="k">for</span> <span class="n">item</span> <span class="ow">in</span> '
        '<span class="n">data</span><span class="p">:</span>\n'
        '    <span class="nb">print</span><span class="p">(</span><span class="n">item</span>'
        '<span class="p">)</span>\n'
    ),
    "pycon": (
        '<span class="gp">&gt;&gt;&gt; </span><span class="kn">import</span> '
        '<span class="nn">{m}</span>\n'
        '<span class="gp">&gt;&gt;&gt; </span><span class="n">{m}</span><span class="o">.'
        '</span><span class="n">{f}</span><span class="p">(</span><span class="mi">42'
        '</span><span class="p">)</span>\n<span class="go">&#39;{w}&#39;</span>\n'
    ),
    "shell": '<span class="gp">$ </span>python -m {m} --{a} {w}.txt\n{w}: ok\n',
    "json": '<span class="p">{{</span><span class="nt">&quot;{a}&quot;</span><span class="p">:'
            '</span> <span class="s2">&quot;{w}&quot;</span><span class="p">}}</span>\n',
    "ini": '<span class="k">[{m}]</span>\n<span class="na">{a}</span> <span class="o">=</span>'
           ' <span class="s">{w}</span>\n',
    "c": '<span class="kt">int</span> <span class="nf">{f}</span><span class="p">(</span>'
         '<span class="kt">void</span><span class="p">)</span> <span class="p">{{</span> '
         '<span class="k">return</span> <span class="mi">0</span><span class="p">;</span> '
         '<span class="p">}}</span>\n',
    "yaml": '<span class="nt">{a}</span><span class="p">:</span> <span class="l">{w}</span>\n',
}


def slug(number: int, words: int) -> str:
    """`number` spelled as `words` vocabulary words (mixed radix): no digits in URLs."""
    parts = []
    for _ in range(words):
        number, digit = divmod(number, len(WORDS))
        parts.append(WORDS[digit])
    return "-".join(reversed(parts))


def page_path(i: int) -> str:
    """Site-relative file path of page i (0 is the site index)."""
    if i == 0:
        return "index.html"
    section, within = divmod(i - 1, SECTION_SIZE)
    folder = slug(section, 2)
    return f"{folder}/index.html" if within == 0 else f"{folder}/{slug(i, 3)}.html"


def url_path(i: int) -> str:
    """The URL path of page i, as links and the sitemap write it."""
    path = page_path(i)
    if path == "index.html" or path.endswith("/index.html"):  # "index" is also a slug word
        path = path[: -len("index.html")]
    return "/" + path


def title_of(i: int) -> str:
    if i == 0:
        return "Documentation"
    section, within = divmod(i - 1, SECTION_SIZE)
    name = WORDS[(section * 7) % len(WORDS)]
    if within == 0:
        return f"{name.capitalize()} services"
    return f"{name}{within} — {WORDS[(i * 13) % len(WORDS)]} {WORDS[(i * 31) % len(WORDS)]}"


def href(frm: int, to: int) -> str:
    """A relative link from page `frm` to page `to`, as Sphinx writes them."""
    return ("../" if "/" in page_path(frm) else "") + url_path(to).lstrip("/") or "./"


class Page:
    """Builds one page's HTML from a per-page random generator."""

    def __init__(self, i: int, n: int, seed: int) -> None:
        self.i, self.n = i, n
        self.rng = random.Random(seed * 1_000_003 + i)
        self.toc: list[tuple[int, str, str]] = []  # (level, id, text)
        self.module = f"{WORDS[i % len(WORDS)]}{i}"

    def words(self, lo: int, hi: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(lo, hi)))

    def xref(self) -> str:
        """An inline cross-reference to another page, sometimes to an anchor in it."""
        to = self.rng.randrange(self.n)
        anchor = ""
        if self.rng.random() < 0.5:
            anchor = f"#{self.rng.choice(WORDS)}-{self.rng.randint(1, 9)}"
        return (f'<a class="reference internal" href="{href(self.i, to)}{anchor}">'
                f'<code class="xref py py-func docutils literal notranslate"><span class="pre">'
                f'{self.rng.choice(WORDS)}()</span></code></a>')

    def paragraph(self) -> str:
        parts = []
        for _ in range(self.rng.randint(3, 6)):
            sentence = self.words(8, 20).capitalize()
            roll = self.rng.random()
            if roll < 0.4:
                sentence += " " + self.xref()
            elif roll < 0.6:
                sentence += (f' <code class="docutils literal notranslate"><span class="pre">'
                             f'{self.rng.choice(WORDS)}</span></code>')
            parts.append(sentence + ".")
        return f"<p>{' '.join(parts)}</p>\n"

    def code_block(self) -> str:
        lang = self.rng.choice(LANGUAGES)
        lines = "".join(
            CODE_SAMPLES[lang].format(m=self.module, f=self.rng.choice(WORDS),
                                      w=self.rng.choice(WORDS), a=self.rng.choice(WORDS))
            for _ in range(self.rng.randint(1, 3))
        )
        return (f'<div class="highlight-{lang} notranslate"><div class="highlight">'
                f'<pre><span></span>{lines}</pre></div>\n</div>\n')

    def table(self) -> str:
        rows = "".join(
            f'<tr class="row-{"odd" if r % 2 else "even"}"><td><p><code class="docutils literal'
            f' notranslate"><span class="pre">{self.rng.choice(WORDS)}</span></code></p></td>'
            f"<td><p>{self.words(3, 8)}</p></td><td><p>{self.rng.randint(0, 999)}</p></td></tr>\n"
            for r in range(self.rng.randint(3, 8))
        )
        return ('<table class="docutils align-default">\n<thead><tr class="row-odd">'
                '<th class="head"><p>Name</p></th><th class="head"><p>Meaning</p></th>'
                f'<th class="head"><p>Default</p></th></tr></thead>\n<tbody>\n{rows}</tbody>\n'
                "</table>\n")

    def heading(self, level: int, text: str) -> tuple[str, str]:
        ident = f"{text.lower().replace(' ', '-')}-{len(self.toc)}"
        self.toc.append((level, ident, text))
        return ident, (f'<h{level}>{html.escape(text)}<a class="headerlink" href="#{ident}" '
                       f'title="Permalink to this heading">¶</a></h{level}>\n')

    def block(self) -> str:
        roll = self.rng.random()
        if roll < 0.45:
            return self.paragraph()
        if roll < 0.7:
            return self.code_block()
        if roll < 0.82:
            return self.table()
        if roll < 0.92:
            kind = self.rng.choice(("note", "warning", "seealso"))
            return (f'<div class="admonition {kind}">\n<p class="admonition-title">'
                    f"{kind.capitalize()}</p>\n{self.paragraph()}</div>\n")
        items = "".join(f"<li><p>{self.words(4, 12)}</p></li>\n" for _ in range(4))
        return f'<ul class="simple">\n{items}</ul>\n'

    def body(self) -> str:
        out = [f'<section id="{self.module}">\n']
        _, h1 = self.heading(1, title_of(self.i))
        out += [h1, self.paragraph(), self.paragraph()]
        for topic in self.rng.sample(TOPICS, self.rng.randint(4, 6)):
            ident, h2 = self.heading(2, topic)
            out += [f'<section id="{ident}">\n', h2, self.block(), self.block()]
            for _ in range(self.rng.randint(2, 3)):
                sub_ident, h3 = self.heading(3, self.words(2, 4).capitalize())
                out += [f'<section id="{sub_ident}">\n', h3, self.block(), self.block()]
                if self.rng.random() < 0.5:
                    h4_ident, h4 = self.heading(4, self.words(2, 3).capitalize())
                    out += [f'<section id="{h4_ident}">\n', h4, self.block(), "</section>\n"]
                out.append("</section>\n")
            out.append("</section>\n")
        if self.i and page_path(self.i).endswith("index.html"):  # a section index: its toctree
            first = self.i + 1
            last = min(self.i + SECTION_SIZE - 1, self.n - 1)
            items = "".join(
                f'<li class="toctree-l1"><a class="reference internal" href="{href(self.i, j)}">'
                f"{html.escape(title_of(j))}</a></li>\n" for j in range(first, last + 1)
            )
            out.append(f'<div class="toctree-wrapper compound">\n<ul>\n{items}</ul>\n</div>\n')
        out.append("</section>\n")
        return "".join(out)

    def sidebar_links(self) -> list[int]:
        """50 site links: the site index, nearby sections, nearby pages of this section."""
        sections = (self.n - 2) // SECTION_SIZE + 1
        here = (max(self.i, 1) - 1) // SECTION_SIZE
        lo = max(0, min(here - 7, sections - 15))
        picks = [0] + [1 + s * SECTION_SIZE for s in range(lo, min(sections, lo + 15))]
        start = 1 + here * SECTION_SIZE
        pages = [j for j in range(start + 1, min(start + SECTION_SIZE, self.n))]
        centre = max(0, min(pages.index(self.i) - 17 if self.i in pages else 0,
                            len(pages) - (SIDEBAR_LINKS - len(picks))))
        picks += pages[centre:centre + SIDEBAR_LINKS - len(picks)]
        return [p for p in dict.fromkeys(picks) if p < self.n]

    def crumbs(self) -> list[int]:
        if self.i == 0:
            return []
        section_index = 1 + (self.i - 1) // SECTION_SIZE * SECTION_SIZE
        return [0] if section_index == self.i else [0, section_index]

    def nav_bar(self, prev: int | None, nxt: int | None, *, aria: str) -> str:
        items = [f'<li class="right" style="margin-right: 10px"><a href="{href(self.i, 0)}" '
                 f'title="General Index" accesskey="I">index</a></li>']
        if nxt is not None:
            items.append(f'<li class="right"><a href="{href(self.i, nxt)}" title="'
                         f'{html.escape(title_of(nxt))}" accesskey="N">next</a> |</li>')
        if prev is not None:
            items.append(f'<li class="right"><a href="{href(self.i, prev)}" title="'
                         f'{html.escape(title_of(prev))}" accesskey="P">previous</a> |</li>')
        items.append('<li><img src="/_static/py.svg" alt="logo" style="vertical-align: middle;'
                     ' margin-top: -1px"/></li><li><a href="https://www.python.org/">Python</a>'
                     " &#187;</li>")
        for c in self.crumbs():
            items.append(f'<li class="nav-item"><a href="{href(self.i, c)}">'
                         f"{html.escape(title_of(c))}</a> &#187;</li>")
        items.append(f'<li class="nav-item nav-item-this"><a href="">'
                     f"{html.escape(title_of(self.i))}</a></li>")
        return (f'<div class="related" role="navigation" aria-label="{aria}">\n<h3>Navigation</h3>'
                f"\n<ul>\n{''.join(x + chr(10) for x in items)}</ul>\n</div>\n")

    def local_toc(self) -> str:
        out, depth = [], 1
        for level, ident, text in self.toc:
            while depth < level:
                out.append("<ul>\n")
                depth += 1
            while depth > level:
                out.append("</ul>\n")
                depth -= 1
            out.append(f'<li><a class="reference internal" href="#{ident}">'
                       f"{html.escape(text)}</a></li>\n")
        out.append("</ul>\n" * (depth - 1))
        return f"<ul>\n{''.join(out)}</ul>\n"

    def render(self) -> str:
        prev = self.i - 1 if self.i > 0 else None
        nxt = self.i + 1 if self.i + 1 < self.n else None
        body = self.body()  # fills self.toc
        title = html.escape(title_of(self.i))
        head_links = [f'<link rel="index" title="Index" href="{href(self.i, 0)}" />']
        if nxt is not None:
            head_links.append(f'<link rel="next" title="{html.escape(title_of(nxt))}" '
                              f'href="{href(self.i, nxt)}" />')
        if prev is not None:
            head_links.append(f'<link rel="prev" title="{html.escape(title_of(prev))}" '
                              f'href="{href(self.i, prev)}" />')
        sidebar = "".join(
            f'<li class="toctree-l1{" current" if j == self.i else ""}"><a class="reference '
            f'internal" href="{href(self.i, j)}">{html.escape(title_of(j))}</a></li>\n'
            for j in self.sidebar_links()
        )
        prev_next = ""
        if prev is not None:
            prev_next += (f'<div><h4>Previous topic</h4><p class="topless"><a href="'
                          f'{href(self.i, prev)}" title="previous chapter">'
                          f"{html.escape(title_of(prev))}</a></p></div>\n")
        if nxt is not None:
            prev_next += (f'<div><h4>Next topic</h4><p class="topless"><a href="'
                          f'{href(self.i, nxt)}" title="next chapter">'
                          f"{html.escape(title_of(nxt))}</a></p></div>\n")
        return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1.0" />
<meta name="generator" content="Docutils 0.19: https://docutils.sourceforge.io/" />
<title>{title} &#8212; Scale 3.11 documentation</title>
<link rel="stylesheet" type="text/css" href="/_static/pygments.css" />
<link rel="stylesheet" type="text/css" href="/_static/pydoctheme.css?2022.1" />
<script data-url_root="../" id="documentation_options" src="/_static/documentation_options.js">
</script>
<script src="/_static/doctools.js"></script>
<script src="/_static/sphinx_highlight.js"></script>
<link rel="search" title="Search" href="/search.html" />
{chr(10).join(head_links)}
</head>
<body>
<div class="mobile-nav"><nav class="menu" role="navigation" aria-label="main navigation">
<h3><a href="{href(self.i, 0)}">Table of Contents</a></h3>
{self.local_toc()}</nav></div>
{self.nav_bar(prev, nxt, aria="related navigation")}
<div class="document">
<div class="documentwrapper">
<div class="bodywrapper">
<div class="body" role="main">
{body}
<div class="clearer"></div>
</div>
</div>
</div>
<div class="sphinxsidebar" role="navigation" aria-label="main navigation">
<div class="sphinxsidebarwrapper">
<div>
<h3><a href="{href(self.i, 0)}">Table of Contents</a></h3>
{self.local_toc()}
</div>
<div>
<h3>Site</h3>
<ul class="current">
{sidebar}</ul>
</div>
{prev_next}<div role="note" aria-label="source link">
<h3>This Page</h3>
<ul class="this-page-menu">
<li><a href="https://github.com/example/scale/issues">Report a Bug</a></li>
</ul>
</div>
</div>
</div>
<div class="clearer"></div>
</div>
{self.nav_bar(prev, nxt, aria="related navigation")}
<div class="footer">&copy; Copyright 2001-2026, Example Software Foundation.
<br />Last updated on Nov 29, 2026. <a href="/bugs.html">Found a bug</a>?
<br />Created using <a href="https://www.sphinx-doc.org/">Sphinx</a> 5.3.0.</div>
</body>
</html>
"""


def generate(out: Path, n: int, *, seed: int = 8) -> int:
    """Write n pages into `out` (skipped when a stamp says they are already there)."""
    stamp = out / STAMP
    want = {"n": n, "seed": seed, "version": 3}
    if stamp.exists() and json.loads(stamp.read_text()) == want:
        return 0
    out.mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)
    written = 0
    for i in range(n):
        path = out / page_path(i)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Page(i, n, seed).render(), encoding="utf-8")
        written += 1
    stamp.write_text(json.dumps(want))
    return written


def write_site_files(out: Path, n: int, origin: str) -> None:
    """robots.txt (naming the sitemap) and sitemap.xml with absolute URLs for `origin`."""
    origin = origin.rstrip("/")
    (out / "robots.txt").write_text(
        f"User-agent: *\nDisallow: /search.html\n\nSitemap: {origin}/sitemap.xml\n",
        encoding="utf-8")
    with (out / "sitemap.xml").open("w", encoding="utf-8") as handle:
        handle.write('<?xml version="1.0" encoding="UTF-8"?>\n'
                     '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n')
        for i in range(n):
            handle.write(f"<url><loc>{origin}{url_path(i)}</loc>"
                         f"<lastmod>2026-11-{1 + i % 28:02d}</lastmod></url>\n")
        handle.write("</urlset>\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--origin", default="http://127.0.0.1:8080")
    args = parser.parse_args(argv)
    written = generate(args.out, args.n, seed=args.seed)
    write_site_files(args.out, args.n, args.origin)
    print(f"{args.out}: {args.n} pages ({written} written), sitemap for {args.origin}")


if __name__ == "__main__":
    main()
