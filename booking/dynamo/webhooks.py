"""The webhook tables: organizers' endpoints and the deliveries owed to them.

A delivery is claimed one attempt at a time on its own item (the history's atomic counter, kept on
the row): ``attempts = :seen + 1`` only if ``attempts = :seen`` and it is due, so of any
number of workers that read the same due delivery exactly one makes attempt ``n``. The
claim also moves ``next_attempt_at`` a lease ahead: a worker that dies mid-send leaves the
delivery due again when the lease lapses, and the next claim is attempt ``n + 1`` of the
same ``webhook-id`` (a redelivery, never a loss).
"""
from decimal import Decimal

from booking.dynamo.access import ConditionFailed, Store
from booking.dynamo.expressions import Actions, attr, list_append
from booking.dynamo.tables import WEBHOOK_DELIVERIES, WEBHOOK_ENDPOINTS

DUE = "due"  # the sparse index's one key value: the delivery is still owed
ENDPOINT, DELIVERY = attr("endpoint_id"), attr("delivery_id")
STILL_DUE, LOG = attr("due_in").eq(DUE), attr("log")
PENDING, DELIVERED, ABANDONED = "pending", "delivered", "abandoned"


def _n(epoch: float) -> Decimal:
    return Decimal(f"{epoch:.3f}")  # DynamoDB numbers: boto3 takes Decimal, not float


class WebhookEndpoints:
    """The endpoints table: one item per endpoint."""

    def __init__(self, store: Store):
        self.table = store.table(WEBHOOK_ENDPOINTS)

    def put(self, item: dict) -> None:
        """Store a new endpoint; ``ConditionFailed`` (with the stored one) if its id is taken."""
        self.table.put(item, condition=ENDPOINT.not_exists())

    def get(self, endpoint_id: str) -> dict | None:
        return self.table.get({"endpoint_id": endpoint_id})

    def all(self) -> list[dict]:
        """Every endpoint, read consistently (a registration is seen by the next fan-out)."""
        return list(self.table.scan())

    def delete(self, endpoint_id: str, *, now: float, ttl: int) -> bool:
        """Leave a tombstone: no more deliveries; the item itself goes at ``ttl``."""
        try:
            self.table.update({"endpoint_id": endpoint_id},
                              Actions().set("deleted_at", _n(now)).set("ttl", ttl),
                              condition=ENDPOINT.exists() & attr("deleted_at").not_exists())
        except ConditionFailed:
            return False
        return True

    def assign(self, endpoint_id: str, organizer: str) -> bool:
        """Give an endpoint stored without an organizer to ``organizer`` (False: it has one)."""
        try:
            self.table.update({"endpoint_id": endpoint_id}, Actions().set("organizer", organizer),
                              condition=ENDPOINT.exists() & attr("organizer").not_exists())
        except ConditionFailed:
            return False
        return True

    def failed(self, endpoint_id: str, *, now: float) -> dict | None:
        """Note a failure: ``failing_since`` is kept from the first failure after a success.
        Returns the endpoint as it now stands (None if it was deleted)."""
        try:
            return self.table.update(
                {"endpoint_id": endpoint_id},
                Actions().set("failing_since", attr("failing_since").if_not_exists(_n(now))),
                condition=ENDPOINT.exists(), return_values="ALL_NEW")
        except ConditionFailed:
            return None

    def succeeded(self, endpoint_id: str) -> None:
        """A delivery went through: the endpoint is no longer failing."""
        try:
            self.table.update({"endpoint_id": endpoint_id}, Actions().remove("failing_since"),
                              condition=attr("failing_since").exists())
        except ConditionFailed:
            pass

    def disable(self, endpoint_id: str, *, since: object, reason: str, now: float) -> bool:
        """Disable it, only if it is still failing since ``since`` (no success meanwhile)."""
        try:
            self.table.update(
                {"endpoint_id": endpoint_id},
                Actions().set("disabled_at", _n(now)).set("disabled_reason", reason),
                condition=attr("failing_since").eq(_n(float(str(since))))
                & attr("disabled_at").not_exists())
        except ConditionFailed:
            return False
        return True

    def enable(self, endpoint_id: str) -> bool:
        try:
            self.table.update({"endpoint_id": endpoint_id},
                              Actions().remove("disabled_at", "disabled_reason", "failing_since"),
                              condition=ENDPOINT.exists())
        except ConditionFailed:
            return False
        return True


class WebhookDeliveries:
    """The deliveries table: one item per ``webhook-id``, with its attempts' log."""

    def __init__(self, store: Store):
        self.table = store.table(WEBHOOK_DELIVERIES)

    def add(self, item: dict, *, now: float, ttl: int) -> bool:
        """Owe a delivery once: False if one with this id exists (a repeated fan-out)."""
        row = {**item, "status": PENDING, "due_in": DUE, "attempts": 0, "log": [],
               "created_at": _n(now), "next_attempt_at": _n(now), "ttl": ttl}
        try:
            self.table.put(row, condition=DELIVERY.not_exists())
        except ConditionFailed:
            return False
        return True

    def due(self, *, now: float, limit: int = 100,
            skip_endpoints: frozenset[str] | set[str] = frozenset(),
            max_read: int = 2000) -> list[dict]:
        """Deliveries owed whose time has come, oldest first (the index may lag: every
        claim checks again on the item itself). Those of ``skip_endpoints`` (busy ones)
        are read past, up to ``max_read`` rows, so that a slow endpoint's backlog does not
        hide the other endpoints' deliveries behind it."""
        owed = STILL_DUE & attr("next_attempt_at").le(_n(now))
        if not skip_endpoints:
            return list(self.table.query(index="due", key_condition=owed, limit=limit))
        found = []
        for read, row in enumerate(self.table.query(index="due", key_condition=owed,
                                                    page_size=limit), start=1):
            if row["endpoint_id"] not in skip_endpoints:
                found.append(row)
            if len(found) >= limit or read >= max_read:
                break
        return found

    def claim(self, delivery_id: str, *, seen: int, now: float, lease_seconds: float,
              runner: str) -> dict | None:
        """Make attempt ``seen + 1``; the delivery as claimed, or None if another worker
        claimed it (or it was delivered, or is not due)."""
        try:
            return self.table.update(
                {"delivery_id": delivery_id},
                Actions().set("attempts", seen + 1)
                .set("next_attempt_at", _n(now + lease_seconds)).set("claimed_by", runner),
                condition=attr("attempts").eq(seen) & STILL_DUE
                & attr("next_attempt_at").le(_n(now)),
                return_values="ALL_NEW")
        except ConditionFailed:
            return None

    def delivered(self, delivery_id: str, entry: dict, *, now: float) -> bool:
        """Record the delivery done (any attempt's success counts); False if it was already."""
        return self._finish(delivery_id, entry, DELIVERED, now=now)

    def abandon(self, delivery_id: str, entry: dict, *, now: float) -> bool:
        """Stop owing it (its endpoint was deleted or disabled)."""
        return self._finish(delivery_id, entry, ABANDONED, now=now)

    def _finish(self, delivery_id: str, entry: dict, status: str, *, now: float) -> bool:
        try:
            self.table.update(
                {"delivery_id": delivery_id},
                Actions().set("status", status).set("finished_at", _n(now))
                .set(LOG, list_append(LOG, [entry])).remove("due_in"),
                condition=STILL_DUE)
        except ConditionFailed:
            return False
        return True

    def retry_at(self, delivery_id: str, entry: dict, *, attempt: int, at: float) -> bool:
        """After a failed attempt ``attempt``: due again at ``at`` (unless a newer attempt
        was claimed meanwhile, or it was delivered)."""
        try:
            self.table.update(
                {"delivery_id": delivery_id},
                Actions().set("next_attempt_at", _n(at)).set(LOG, list_append(LOG, [entry])),
                condition=attr("attempts").eq(attempt) & STILL_DUE)
        except ConditionFailed:
            return False
        return True

    def for_endpoint(self, endpoint_id: str, *, limit: int = 50) -> list[dict]:
        """The endpoint's newest deliveries (the admin's log)."""
        return list(self.table.query(index="by_endpoint", key_condition=ENDPOINT.eq(endpoint_id),
                                     forward=False, limit=limit))

