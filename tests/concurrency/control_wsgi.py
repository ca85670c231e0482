"""The site as ``config.wsgi`` serves it, with the test graph in place of the product's:
the guarded strategies and the unguarded control (50 ms between its read and its write),
so one gunicorn serves both sides of the HTTP race."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

from booking import wiring  # noqa: E402 - Django is set up by now
from harness.controls import control_service  # noqa: E402

RACE_DELAY_MS = 50
wiring.install(control_service(race_delay_ms=RACE_DELAY_MS))
