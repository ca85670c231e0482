"""Production settings: `manage.py` started as an operator would, with only what it is given.

Each test runs `manage.py` in a subprocess with an environment built from scratch (not the
test suite's), because the settings decide at import time.
"""
import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

ROOT = Path(__file__).resolve().parents[2]
STRONG_KEY = "k3Jv9-pQ2xZ7mN4wR8tY1uI6oP0aS5dF3gH7jK2lL9zX4cV8bN"
PRODUCTION = {"DEBUG": "False", "SECRET_KEY": STRONG_KEY, "ALLOWED_HOSTS": "events.example.com"}


def manage(*args, **env):
    """Run manage.py with only PATH, HOME and ``env``; return the finished process."""
    base = {name: os.environ[name] for name in ("PATH", "HOME", "LANG") if name in os.environ}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, capture_output=True, text=True,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", **env}, timeout=120)


def test_check_deploy__production_minimum__no_warnings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.parametrize("key", [None, "", "short", "insecure-dev-key-change-me-in-production",
                                 "django-insecure-" + "x1y2z3" * 10, "a" * 60])
def test_settings__debug_off_without_strong_secret_key__refuse_to_start(key):
    env = {**PRODUCTION}
    if key is None:
        del env["SECRET_KEY"]
    else:
        env["SECRET_KEY"] = key

    result = manage("check", **env)

    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY must be set" in result.stderr


def test_settings__debug_on_without_secret_key__starts_for_development():
    result = manage("check", DEBUG="true")

    assert result.returncode == 0, result.stderr


def print_settings(*names, **env):
    code = ("from django.conf import settings as s; "
            f"print(repr([getattr(s, n, None) for n in {list(names)!r}]))")
    result = manage("shell", "-c", code, **env)
    assert result.returncode == 0, result.stderr
    return ast.literal_eval(result.stdout.strip().splitlines()[-1])


def test_settings__production_defaults__https_only_and_site_url_from_host():
    values = print_settings(
        "SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE",
        "SECURE_HSTS_SECONDS", "SITE_URL", "CSRF_TRUSTED_ORIGINS", **PRODUCTION)

    assert values == [True, True, True, 31536000, "https://events.example.com",
                      ["https://events.example.com"]]


def test_settings__each_switch__from_the_environment():
    values = print_settings(
        "SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE",
        "SECURE_HSTS_SECONDS", "SECURE_PROXY_SSL_HEADER", "SITE_URL", "CSRF_TRUSTED_ORIGINS",
        **PRODUCTION, SECURE_SSL_REDIRECT="false", SESSION_COOKIE_SECURE="false",
        CSRF_COOKIE_SECURE="false", SECURE_HSTS_SECONDS="0",
        SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https",
        SITE_URL="https://book.example.org:8443/")

    assert values == [False, False, False, 0, ("HTTP_X_FORWARDED_PROTO", "https"),
                      "https://book.example.org:8443", ["https://book.example.org:8443"]]


@pytest.mark.parametrize("env, text", [
    ({"SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO"}, "SECURE_PROXY_SSL_HEADER"),
    ({"SITE_URL": "javascript:alert(1)"}, "SITE_URL"),
    ({"ALLOWED_HOSTS": "*"}, "SITE_URL"),
])
def test_settings__malformed_proxy_or_site_setting__refuse_to_start(env, text):
    result = manage("check", **{**PRODUCTION, **env})

    assert result.returncode != 0 and text in result.stderr


@pytest.mark.parametrize("name", ["unguarded", "no_such_strategy"])
def test_check__default_strategy_control_or_unknown__fails(settings, name):
    settings.BOOKING_DEFAULT_STRATEGY = name

    with pytest.raises(SystemCheckError, match="booking.E001"):
        call_command("check")


@pytest.mark.parametrize("value", [0, -5.0, float("inf"), float("nan")])
def test_check__offer_seconds_not_a_positive_number__fails(settings, value):
    settings.BOOKING_WAITLIST_OFFER_SECONDS = value

    with pytest.raises(SystemCheckError, match="BOOKING_WAITLIST_OFFER_SECONDS"):
        call_command("check")
