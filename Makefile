# The README's first two commands are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format typecheck unit integration e2e dev bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev,bench]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/recollect demo

test: lint typecheck
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest tests/unit

integration: $(STAMP)
	$(BIN)/pytest tests/integration

e2e: $(STAMP)
	$(BIN)/pytest tests/e2e

dev: $(STAMP)
	$(BIN)/langgraph dev

bench: $(STAMP)
	mkdir -p bench/out
	@for module in $$(ls bench/*.py | grep -v __init__ | xargs -n1 basename | sed 's/\.py$$//'); do \
		echo "== bench.$$module"; \
		$(BIN)/python -m bench.$$module --json bench/out/$$module.json || exit 1; \
	done

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache
