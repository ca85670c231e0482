"""The organizer's questions and the attendees' answers (docs/orders.md#questions).

``rules.py`` checks questions and answers (one module for the form, the API and the
service), ``store.py`` keeps the answers (one item per order), ``rider.py`` puts them in
the order's own write and deletes them in its cancellation's, ``service.py`` is what the
service facade offers (set questions, read and edit answers, purge them)."""
