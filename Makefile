# agent-host — every command builds what it needs from nothing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: all demo test venv lint typecheck pytest conformance clean

all: test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check server tests bench
	$(BIN)/ruff format --check server tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest -q

conformance: $(STAMP)
	$(BIN)/python tests/conformance/apply_patch/check.py --check-exit --apply "$(abspath $(BIN))/agent-host apply-patch"

test: lint typecheck pytest conformance

demo: $(STAMP)
	$(BIN)/agent-host demo

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
