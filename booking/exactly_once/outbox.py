"""The outbox: e-mails a booking or cancellation owes, written in its own transaction.

A confirmation (after a booking) or a cancellation notice (after a cancellation) is one
outbox row, put in the same TransactWriteItems as the seat and the request row, so an
e-mail is owed exactly when the seat changed. The row is deleted once the e-mail went
out; sending it exactly once is the sender's job (``booking/mail/sender.py``: execution history).
"""
from collections.abc import Iterator
from typing import Any

from booking.dynamo import items
from booking.dynamo.access import Store
from booking.dynamo.tables import OUTBOX
from booking.dynamo.expressions import Put
from booking.models import Registration


def message_id(kind: str, registration_id: str, part: str | None = None) -> str:
    """One message per kind and registration: a registration is booked and cancelled once;
    a cancelled part of an order (``part``: its request id) has a notice of its own."""
    return f"{kind}-{registration_id}" + (f"-{part}" if part else "")


class Outbox:
    def __init__(self, store: Store):
        self.table = store.table(OUTBOX)

    def ops(self, kind: str, registration: Registration, *, at: int) -> list[Put]:
        row = {"message_id": message_id(kind, registration.registration_id,
                                        registration.part_request_id), "kind": kind,
               "created_at": at, **items.registration_item(registration)}
        return [Put(self.table, row)]

    def pending(self, *, page_size: int = 100) -> Iterator[dict[str, Any]]:
        """Every row still owed, page by page (sent rows are deleted)."""
        return self.table.scan(page_size=page_size)

    def get(self, message_id_: str) -> dict | None:
        return self.table.get({"message_id": message_id_})

    def done(self, message_id_: str) -> None:
        self.table.delete({"message_id": message_id_})
