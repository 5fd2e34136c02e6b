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

# The Redis tests need a real redis-server (Debian's package; this machine's kind runs as root).
redis-server:
	command -v redis-server >/dev/null || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server)

# The contracts first (types, lint, format, layers), then the suite.
test: $(STAMP) redis-server
	$(BIN)/python -m mypy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Benchmarks (README "Performance"). xml-sitemap-writer (into the venv) and sitemap.js
# (npm `sitemap` 9.0.1, with npm under benchmarks/out/sitemapjs) are benchmark-only
# contenders, installed on demand by the harness; sitemap.js is skipped without node and npm.
# The quick run: make bench BENCH_ARGS="--records 100000 --repeat 3" (about 5 minutes).
BENCH_ARGS ?= --records 1000000 --repeat 3 --memory 100000,1000000,5000000
bench: $(STAMP)
	$(BIN)/python -m benchmarks.bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) sitemaps build dist *.egg-info .pytest_cache
