"""Settings for the AWS Lambda functions of deploy/aws/template.yaml (the streams decider,
the outbox backlog probe): the production settings, with what a function needs no value
for filled in.

A function serves no page and signs nothing (the decider writes decisions and their
outbox rows; links in e-mails are signed by the web tier and the worker when they send),
so a random per-container ``SECRET_KEY`` satisfies the settings' check. Django's own
database is never opened. Everything else comes from the function's environment
(``DYNAMODB_TABLE_PREFIX``, ``DYNAMODB_ENDPOINT_URL`` empty for AWS, ``LOG_JSON``).
"""
import os
import secrets

os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
os.environ.setdefault("DATABASE_URL", "sqlite:////tmp/unused.sqlite3")
os.environ.setdefault("STATIC_ROOT", "/tmp/static")

from .settings import *  # noqa: E402,F401,F403
