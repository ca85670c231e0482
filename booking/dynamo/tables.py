"""The one place that defines table names, key schemas, indexes and TTL attributes.

A table's full name is the deployment's prefix (``Store.table_prefix``) and its suffix."""
from typing import Any
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Index:
    name: str
    hash_key: tuple[str, str]
    range_key: tuple[str, str] | None = None
    projection: str = "ALL"


@dataclass(frozen=True)
class TableSpec:
    suffix: str
    hash_key: tuple[str, str]  # (attribute name, "S" | "N" | "B")
    range_key: tuple[str, str] | None = None
    indexes: tuple[Index, ...] = field(default_factory=tuple)
    ttl_attribute: str | None = None
    # A DynamoDB Streams view type ("NEW_IMAGE", ...) for a table whose stream is read.
    stream_view: str | None = None

    def name_with(self, prefix: str) -> str:
        return f"{prefix}{self.suffix}"

    def key(self, hash_value: object, range_value: object = None) -> dict[str, object]:
        key: dict[str, object] = {self.hash_key[0]: hash_value}
        if self.range_key is not None:
            key[self.range_key[0]] = range_value
        return key

    def create_request(self, name: str) -> dict[str, Any]:
        attributes = {self.hash_key, *(filter(None, [self.range_key]))}
        for index in self.indexes:
            attributes.update(filter(None, [index.hash_key, index.range_key]))
        request: dict[str, Any] = {
            "TableName": name,
            "KeySchema": _key_schema(self.hash_key, self.range_key),
            "AttributeDefinitions": [
                {"AttributeName": n, "AttributeType": t} for n, t in sorted(attributes)
            ],
            "BillingMode": "PAY_PER_REQUEST",
        }
        if self.indexes:
            request["GlobalSecondaryIndexes"] = [
                {
                    "IndexName": index.name,
                    "KeySchema": _key_schema(index.hash_key, index.range_key),
                    "Projection": {"ProjectionType": index.projection},
                }
                for index in self.indexes
            ]
        if self.stream_view:
            request["StreamSpecification"] = {"StreamEnabled": True,
                                              "StreamViewType": self.stream_view}
        return request


def _key_schema(hash_key: tuple[str, str],
                range_key: tuple[str, str] | None) -> list[dict[str, str]]:
    schema = [{"AttributeName": hash_key[0], "KeyType": "HASH"}]
    if range_key is not None:
        schema.append({"AttributeName": range_key[0], "KeyType": "RANGE"})
    return schema


# Event metadata; under the aggregate strategy also its attendees, count and version.
EVENTS = TableSpec("events", hash_key=("event_id", "S"))

# One item per registration (lock_table, slots, unguarded); listed per person by e-mail.
REGISTRATIONS = TableSpec(
    "registrations",
    hash_key=("event_id", "S"),
    range_key=("email", "S"),
    indexes=(Index("by_email", hash_key=("email", "S"), range_key=("event_id", "S")),),
)

# lock_table: one counter item per event, written in the same transaction as a registration.
# (shards keeps its shard and marker items here; slots its freed epoch, ``<event id>#freed``.)
EVENT_LOCKS = TableSpec("event_locks", hash_key=("event_id", "S"))

# slots: one item per seat. The sparse index holds only free slots (free_in is set while
# free), sorted by a random shuffle key so that concurrent clients start at different slots.
SLOTS = TableSpec(
    "slots",
    hash_key=("event_id", "S"),
    range_key=("slot", "N"),
    indexes=(
        Index(
            "free_slots",
            hash_key=("free_in", "S"),
            range_key=("shuffle", "N"),
            projection="KEYS_ONLY",
        ),
    ),
)

# Time-limited leases for maintenance jobs; TTL only cleans up, expires_at decides.
LEASES = TableSpec("leases", hash_key=("lease_id", "S"), ttl_attribute="ttl")

# Request history (execution history): immutable started / succeeded / failed rows per request id,
# in sequence order. TTL only cleans up; a row past its ``ttl`` is treated as absent.
HISTORY = TableSpec("request_history", hash_key=("request_id", "S"), range_key=("seq", "N"),
                    ttl_attribute="ttl")

# Request rows: one per booking or cancellation that took effect, keyed by its request id,
# written inside the strategy's own transaction (booking/exactly_once/request_log.py). TTL only cleans up.
REQUESTS = TableSpec("requests", hash_key=("request_id", "S"), ttl_attribute="ttl")

# Outbox: one row per e-mail owed (confirmation, cancellation), written in the same
# transaction as the booking or cancellation; deleted once sent (booking/exactly_once/outbox.py).
OUTBOX = TableSpec("outbox", hash_key=("message_id", "S"))

ALL_TABLES: tuple[TableSpec, ...] = (EVENTS, REGISTRATIONS, EVENT_LOCKS, SLOTS, LEASES, HISTORY,
                                     REQUESTS, OUTBOX)

# --- Rate limits (booking/entry/limits.py) ---------------------------------------------
# One counter item per (limit, client, time window): `ADD hits :one` is atomic across every
# process and host. The window is part of the key, so an old item never counts again; TTL
# only cleans up.
RATE_LIMITS = TableSpec("rate_limits", hash_key=("bucket", "S"), ttl_attribute="ttl")
ALL_TABLES = ALL_TABLES + (RATE_LIMITS,)

# --- Waiting list (booking/waitlist/engine.py) -------------------------------------------
# One entry per person and event, keyed by the e-mail key (so "one entry per person" is a
# conditional put), with its place in line (``position``, from the event's counter item,
# whose sort key "#counter" can never be an e-mail key). Entries that ended (left,
# expired, booked) carry a ``ttl``: TTL only cleans up, the status decides.
WAITING_LIST = TableSpec("waiting_list", hash_key=("event_id", "S"), range_key=("email", "S"),
                         ttl_attribute="ttl")
ALL_TABLES = ALL_TABLES + (WAITING_LIST,)

# --- Streams strategy (booking/strategies/streams/__init__.py, booking/strategies/streams/decider.py) --------------
# Provisional registrations, one item per (event, e-mail key), status pending -> confirmed
# or rejected. Its stream carries each one to the decider, in order per partition.
STREAM_REGISTRATIONS = TableSpec("stream_registrations", hash_key=("event_id", "S"),
                                 range_key=("email", "S"), stream_view="NEW_IMAGE")
# The decider's position in each shard of that stream (shard id -> last sequence number
# decided), and one heartbeat row per decider.
STREAM_CHECKPOINTS = TableSpec("stream_checkpoints", hash_key=("shard_id", "S"))
ALL_TABLES = ALL_TABLES + (STREAM_REGISTRATIONS, STREAM_CHECKPOINTS)

# --- Webhooks (booking/webhooks/, docs/webhooks.md) ------------------------------------
# Organizers' endpoints: one item each (url, secret, events, scope: an event id or "*").
# Few and small, so the fan-out reads them all in one consistent Scan. A removed endpoint
# stays as a tombstone (``deleted_at``) until its ``ttl``, so its Idempotency-Key still
# answers the first 201.
WEBHOOK_ENDPOINTS = TableSpec("webhook_endpoints", hash_key=("endpoint_id", "S"),
                              ttl_attribute="ttl")
# One delivery per (change, endpoint, event type), keyed by its ``webhook-id``: the body is
# fixed when it is written, every attempt sends the same bytes. ``due`` is sparse: only a
# delivery still owed carries ``due_in`` (the worker queries it by ``next_attempt_at``);
# ``by_endpoint`` is the delivery log the admin shows. TTL only cleans up.
WEBHOOK_DELIVERIES = TableSpec(
    "webhook_deliveries", hash_key=("delivery_id", "S"), ttl_attribute="ttl",
    indexes=(Index("due", hash_key=("due_in", "S"), range_key=("next_attempt_at", "N")),
             Index("by_endpoint", hash_key=("endpoint_id", "S"),
                   range_key=("created_at", "N"))))
ALL_TABLES = ALL_TABLES + (WEBHOOK_ENDPOINTS, WEBHOOK_DELIVERIES)

# --- Check-in at the door (booking/checkin/, docs/checkin.md) ------------------------------
# One table, items by key shape:
#   ("list#<list id>", "#list")         a check-in list: its settings and, with an occupancy
#                                        limit, its ``inside`` counter (written in the scan's
#                                        transaction, conditioned ``inside < limit``)
#   ("event#<event id>", "list#<id>")   the event's lists, for listing them
#   ("list#<list id>", "pass#<pass id>") one pass on one list: in or out, first admission
#   ("list#<list id>", "scan#<nonce>")  one scan, keyed by its nonce: its answer (the log)
#   ("list#<list id>", "conflict#...")  a pass admitted offline twice: both gates and times
#   ("order#<registration id>", "#door") an order's passes: which are cancelled, admitted
CHECKINS = TableSpec("checkins", hash_key=("pk", "S"), range_key=("sk", "S"))
ALL_TABLES = ALL_TABLES + (CHECKINS,)
# --- Access codes (booking/exactly_once/access_codes.py, docs/orders.md) ----------------
# One item per (event, code): its limit (``max_uses``), the orders holding it (``uses``,
# counted inside each order's own write), ``valid_until``, the ticket types it unlocks and
# ``revoked_at``. The code is stored in capitals (codes are case-insensitive).
ACCESS_CODES = TableSpec("access_codes", hash_key=("event_id", "S"), range_key=("code", "S"))
ALL_TABLES = ALL_TABLES + (ACCESS_CODES,)
# --- Answers to the organizer's questions (booking/questions/, docs/orders.md#questions) --
# One item per order that was asked anything, keyed by its registration id, put in the
# order's own write and deleted in its cancellation's; the event's items are queried for
# the export and the purge.
ANSWERS = TableSpec("answers", hash_key=("event_id", "S"), range_key=("registration_id", "S"))
ALL_TABLES = ALL_TABLES + (ANSWERS,)
