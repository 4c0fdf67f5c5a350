# The two commands: `make run` and `make test`. Each sets itself up from a clean clone.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
PORT ?= 8501

export STREAMLIT_BROWSER_GATHER_USAGE_STATS := false

.PHONY: run test test-fast test-lowest bench setup setup-dev browser clean samples schema golden screenshots

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q -e '.[app]'
	touch $@

$(DEV_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP) $@

setup: $(STAMP)
setup-dev: $(DEV_STAMP)

browser:
	@command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || { \
	  echo "Installing Debian's chromium for the browser tests…"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

# The store of `make run` lives in the repository (.workbench/, git-ignored) unless WORKBENCH_HOME is set;
# the samples are imported idempotently (same content hash -> not stored again).
run: export WORKBENCH_HOME ?= $(CURDIR)/.workbench
run: setup
	$(VENV)/bin/workbench import sample_sessions/*.jsonl --quiet
	-$(VENV)/bin/workbench replay --defaults
	$(VENV)/bin/workbench run --port $(PORT)

# Static checks first (ruff's default rules, types, layering: docs/architecture.md), then the tests on
# two workers (pytest-xdist; the machine has two cores): about 7 minutes instead of 10 in one process.
test: setup-dev browser
	$(VENV)/bin/ruff check .
	$(VENV)/bin/basedpyright
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q -p no:cacheprovider -n 2

# The quick loop while editing (under a minute): no browser, no servers, processes or kernels.
test-fast: setup-dev
	$(PY) -m pytest -q -p no:cacheprovider -n 2 -m "not slow and not browser"

# Every dependency at the lowest version pyproject.toml allows, in a fresh venv (installs from the
# package registry), running a smoke subset: the lower bounds are versions the code runs on.
test-lowest: setup-dev
	$(PY) scripts/lowest_deps.py

# The bench extra (a peer tool measured against ours) is installed by `make bench` only.
BENCH_STAMP := $(VENV)/.installed-bench
$(BENCH_STAMP): pyproject.toml | $(DEV_STAMP)
	$(PY) -m pip install -q -e '.[bench]'
	touch $@

bench: setup-dev $(BENCH_STAMP)
	$(PY) bench/run.py

samples: setup
	$(PY) scripts/generate_samples.py

schema: setup
	$(PY) scripts/write_schema.py

golden: setup
	$(PY) scripts/regenerate_golden.py

screenshots: setup-dev browser
	$(PY) scripts/screenshots.py

clean:
	rm -rf $(VENV) .workbench .pytest_cache
