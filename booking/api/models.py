"""The API app's models, defined below the entry points (``booking/organizers/tokens.py``)
since the API, the admin and the commands all use them; named here so Django finds them."""
from booking.organizers.tokens import READ, WRITE, ApiToken, WebhookEndpointEntry, digest

__all__ = ["READ", "WRITE", "ApiToken", "WebhookEndpointEntry", "digest"]
