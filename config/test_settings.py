"""Settings for the test suite: the real settings, in the environment a test run needs.

Tests speak plain HTTP to 127.0.0.1 (Django's test client, runserver, gunicorn), so the
HTTPS-only defaults are switched off here, a random key signs, and static files need no
`collectstatic`, and the harness app (torture, bench_booking) is installed. The values go into the environment, so every server a test starts
(runserver, gunicorn, the embedded DynamoDB) runs with them too. Tests of the production
defaults start `manage.py` with an environment of their own (tests/test_deploy_settings.py).
"""
import os
import secrets
from pathlib import Path

# WhiteNoise warns about a missing STATIC_ROOT; tests serve from the app directories.
_STATIC_ROOT = Path(__file__).resolve().parent.parent / "var" / "test-static"
_STATIC_ROOT.mkdir(parents=True, exist_ok=True)

TEST_ENVIRONMENT = {
    "SECRET_KEY": secrets.token_urlsafe(50),
    "SECURE_SSL_REDIRECT": "false",
    "SESSION_COOKIE_SECURE": "false",
    "CSRF_COOKIE_SECURE": "false",
    "SECURE_HSTS_SECONDS": "0",
    "SITE_URL": "http://testserver",
    "STATICFILES_BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage",
    "STATIC_ROOT": str(_STATIC_ROOT),
    "WHITENOISE_USE_FINDERS": "true",
    "INSTALL_HARNESS": "true",
    # The webhook receivers tests run listen on 127.0.0.1 (the development allowance).
    "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
}
for _name, _value in TEST_ENVIRONMENT.items():
    os.environ.setdefault(_name, _value)

from .settings import *  # noqa: E402,F401,F403
from .settings import INSTALLED_APPS  # noqa: E402

if "harness" not in INSTALLED_APPS:  # always, whatever the environment says
    INSTALLED_APPS = [*INSTALLED_APPS, "harness"]

# Creating a user or signing one in hashes the password; the production hasher's 870,000
# rounds (a quarter of a second each) are the point in production and only time here. The
# others stay listed, so hashes made by a server the tests start are still checked.
from django.conf import global_settings  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher",
                    *global_settings.PASSWORD_HASHERS]
