"""The API's view base (apart from ``auth.py``: DRF loads authentication classes while
its views module is still importing)."""
from rest_framework import permissions
from rest_framework.views import APIView

from booking.api.auth import OrganizerToken
from booking.web import rate_limits

TOKEN_LIMITED = "Too many requests with this API token. Please wait and try again."


class ApiView(APIView):
    """An API view; the methods named in ``organizer_methods`` need an organizer token,
    the others are public."""

    organizer_methods: tuple[str, ...] = ()

    def initial(self, request, *args, **kwargs):
        """Count a token's requests against its limit (429 ``rate-limited`` past it)."""
        super().initial(request, *args, **kwargs)
        if request.auth is not None:
            rate_limits.check(rate_limits.API_TOKEN, f"token-{request.auth.pk}",
                              message=TOKEN_LIMITED)

    def get_permissions(self):
        if self.request.method in self.organizer_methods:
            return [OrganizerToken()]
        return [permissions.AllowAny()]
