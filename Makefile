# make serve: set everything up and open the explorer on the built-in demo
# make test:  set everything up, lint, and run the whole suite
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
CHROMIUM ?= /usr/bin/chromium

.PHONY: serve test lint format bench clean

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
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,bench]'
	$(PY) benchmarks/evaluate.py
	$(PY) benchmarks/linear_patterns.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
