# `make run`: set everything up and run the main job: a referee, the example bots as
#   processes (Node.js included), Risk and Stratego round robins, both leaderboards,
#   then the web app on the results until Ctrl-C (DEMO_ARGS=--no-web: end there).
# `make test`: set everything up and run the lint and the whole test suite.
PYTHON ?= python3
SHELL := /bin/bash
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_ARGS ?=

.PHONY: run play test lint bench clean node services chromium bubblewrap screenshots

# pip's own lines, one each: what it fetches, builds and installs (its "Installing
# collected packages" is the long silent part: it says so before), cut to 100 columns
PIP_LINES = grep --line-buffered -E '^(Collecting|Successfully|Installing collected)' \
	| sed -u -E 's/ \(from .*//; s/^Installing collected packages: (.*)/installing the packages fetched (the large ones take a while): \1/' \
	| cut -c1-100
PIP = $(BIN)/pip install --disable-pip-version-check --progress-bar off

# Said before it starts, because the first install is most of the first run's time.
# `make run` needs Arena and what it runs on; `make test` adds the test tools.
$(VENV)/.installed: pyproject.toml setup.py
	@echo "setting up $(VENV): Arena and what it runs on (the first time only, about a minute)"
	$(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install --quiet --disable-pip-version-check --upgrade pip
	@set -o pipefail; $(PIP) -e . 2>&1 | tee $(VENV)/install.log | { $(PIP_LINES); true; } \
		|| { tail -n 5 $(VENV)/install.log >&2; echo "the install failed: pip's whole output is in $(VENV)/install.log" >&2; exit 1; }
	touch $@

$(VENV)/.dev-installed: $(VENV)/.installed
	@echo "adding the test tools to $(VENV) (pytest, ruff, Playwright, ...; the first time only)"
	@set -o pipefail; $(PIP) -e '.[dev]' 2>&1 | tee $(VENV)/install-dev.log | { $(PIP_LINES); true; } \
		|| { tail -n 5 $(VENV)/install-dev.log >&2; echo "the install failed: pip's whole output is in $(VENV)/install-dev.log" >&2; exit 1; }
	touch $@

# Node.js is optional here: without it (or its packages) the demo plays on without the
# Node.js bot, and says so in one line.
# Ctrl-C is how the web ends (the demo exits 130): not shown as make's "Error 130".
run: $(VENV)/.installed
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory node || true; fi
	@echo $(BIN)/arena demo $(DEMO_ARGS)
	@$(BIN)/arena demo $(DEMO_ARGS) || { code=$$?; [ $$code = 130 ] || exit $$code; }

# One classic Risk game between in-process bots, its replay written and verified.
play: $(VENV)/.installed
	$(BIN)/arena play risk --players random,aggressive,defensive --seed 7 --replay game.json
	$(BIN)/arena replay verify game.json

# The Node.js example bot's dependencies (@grpc/grpc-js from npm), for its test.
bots/node/node_modules/.installed: bots/node/package.json bots/node/package-lock.json
	@command -v npm >/dev/null || bash scripts/ensure_node.sh
	cd bots/node && npm ci --no-audit --no-fund --loglevel=error
	touch $@

node: bots/node/node_modules/.installed

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# PostgreSQL for the store's tests (started if it is not running)
services:
	bash scripts/ensure_services.sh

# Chromium (Debian's) for the web app's browser tests, driven by Playwright
chromium:
	bash scripts/ensure_chromium.sh

# bubblewrap (Debian's) for the sandbox bot code runs in (arena/sandbox, docs/hosting.md)
bubblewrap:
	bash scripts/ensure_bubblewrap.sh

test: lint node services chromium bubblewrap
	$(BIN)/pytest

# The README's pictures (docs/images/): small tournaments served by arena web, shot in
# Chromium by the code the browser tests use (scripts/screenshots.py)
screenshots: $(VENV)/.dev-installed chromium
	$(BIN)/python scripts/screenshots.py

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) game.json arena.db arena.db-* bots/node/node_modules
