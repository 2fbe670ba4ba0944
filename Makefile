# The README's two commands: `make demo` and `make test`. Each builds its virtual environment first: the demo runs
# on the runtime install only (.venv-demo: what `pip install opsagent` gives), the tests on it plus the [dev] extra.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_VENV := .venv-demo
RUNTIME_LIMIT_MB := 150
# opsagent is installed into .venv-demo as a wheel, as a person gets it: a change to the code installs it again.
SOURCES := $(shell find kernel opsagent_tools bot -name '*.py')

.PHONY: demo test lint docs bench system-deps install-size

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,docs]'
	touch $@

$(DEMO_VENV)/.installed: pyproject.toml $(SOURCES)
	$(PYTHON) scripts/runtime_install.py $(DEMO_VENV)
	touch $@

demo: $(DEMO_VENV)/.installed
	$(DEMO_VENV)/bin/opsagent demo

# The runtime install, made afresh in a temporary directory and measured: over the limit fails (CI runs it after
# `make test`). Not a pytest test: making an environment takes ~20 s and the package index, once per CI run is enough.
install-size:
	$(PYTHON) scripts/runtime_install.py --limit-mb $(RUNTIME_LIMIT_MB)

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
