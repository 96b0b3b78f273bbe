# `make run`: set everything up and play a classic Risk game between the built-in bots.
# `make test`: set everything up and run the lint and the whole test suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint bench clean node

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

run: $(VENV)/.installed
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

test: lint node
	$(BIN)/pytest

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) game.json bots/node/node_modules
