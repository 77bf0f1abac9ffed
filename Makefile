# Two commands on a fresh machine: `make demo` and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PKGS   := schemagraph store indexer retriever generator providers schemarag evaluation

.PHONY: install demo test lint typecheck unit bench-scale clean

install: $(STAMP)

# torch==2.13.0 first: it is the CPU wheel this machine carries; any other version pulls CUDA.
$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[all,dev]'
	touch $(STAMP)

demo: install
	$(VENV)/bin/schemarag demo

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: install
	$(VENV)/bin/mypy

unit: install
	$(PY) -m pytest

test: lint typecheck unit

bench-scale: install
	$(PY) benchmarks/bench_scale.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
