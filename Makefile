# The README's two commands: `make demo` and `make test`. Each builds the virtual environment first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint docs bench system-deps

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,docs]'
	touch $@

demo: $(BIN)/.installed
	$(BIN)/opsagent demo

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/vulture

# The guide (docs/, mkdocs.yml), built as CI builds it: strict, so a broken link or a missing page fails.
docs: $(BIN)/.installed
	$(BIN)/mkdocs build --strict --site-dir site

system-deps:
	./scripts/install-system-deps

test: lint docs system-deps
	$(BIN)/pytest
	$(BIN)/opsagent eval evals/scenarios --scripted

bench: $(BIN)/.installed
	$(BIN)/python -m bench
