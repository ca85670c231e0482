"""Organizers' API tokens on requests: ``Authorization: Bearer bk_...``. A token counts
only while it is live and its user holds a role on its organizer now
(``booking.organizers.rights.for_token``, read at every request); what it may do is
decided by ``booking/api/base.py``. Public endpoints take no token."""
from rest_framework import exceptions, permissions
from rest_framework.authentication import BaseAuthentication

from booking.api.models import ApiToken
from booking.organizers import rights

REVOKED = "This API token is not valid or was revoked."
NO_RIGHTS = "This API token's user no longer has a role on its organizer."


class BearerToken(BaseAuthentication):
    def authenticate(self, request):
        kind, _, token = request.headers.get("Authorization", "").partition(" ")
        if kind.lower() != "bearer":
            return None
        found = ApiToken.authenticate(token.strip())
        if found is None:
            raise exceptions.AuthenticationFailed(REVOKED)
        found.rights = rights.for_token(found)
        if found.rights.is_empty:
            raise exceptions.AuthenticationFailed(NO_RIGHTS)
        return found.user, found

    def authenticate_header(self, request):
        return 'Bearer realm="api"'


class OrganizerToken(permissions.BasePermission):
    """A live token with rights now (what it may do: ``ApiView.scope``)."""

    message = "This needs an API token."

    def has_permission(self, request, view):
        return isinstance(request.auth, ApiToken)
