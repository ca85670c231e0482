"""Organizers' API tokens: per user, scoped read or write, stored hashed, shown once.

A token reads ``bk_<prefix>_<secret>``: the prefix finds the row, the SHA-256 of the whole
token is what is stored (the tokens are 190 random bits, so a fast hash is enough). The
admin (``booking/api/admin.py``) and ``manage.py create_api_token`` create them.

They are the API app's models (``app_label`` ``booking_api``, its migrations in
``booking/api/migrations/``; ``booking/api/models.py`` names them for Django), kept here,
below the entry points, because the API, the admin and the commands all use them.
"""
import hashlib
import hmac
import secrets
from typing import TYPE_CHECKING

from django.db import models
from django.utils import timezone

if TYPE_CHECKING:
    from booking.organizers.rights import Rights

READ, WRITE = "read", "write"


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class ApiToken(models.Model):
    """A token of one user on one organizer: at each request it may do exactly what its
    user may do there now (``booking.organizers.rights.for_token``), read scope: read only."""

    user = models.ForeignKey("auth.User", on_delete=models.CASCADE,
                             related_name="api_tokens")
    organizer = models.ForeignKey("booking_organizers.Organizer", on_delete=models.CASCADE,
                                  related_name="api_tokens", null=True)
    name = models.CharField(max_length=100, help_text="What the token is for.")
    scope = models.CharField(max_length=5, choices=[(READ, "read"), (WRITE, "read and write")],
                             default=READ)
    prefix = models.CharField(max_length=12, unique=True, editable=False)
    token_hash = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Set on an authenticated request's token: what it may do now (``booking/api/auth.py``).
    rights: "Rights"

    class Meta:
        app_label = "booking_api"
        verbose_name = "API token"

    def __str__(self):
        return f"{self.name} (bk_{self.prefix}_…)"

    def issue(self) -> str:
        """Give this (unsaved) token its secret; return the token, shown only now."""
        self.prefix = secrets.token_hex(6)
        token = f"bk_{self.prefix}_{secrets.token_urlsafe(24)}"
        self.token_hash = digest(token)
        return token

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and self.user.is_active

    @property
    def writes(self) -> bool:
        return self.scope == WRITE

    @classmethod
    def authenticate(cls, token: str) -> "ApiToken | None":
        """The live token ``token`` is, or None."""
        parts = token.split("_")
        if len(parts) < 3 or parts[0] != "bk":
            return None
        found = cls.objects.select_related("user", "organizer").filter(prefix=parts[1]).first()
        if found is None or not hmac.compare_digest(found.token_hash, digest(token)):
            return None
        return found if found.is_active else None


class WebhookEndpointEntry(models.Model):
    """The admin's entry for webhook endpoints stored in DynamoDB: permissions, no table
    (``booking/admin/webhooks.py``)."""

    class Meta:
        app_label = "booking_api"
        managed = False
        db_table = "booking_api_webhook_unused"
        verbose_name = "webhook endpoint"
        default_permissions = ("add", "change", "delete", "view")
