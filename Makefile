# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_WORKERS ?= 2

.PHONY: demo test test-browser lint bench venv services clean

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

venv: $(STAMP)

## The platform on its embedded default: SQLite, in-process tasks, local Qdrant, file LightRAG, local answerer.
demo: $(STAMP)
	mkdir -p var
	env -u DATABASE_URL -u REDIS_URL DJANGO_SETTINGS_MODULE=config.settings.local $(BIN)/python manage.py migrate --no-input
	env -u DATABASE_URL -u REDIS_URL DJANGO_SETTINGS_MODULE=config.settings.local $(BIN)/python manage.py demo
	env -u DATABASE_URL -u REDIS_URL DJANGO_SETTINGS_MODULE=config.settings.local $(BIN)/python manage.py runserver 127.0.0.1:8000 --noreload

## The whole suite on PostgreSQL and Redis (started here when installed but stopped).
test: $(STAMP)
	scripts/ensure_services.sh
	DJANGO_SETTINGS_MODULE=config.settings.test $(BIN)/pytest -n $(PYTEST_WORKERS) --create-db -q

## The browser tests alone (Debian's chromium; screenshots under var/test/screenshots/).
test-browser: $(STAMP)
	scripts/ensure_services.sh
	DJANGO_SETTINGS_MODULE=config.settings.test $(BIN)/pytest -n $(PYTEST_WORKERS) --create-db -q -m browser

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

bench: $(STAMP)
	scripts/ensure_services.sh
	for b in bench/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf var/db.sqlite3 var/qdrant var/lightrag var/test
