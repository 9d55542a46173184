# Knotwork developer entry points. `make demo` and `make test` are the README's two commands.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.knotwork-installed
DEMO_DIR ?= .knotwork/demo
QUESTION ?= Who leads Project Atlas?

.PHONY: install demo test bench lint clean

$(STAMP): pyproject.toml tools/cypher-lint/package-lock.json
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# the CPU build of torch first: an unpinned torch would pull GBs of CUDA packages
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	# Neo4j's Cypher parser, for the static check of the Neo4j adapter's queries
	npm ci --prefix tools/cypher-lint --no-audit --no-fund --loglevel=error >/dev/null
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/knotwork --data-dir $(DEMO_DIR) ingest src/knotwork/sample_data
	HF_HUB_OFFLINE=1 $(BIN)/knotwork --data-dir $(DEMO_DIR) query "$(QUESTION)"

test: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q

bench: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m bench.perf

lint: $(STAMP)
	$(BIN)/ruff check src tests bench

clean:
	rm -rf $(VENV) .knotwork build dist src/*.egg-info tools/cypher-lint/node_modules
