# make serve: set everything up and open the explorer on the built-in demo
# make test:  set everything up, lint, and run the whole suite (on two workers, a file each; JOBS=0: one process)
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
CHROMIUM ?= /usr/bin/chromium
# pytest-xdist workers of make test (0: one process); a test file stays on one worker, so its
# module fixtures are built once
JOBS    ?= 2

.PHONY: serve test lint format bench screenshots clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m engine.warm
	touch $(STAMP)

serve: $(STAMP)
	$(VENV)/bin/meshscope serve

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

test: lint
	@test -x $(CHROMIUM) || { echo "Chromium is missing at $(CHROMIUM): run 'apt-get install -y chromium' (the browser tests need it; .ci/run installs it)"; exit 1; }
	$(PY) -m pytest -n $(JOBS) --dist loadfile

# make bench: every benchmark and paper script in full (hours: BENCH="evaluate simulate" runs some), then the
# docs' tables from their results; BOOKSIM=/path/to/booksim adds BookSim2 beside the simulator
BENCH ?= $(filter-out common report,$(basename $(notdir $(wildcard benchmarks/*.py))))
bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,bench]'
	set -e; for b in $(BENCH); do echo "== $$b"; $(PY) benchmarks/$$b.py > /dev/null; done
	set -e; for p in benchmarks/papers/*.py; do echo "== $$p"; $(PY) $$p > /dev/null; done
	$(PY) benchmarks/report.py

screenshots: $(STAMP)
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m explorer.screenshots

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
