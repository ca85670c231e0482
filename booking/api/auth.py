"""Organizers' API tokens on requests: ``Authorization: Bearer bk_...``; read scope for
GET, write scope for everything else. Public endpoints take no token."""
from rest_framework import exceptions, permissions
from rest_framework.authentication import BaseAuthentication

from booking.api.models import WRITE, ApiToken

REVOKED = "This API token is not valid or was revoked."


class BearerToken(BaseAuthentication):
    def authenticate(self, request):
        kind, _, token = request.headers.get("Authorization", "").partition(" ")
        if kind.lower() != "bearer":
            return None
        found = ApiToken.authenticate(token.strip())
        if found is None:
            raise exceptions.AuthenticationFailed(REVOKED)
        return found.user, found

    def authenticate_header(self, request):
        return 'Bearer realm="api"'


class OrganizerToken(permissions.BasePermission):
    """A live token; write scope unless the method only reads."""

    message = "This needs an API token with write scope."

    def has_permission(self, request, view):
        token = request.auth
        if not isinstance(token, ApiToken):
            return False
        return request.method in permissions.SAFE_METHODS or token.scope == WRITE
