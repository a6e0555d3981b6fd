# Two commands do all set-up on a fresh machine:
#   make run   - create/refresh .venv, install, build the demo memory on first use, open the app
#   make test  - same set-up plus test dependencies and chromium, then the whole test suite
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export OMP_NUM_THREADS ?= 1
export PYTHONDONTWRITEBYTECODE = 1
DEMO_STORE ?= data/demo.duckdb
PORT ?= 8501

.PHONY: run test venv test-deps chromium demo bench clean ray

$(BIN)/python:
	$(PY) -m venv $(VENV)

$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(BIN)/pip install -qq -r requirements.txt
	touch $@

$(VENV)/.testdeps: requirements-test.txt requirements-test-llm.txt requirements-ray.txt $(VENV)/.runtime
	$(BIN)/pip install -qq -r requirements-test.txt -r requirements-test-llm.txt -r requirements-ray.txt
	touch $@

# Ray for batch builds and evaluations (--workers, --ray-address); `make test` installs it too
$(VENV)/.ray: requirements-ray.txt $(VENV)/.runtime
	$(BIN)/pip install -qq -r requirements-ray.txt
	touch $@

ray: $(VENV)/.ray

venv: $(VENV)/.runtime

test-deps: $(VENV)/.testdeps chromium

chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian chromium for the browser tests"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	  || echo "WARNING: could not install chromium; browser tests will be skipped"; }

$(DEMO_STORE): $(VENV)/.runtime data/demo/demo.json
	$(BIN)/python -m core build data/demo/demo.json --store $(DEMO_STORE)

demo: $(DEMO_STORE)

run: $(VENV)/.runtime $(DEMO_STORE)
	ADAMM_STORE=$(DEMO_STORE) $(BIN)/streamlit run app.py --server.port $(PORT) --server.headless true

test: test-deps $(DEMO_STORE)
	$(BIN)/python -m pytest -q -rs -p no:cacheprovider

bench: $(VENV)/.testdeps
	$(BIN)/python bench/run.py --quick

clean:
	rm -rf $(VENV) $(DEMO_STORE) $(DEMO_STORE).wal
