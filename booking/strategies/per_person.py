"""What strategies with one registration item per person share (``lock_table``, ``slots``
and the unguarded control): the events and registrations tables, and the reads of the
registrations, written once."""
from collections.abc import Iterator

from booking.dynamo import items
from booking.dynamo.tables import EVENTS, REGISTRATIONS
from booking.errors import EventNotFound
from booking.models import Registration

from booking.strategies.base import Strategy


class OneItemPerPerson(Strategy):
    """A strategy whose registrations are items of the registrations table, keyed by
    (event id, e-mail key)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.events = self.store.table(EVENTS)
        self.registrations_table = self.store.table(REGISTRATIONS)

    def find(self, event_id, email):
        item = self.registrations_table.get({"event_id": event_id, "email": email})
        if item is None:
            self._require_event(event_id)
        return items.registration_or_none(item)

    def registrations(self, event_id) -> Iterator[Registration]:
        for item in self.registrations_table.query(
            key_condition="event_id = :e", values={":e": event_id}
        ):
            yield items.registration_from_item(item)

    def _stored_count(self, event_id) -> int:
        """How many registrations the event's partition holds (one consistent count)."""
        return self.registrations_table.count(key_condition="event_id = :e",
                                              values={":e": event_id})

    def _require_event(self, event_id) -> dict:
        """The event item's capacity, or ``EventNotFound``."""
        event = self.events.get({"event_id": event_id}, projection="event_id, #capacity",
                               names={"#capacity": "capacity"})
        if event is None:
            raise EventNotFound()
        return event
