"""The site as ``config.wsgi`` serves it, with one careless view in place of the
product's: a registrations list that finds the event and forgets whose it is. The
control of the isolation test (tests/organizers/test_isolation_http.py): the same test
must report it."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

from django.urls import path  # noqa: E402 - Django is set up by now

from booking.api import urls, views  # noqa: E402
from booking.wiring import get_booking_service  # noqa: E402


class CarelessRegistrations(views.EventRegistrations):
    """Reads the token's rights but never asks them about the event."""

    def scope(self, request, kwargs):
        self.rights, self.organizer = request.auth.rights, request.auth.organizer.slug
        self.event = get_booking_service().get_event(kwargs["event_id"])


for number, pattern in enumerate(urls.urlpatterns):
    if pattern.name == "registrations":  # before the first request builds the resolver
        urls.urlpatterns[number] = path(str(pattern.pattern), CarelessRegistrations.as_view(),
                                        name="registrations")
