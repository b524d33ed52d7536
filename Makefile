# duocthu — two commands: `make demo` and `make test`. Everything else is optional.
SHELL := /bin/bash
PYTHON ?= python3
UV := $(shell command -v uv 2>/dev/null || echo "$(PYTHON) -m uv")
VENV := .venv
PY := $(VENV)/bin/python
SYNCED := $(VENV)/.synced

.PHONY: setup demo app index test test-fast lint lab bench e2e-deps notebooks clean

setup: $(SYNCED)

$(SYNCED): pyproject.toml uv.lock
	@command -v uv >/dev/null 2>&1 || $(PYTHON) -m uv --version >/dev/null 2>&1 || \
		{ echo "installing uv (one-off)"; $(PYTHON) -m pip install --quiet --disable-pip-version-check uv; }
	@# Every extra and the dev group. Bytecode compiled once here: where PYTHONDONTWRITEBYTECODE is set,
	@# each process (CLI tests, notebook kernels) would compile its imports again (a quarter of tests/test_cli.py's CPU).
	$(UV) sync --frozen --all-extras --compile-bytecode
	@touch $@

index: setup
	$(PY) -m duocthu index

demo: setup index book app

# The typeset demo book (page images, "Xem trang N"): built when missing or older than a monograph.
BOOK_PDF := $(or $(DUOCTHU_HOME),.duocthu)/book/duoc-thu-demo.pdf
.PHONY: book
book: setup $(BOOK_PDF)

$(BOOK_PDF): $(wildcard data/formulary/*.md)
	$(PY) -m duocthu book build --out $(BOOK_PDF)

app: setup
	$(PY) -m duocthu ask --help >/dev/null
	$(PY) -m streamlit run app_streamlit.py --server.address 127.0.0.1 --server.port 8501 \
		--server.headless true --browser.gatherUsageStats false --server.fileWatcherType none

test: setup e2e-deps
	$(PY) -m pytest

test-fast: setup
	$(PY) -m pytest -m "not notebooks and not e2e and not slow"

lint: setup
	$(VENV)/bin/ruff check duocthu tests app_streamlit.py
	$(VENV)/bin/mypy duocthu

lab: setup
	$(PY) -m ipykernel install --user --name duocthu --display-name "duocthu (.venv)" >/dev/null
	$(VENV)/bin/jupyter lab --notebook-dir=notebooks --ServerApp.ip=127.0.0.1 --no-browser \
		$$([ "$$(id -u)" = 0 ] && echo --allow-root)

notebooks: setup
	$(PY) -m duocthu notebooks run

bench: setup
	$(PY) -m bench

# Debian's Chromium for the end-to-end browser test (Playwright drives it; never `playwright install`).
e2e-deps:
	@if [ -x /usr/bin/chromium ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing Debian chromium for the e2e test"; \
		(apt-get install -y -qq chromium >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get install -y -qq chromium >/dev/null; }) \
		|| echo "chromium could not be installed: the e2e test will be skipped"; \
	else echo "no /usr/bin/chromium and no apt-get as root: the e2e test will be skipped"; fi

clean:
	rm -rf .duocthu reports artifacts

# The benchmark suite at tiny sizes (CI): writes its report under .duocthu/, never docs/.
.PHONY: bench-smoke
bench-smoke: setup
	$(PY) -m bench --profile smoke --inline --out .duocthu/bench-smoke.md

# Time a first `make demo` (index, then streamlit) to the first answer in headless Chromium.
.PHONY: demo-timing
demo-timing: setup e2e-deps
	$(PY) scripts/measure_demo_start.py --fresh

# The README's two screenshots (an answer with its source cards; a clarify with quick replies), taken by
# the real-browser tests in headless Chromium and copied to docs/img/.
.PHONY: screenshots
screenshots: setup e2e-deps
	$(PY) -m pytest -q -m e2e tests/test_e2e_browser.py -k "citation_chip or quick_replies"
	mkdir -p docs/img
	cp artifacts/e2e/readme-answer-sources.png docs/img/demo-answer-sources.png
	cp artifacts/e2e/readme-clarify-quick-replies.png docs/img/demo-clarify-quick-replies.png
