# The README's first two commands are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOCOMO ?= ../shared/data/locomo/locomo_dev.json

.PHONY: demo test test-postgres lint format typecheck unit integration e2e dev bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev,bench,embedded]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/recollect demo

test: lint typecheck
	$(BIN)/pytest

# The database a deployment gets, beyond `make test` (whose server is Postgres 18): the
# migration, isolation and approval tests on Postgres 16, and a real PgBouncer in transaction
# mode (Debian's `pgbouncer` package; required here, skipped by `make test` when absent).
POSTGRES_BORDERS := tests/integration/test_upgrade_keeps_rows.py \
	tests/integration/test_isolation.py tests/integration/test_tenancy.py \
	tests/integration/test_least_privilege.py tests/integration/test_persistence.py \
	tests/integration/test_approval_workflow.py tests/integration/test_approval_authority.py \
	tests/integration/test_approval_tenancy.py tests/integration/test_checkpointer_conformance.py \
	tests/e2e/test_pgbouncer.py

test-postgres: $(STAMP)
	RECOLLECT_TEST_POSTGRES=16 RECOLLECT_REQUIRE_PGBOUNCER=1 $(BIN)/pytest $(POSTGRES_BORDERS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

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

# Studio, on this machine, acts as the local identity (RECOLLECT_ORG_ID / RECOLLECT_USER_ID);
# `make dev PORT=8123` serves on another port.
PORT ?= 2024
dev: $(STAMP)
	RECOLLECT_STUDIO_IDENTITY=on $(BIN)/recollect dev -- --port $(PORT)

bench: $(STAMP)
	mkdir -p bench/out
	$(BIN)/python -m bench.growth --turns 300 --json bench/out/growth.json
	$(BIN)/python -m bench.extraction_latency --json bench/out/extraction_latency.json
	$(BIN)/python -m bench.approval_overhead --json bench/out/approval_overhead.json
	$(BIN)/python -m bench.connections --json bench/out/connections.json
	$(BIN)/python -m bench.locomo --data $(LOCOMO) --json bench/out/locomo.json
	$(BIN)/python -m bench.duplicates --data $(LOCOMO) --json bench/out/duplicates.json
	$(BIN)/python -m bench.sign_codes --data $(LOCOMO) --json bench/out/sign_codes.json
	$(BIN)/python -m bench.subagents --data $(LOCOMO) --json bench/out/subagents.json
	$(BIN)/python -m bench.recall_latency --json bench/out/recall_latency.json  # ~25 min at 1M

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache
