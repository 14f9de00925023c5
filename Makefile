# docscrawl: `make demo` crawls the bundled demo site; `make test` sets up and runs the tests.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: setup system-deps demo test lint clean

# Debian packages the full test suite uses (root): real generator output to crawl,
# Chromium for rendering, Redis for distributed crawls.
SYSTEM_PACKAGES := python-scrapy-doc python-pytest-doc chromium redis-server

$(BIN)/python:
	@$(PYTHON) -c 'import ensurepip' 2>/dev/null || { command -v apt-get >/dev/null && \
	  apt-get update -qq && apt-get install -y -qq python3-venv; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -U pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e '.[test,ops]'
	@touch $@

setup: $(VENV)/.installed

system-deps:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 $(SYSTEM_PACKAGES)

demo: setup
	$(BIN)/python -m docscrawl.demo

test: setup
	$(BIN)/python -m pytest -q

lint: setup
	$(BIN)/ruff check docscrawl tests

clean:
	rm -rf output build *.egg-info
