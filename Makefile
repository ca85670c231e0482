# The two commands a newcomer needs: `make run` and `make test`.
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python

.PHONY: install install-dev run test dynamodb serve clean lambda-zip aws-template docs docs-build settings-files

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

## Install, migrate, start DynamoDB Local, create tables, serve http://127.0.0.1:8000/
run: install
	PY=$(PY) bash scripts/run.sh

## Run the whole test suite
test: install-dev
	PY=$(PY) bash scripts/test.sh

## Production on one host: collect static files, then Debian's nginx (config/nginx.conf:
## whole requests only, slow clients closed) in front of gunicorn (config/gunicorn.conf.py)
## by scripts/serve.sh. Needs the production environment (SECRET_KEY, ALLOWED_HOSTS, ...)
## and nginx (installed when missing, as root): see docs/deployment.md
serve: install
	$(PY) manage.py collectstatic --noinput
	PY=$(PY) bash scripts/serve.sh

## Only DynamoDB Local, in the foreground (on your machine, like `make run`: DEBUG=true
## unless you exported DEBUG yourself)
dynamodb: install
	bash scripts/ensure_java.sh
	DEBUG=$${DEBUG:-true} $(PY) manage.py dynamodb_local

## The documentation site (docs/, mkdocs.yml), served on http://127.0.0.1:8002/ while you edit
docs: install-dev
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve --dev-addr 127.0.0.1:8002

## The documentation site, built into site/; a broken link or a page missing from the
## navigation fails the build (make test builds it too: tests/docs/test_site.py)
docs-build: install-dev
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

## Write .env.example and docs/reference/settings.md from config/settings_reference.py
settings-files: install
	$(PY) -m config.settings_reference --write

clean:
	rm -rf $(VENV) var test-artifacts .pytest_cache site

## The AWS Lambda package (streams decider, outbox probe) for deploy/aws/template.yaml:
## dist/event-booking-lambda.zip, built for python3.12 on x86_64 (docs/deployment.md)
lambda-zip: install
	$(PY) deploy/aws/build_lambda.py --output dist/event-booking-lambda.zip

## Regenerate deploy/aws/template.yaml from booking/dynamo/tables.py
aws-template: install
	DEBUG=true $(PY) manage.py aws_template
