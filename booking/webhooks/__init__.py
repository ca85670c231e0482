"""Webhooks: organizers' HTTPS endpoints told of changes, signed per Standard Webhooks.

- ``signing``: the ``webhook-id`` / ``webhook-timestamp`` / ``webhook-signature`` headers;
- ``registry``: endpoints registered and removed (the admin and the API call it);
- ``fanout``: an outbox row (written in the change's own transaction) becomes one delivery
  per endpoint and event type, before the row may be released;
- ``delivery``: the booking worker sends what is owed, at least once, each attempt
  claimed exactly once, retried with backoff; a day of failures disables an endpoint.

docs/webhooks.md tells receivers what to expect.
"""
