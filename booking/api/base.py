"""The API's view base (apart from ``auth.py``: DRF loads authentication classes while
its views module is still importing)."""
from rest_framework import permissions
from rest_framework.views import APIView

from booking.api.auth import OrganizerToken


class ApiView(APIView):
    """An API view; the methods named in ``organizer_methods`` need an organizer token,
    the others are public."""

    organizer_methods: tuple[str, ...] = ()

    def get_permissions(self):
        if self.request.method in self.organizer_methods:
            return [OrganizerToken()]
        return [permissions.AllowAny()]
