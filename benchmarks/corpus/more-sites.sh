#!/usr/bin/env bash
# More real documentation sites, of generator families ../shared/corpus/real-sites.sh lacks,
# BUILT here by the generators the registries ship (pip, apt) from real sources installed by
# Debian packages, and served on 127.0.0.1 (ports 17140-17159) beside the 23 corpus sites.
#
#   more-sites.sh start     install what is missing (root), build every site not yet built,
#                           serve them; prints one "name URL" line per site
#   more-sites.sh stop      stop the server this script started
#   more-sites.sh list      the sites: name, URL, status (built/unbuilt, installed/missing),
#                           generator
#   more-sites.sh build     install and build only
#
# Builds and the build venv live under $MORE_SITES_DIR (default /tmp/docscrawl-more-sites);
# `rm -rf` it to rebuild. Never commit what it builds: it is corpus HTML.
set -euo pipefail
RUN=${MORE_SITES_DIR:-/tmp/docscrawl-more-sites}
BUILD=$RUN/build
VENV=$RUN/venv
# Pinned so every machine builds the same pages (Flask and Werkzeug for autodoc of flask-docs'
# API page; Requests is the one Sphinx pulls in, newer than the 2.28.1 sources).
PIP_PKGS="sphinx==9.0.4 furo==2025.12.19 sphinx-book-theme==1.4.0 sphinx-tabs
  mkdocs==1.6.1 mkdocs-material==9.8.2 mike==2.2.0 flask==2.2.2 werkzeug==2.2.3"
APT_PKGS="nginx git python3-venv python-flask-doc python-requests-doc nodejs
  libcommons-lang3-java-doc ruby git-doc asciidoc-base docbook-xsl docbook-xml xsltproc"
# name | port | mount path | start page (under the mount) | HTML root (built: under $BUILD) | generator
SITES="
furo-flask|17140|/en/2.2.x/||@furo-flask|sphinx (Furo theme), Flask 2.2.2's reST from python-flask-doc
book-requests|17141|/en/2.28/||@book-requests|sphinx (Book theme), Requests 2.28.1's reST from python-requests-doc
material-node|17142|/||@material-node|mkdocs-material with versions by mike, Node.js's API Markdown from nodejs
docbook-gitman|17143|/docs/user-manual/||@docbook-gitman|docbook-xsl chunked HTML of Git's user manual (asciidoc -b docbook)
javadoc-lang3|17144|/commons-lang3/apidocs/||/usr/share/doc/libcommons-lang3-java/api|javadoc (JDK 17), libcommons-lang3-java-doc
rdoc-ruby|17145|/ruby/3.1/||@rdoc-ruby|rdoc (darkfish), Ruby 3.1's standard library sources (package ruby3.1)
nodejs-api|17146|/api/||/usr/share/doc/nodejs/api|node's doc tool (tools/doc), the nodejs package
"
rows() { echo "$SITES" | sed '/^$/d'; }
root_of() { case "$1" in @*) echo "$BUILD/${1#@}" ;; *) echo "$1" ;; esac; }
pkgver() { dpkg-query -W -f='${Version}' "$1" | sed 's/[-+~].*//'; }

install() {
  missing=$(for p in $APT_PKGS; do dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null \
    | grep -q '^install ok installed' || echo "$p"; done)
  if [ -n "$missing" ]; then
    [ "$(id -u)" = 0 ] || { echo "more-sites: need root to apt-get install: $missing" >&2; exit 1; }
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      -o DPkg::Lock::Timeout=600 $missing
  fi
  if [ ! -x "$VENV/bin/sphinx-build" ] || [ ! -x "$VENV/bin/mike" ]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q $PIP_PKGS
  fi
}

# Sphinx sources from a Sphinx-built Debian package: its `_sources/*.rst.txt` are the
# project's own reST, renamed back to `.rst`.
sphinx_sources() {  # html dir, dest
  rm -rf "$2" && cp -r "$1/_sources" "$2"
  find "$2" -name '*.rst.txt' | while read -r f; do mv "$f" "${f%.txt}"; done
  [ -d "$1/_images" ] && cp -r "$1/_images" "$2/_images"
  true
}

sphinx_site() {  # name, html dir of the package, project, release, theme
  local src=$RUN/src/$1 out=$BUILD/$1
  sphinx_sources "$2" "$src"
  cat >"$src/conf.py" <<EOF
project = "$3"
release = version = "$4"
extensions = ["sphinx.ext.autodoc", "sphinx_tabs.tabs"]
html_theme = "$5"
html_title = "$3 $4 documentation"
pygments_style = "sphinx"
EOF
  rm -rf "$out"
  "$VENV/bin/sphinx-build" -q -b html "$src" "$out" 2>"$RUN/logs/$1.log" || true
  echo "built $1: $(find "$out" -name '*.html' | wc -l) pages ($(grep -c WARNING "$RUN/logs/$1.log" || true) warnings)"
}

build_furo_flask() {
  sphinx_site furo-flask /usr/share/doc/python-flask-doc/html Flask "$(pkgver python-flask-doc)" furo
}

build_book_requests() {
  sphinx_site book-requests /usr/share/doc/python-requests-doc/html Requests \
    "$(pkgver python-requests-doc)" sphinx_book_theme
}

# Node.js's API reference Markdown (shipped beside its HTML by the nodejs package) as an
# MkDocs Material site, deployed by mike as version N.M with the alias `latest`, from a
# throwaway git repository (mike writes to its gh-pages branch), then checked out to serve.
# The highlight options are the ones Material's "Code blocks" setup page gives.
# Pages are `fs.html`, not `fs/`: the Markdown links them so, as Node's own tool writes them.
build_material_node() {
  local src=$RUN/src/material-node out=$BUILD/material-node ver
  ver=$(pkgver nodejs | cut -d. -f1-2)
  rm -rf "$src" "$out" && mkdir -p "$src/docs"
  cp /usr/share/doc/nodejs/api/*.md "$src/docs/"
  cat >"$src/mkdocs.yml" <<EOF
site_name: Node.js $ver documentation
use_directory_urls: false
theme:
  name: material
  features: [navigation.sections]
extra:
  version:
    provider: mike
markdown_extensions:
  - admonition
  - attr_list
  - toc
  - pymdownx.highlight: {anchor_linenums: true, line_spans: __span, pygments_lang_class: true}
  - pymdownx.inlinehilite
  - pymdownx.superfences
validation: {nav: {omitted_files: ignore, not_found: ignore}, links: {not_found: ignore, anchors: ignore, unrecognized_links: ignore}}
EOF
  (
    cd "$src"
    git init -q -b main . && git -c user.name=corpus -c user.email=corpus@localhost add -A
    git -c user.name=corpus -c user.email=corpus@localhost commit -q -m "Node.js $ver API docs"
    export GIT_COMMITTER_NAME=corpus GIT_COMMITTER_EMAIL=corpus@localhost PATH="$VENV/bin:$PATH"
    "$VENV/bin/mike" -q deploy --update-aliases "$ver" latest 2>"$RUN/logs/material-node.log"
    "$VENV/bin/mike" -q set-default latest 2>>"$RUN/logs/material-node.log"
    git worktree add -q "$out" gh-pages
  )
  echo "built material-node: $(find "$out" -name '*.html' | wc -l) pages (version $ver, alias latest)"
}

# Git's user manual, written in AsciiDoc and shipped by git-doc, converted as Git's own
# Makefile does (asciidoc -b docbook -d book), then chunked by docbook-xsl's chunk.xsl.
build_docbook_gitman() {
  local src=$RUN/src/docbook-gitman out=$BUILD/docbook-gitman
  rm -rf "$src" "$out" && mkdir -p "$src" "$out"
  cp /usr/share/doc/git-doc/user-manual.txt "$src/"
  /usr/bin/python3 -m asciidoc -b docbook -d book -o "$src/user-manual.xml" "$src/user-manual.txt" \
    2>"$RUN/logs/docbook-gitman.log" || true
  xsltproc --nonet --stringparam base.dir "$out/" --stringparam use.id.as.filename 1 \
    /usr/share/xml/docbook/stylesheet/docbook-xsl/html/chunk.xsl "$src/user-manual.xml" \
    >>"$RUN/logs/docbook-gitman.log" 2>&1
  echo "built docbook-gitman: $(find "$out" -name '*.html' | wc -l) pages"
}

# RDoc's own darkfish HTML of part of Ruby's standard library (the sources the ruby3.1
# package installs, their comments are the documentation), as ruby-doc.org builds it.
build_rdoc_ruby() {
  local out=$BUILD/rdoc-ruby ver
  ver=$(ruby -e 'print RUBY_VERSION')
  rm -rf "$out"
  (cd /usr/lib/ruby/3.1.0 && rdoc -q -o "$out" --title "Ruby $ver Standard Library Documentation" \
    optparse.rb set.rb ostruct.rb erb.rb erb pp.rb prettyprint.rb tsort.rb shellwords.rb \
    fileutils.rb find.rb forwardable.rb logger.rb logger pstore.rb >"$RUN/logs/rdoc-ruby.log" 2>&1)
  echo "built rdoc-ruby: $(find "$out" -name '*.html' | wc -l) pages"
}

build() {
  mkdir -p "$BUILD" "$RUN/src" "$RUN/logs"
  install
  rows | while IFS='|' read -r name port path first root gen; do
    case "$root" in @*) [ -f "$(root_of "$root")/index.html" ] || "build_${name//-/_}" ;; esac
  done
}

start() {
  build
  mkdir -p "$RUN/logs" "$RUN/tmp"
  conf=$RUN/nginx.conf
  {
    echo "worker_processes 1; pid $RUN/nginx.pid; error_log $RUN/logs/error.log;"
    echo "events { worker_connections 1024; }"
    echo "http { include /etc/nginx/mime.types; access_log $RUN/logs/access.log;"
    echo "  client_body_temp_path $RUN/tmp; proxy_temp_path $RUN/tmp; fastcgi_temp_path $RUN/tmp;"
    echo "  uwsgi_temp_path $RUN/tmp; scgi_temp_path $RUN/tmp;"
    rows | while IFS='|' read -r name port path first root gen; do
      root=$(root_of "$root")
      [ -d "$root" ] || continue
      if [ "$path" = / ]; then loc="location / { root $root; }"
      else loc="location $path { alias $root/; }"; fi
      echo "  server { listen 127.0.0.1:$port; $loc }"
    done
    echo "}"
  } >"$conf"
  nginx -c "$conf"
  rows | while IFS='|' read -r name port path first root gen; do
    [ -d "$(root_of "$root")" ] && echo "$name http://127.0.0.1:$port$path$first"
  done
}

stop() { [ -f "$RUN/nginx.pid" ] && kill "$(cat "$RUN/nginx.pid")" && rm -f "$RUN/nginx.pid"; true; }

list() {
  rows | while IFS='|' read -r name port path first root gen; do
    case "$root" in
      @*) state=unbuilt; [ -f "$(root_of "$root")/index.html" ] && state=built ;;
      *) state=missing; [ -d "$root" ] && state=installed ;;
    esac
    printf '%-12s %-40s %-10s %s\n' "$name" "http://127.0.0.1:$port$path$first" "$state" "$gen"
  done
}

case "${1:-}" in start|stop|list|build) "$1" ;; *) sed -n '2,14p' "$0"; exit 2 ;; esac
