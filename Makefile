# make serve:   set everything up and open the explorer on the built-in demo
# make test:    set everything up, lint, and run the whole suite (on two workers, a file each; JOBS=0: one process)
# make upgrade: lock the newest versions pyproject.toml allows, install them and run the suite
#
# The set-up installs the versions of requirements/lock.txt, every package of the app and the
# tests pinned with its hashes, so every machine runs what CI ran; pyproject.toml keeps ranges
# for people who install MeshScope into an environment of their own. requirements/bench.txt is
# the same plus what only make bench needs (Mt-KaHyPar).
VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
LOCK    := requirements/lock.txt
BENCH_LOCK := requirements/bench.txt
# uv writes the locks (make lock, make upgrade): it resolves for every platform and Python the
# project allows, from the package index alone (whatever pip's configuration adds on a machine)
UV_VERSION ?= 0.13.10
UV      := $(VENV)/bin/uv
LOCK_ARGS := --no-config --universal --fork-strategy fewest --python-version 3.11 \
	--generate-hashes --quiet --custom-compile-command "make lock"
CHROMIUM ?= /usr/bin/chromium
# pytest-xdist workers of make test (0: one process); a test file stays on one worker, so its
# module fixtures are built once
JOBS    ?= 2

.PHONY: serve test lint format bench screenshots clean lock upgrade

$(STAMP): pyproject.toml $(LOCK)
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet --require-hashes -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps -e .
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
	$(PY) -m pip install --quiet --require-hashes -r $(BENCH_LOCK)
	set -e; for b in $(BENCH); do echo "== $$b"; $(PY) benchmarks/$$b.py > /dev/null; done
	set -e; for p in benchmarks/papers/*.py; do echo "== $$p"; $(PY) $$p > /dev/null; done
	$(PY) benchmarks/report.py

screenshots: $(STAMP)
	$(PY) -m explorer.screenshots

# make lock: the locks again after a change of pyproject.toml, keeping every pin it still allows;
# make upgrade: every package at the newest version pyproject.toml allows, then the whole suite
# (the stamp depends on the lock: make test installs the new versions first)
lock: $(STAMP)
	$(PY) -m pip install --quiet uv==$(UV_VERSION)
	$(UV) pip compile $(LOCK_ARGS) $(UPGRADE) pyproject.toml --extra test -o $(LOCK)
	$(UV) pip compile $(LOCK_ARGS) $(UPGRADE) pyproject.toml --extra test --extra bench \
		-c $(LOCK) -o $(BENCH_LOCK)

upgrade:
	$(MAKE) lock UPGRADE=--upgrade
	$(MAKE) test

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
