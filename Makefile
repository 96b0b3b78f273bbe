# `make run`: set everything up and run the main job: a referee, the example bots as
#   processes (Node.js included), Risk and Stratego round robins, both leaderboards.
# `make test`: set everything up and run the lint and the whole test suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run play test lint bench clean node services

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

run: $(VENV)/.installed node
	$(BIN)/arena demo

# One classic Risk game between in-process bots, its replay written and verified.
play: $(VENV)/.installed
	$(BIN)/arena play risk --players random,aggressive,defensive --seed 7 --replay game.json
	$(BIN)/arena replay verify game.json

# The Node.js example bot's dependencies (@grpc/grpc-js from npm), for its test.
bots/node/node_modules/.installed: bots/node/package.json bots/node/package-lock.json
	cd bots/node && npm ci --no-audit --no-fund --loglevel=error
	touch $@

node: bots/node/node_modules/.installed

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# PostgreSQL for the store's tests (started if it is not running)
services:
	bash scripts/ensure_services.sh

test: lint node services
	$(BIN)/pytest

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) game.json arena.db arena.db-* bots/node/node_modules
