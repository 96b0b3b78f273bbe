# `make run`: set everything up and play a classic Risk game between the built-in bots.
# `make test`: set everything up and run the lint and the whole test suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: run test lint bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

run: $(VENV)/.installed
	$(BIN)/arena play risk --players random,aggressive,defensive --seed 7 --replay game.json
	$(BIN)/arena replay verify game.json

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint
	$(BIN)/pytest

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/engine.py

clean:
	rm -rf $(VENV) game.json
