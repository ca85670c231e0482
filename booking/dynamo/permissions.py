"""Which DynamoDB operations each deployed process issues on each table (least privilege).

The AWS template (``booking/deploy/template.py``) turns this into the IAM policies of its
roles, and into the per-operation ``ThrottledRequests`` / ``SystemErrors`` alarms. It is
kept next to ``tables.py`` because it is the same kind of fact: what the access layer does
to each table. ``tests/deploy/test_permissions.py`` checks it against the code: it runs
each process's scenarios (``tests/deploy/scenarios.py``) with a recorder on the client and
fails if the code calls anything not granted here, or if a grant is neither observed nor
listed in ``RARE_PATHS`` with the code that needs it.

Operations are the API's names; an item of a ``TransactWriteItems`` is named by its kind
(``TransactWriteItems.Put``), because IAM authorizes each item by its own action
(``dynamodb:PutItem``, ``UpdateItem``, ``DeleteItem``, ``ConditionCheckItem``).

Roles:

- ``web``: gunicorn (public pages, admin, API), ``booking_worker --no-decider`` (e-mails
  owed, waiting-list offers, webhook deliveries), and the management commands (``check_capacity --repair``,
  ``replay_failed``, ``create_event``, ...). Tables are created by CloudFormation, so no
  ``CreateTable`` / ``UpdateTimeToLive``.
- ``worker_decider``: what a ``booking_worker`` running its own stream decider needs beyond
  ``web`` (granted to the web role only when no Lambda decider is deployed).
- ``decider``: the Lambda (``booking.lambda_handler.handler``).
- ``probe``: the scheduled outbox backlog probe (``booking.lambda_handler.outbox_backlog``).
"""
from booking.dynamo.tables import (ACCESS_CODES, ANSWERS, CHECKINS, EVENT_LOCKS, EVENTS, HISTORY, LEASES, OUTBOX, RATE_LIMITS,
                                   REGISTRATIONS, REQUESTS, SLOTS, STREAM_CHECKPOINTS,
                                   STREAM_REGISTRATIONS, WAITING_LIST, WEBHOOK_DELIVERIES,
                                   WEBHOOK_ENDPOINTS, TableSpec)

PUT, UPDATE, DELETE, CHECK = ("TransactWriteItems.Put", "TransactWriteItems.Update",
                              "TransactWriteItems.Delete", "TransactWriteItems.ConditionCheck")

# role -> {(table, index or None): operations}
GRANTS: dict[str, dict[tuple[TableSpec, str | None], frozenset[str]]] = {
    "web": {
        (EVENTS, None): frozenset({"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Scan",
                                   "BatchGetItem", PUT, UPDATE, CHECK}),
        (EVENT_LOCKS, None): frozenset({"GetItem", "PutItem", "UpdateItem", "DeleteItem",
                                        "BatchGetItem", PUT, UPDATE}),
        # UPDATE: a cancellation of part of an order keeps the rest (lock_table, slots).
        (REGISTRATIONS, None): frozenset({"GetItem", "Query", "BatchGetItem", "BatchWriteItem",
                                          PUT, UPDATE, DELETE, CHECK}),
        (SLOTS, None): frozenset({"Query", "UpdateItem", "BatchWriteItem", PUT, UPDATE,
                                  DELETE}),
        (SLOTS, "free_slots"): frozenset({"Query"}),
        (STREAM_REGISTRATIONS, None): frozenset({"GetItem", "Query", "BatchWriteItem", PUT,
                                                 DELETE, CHECK}),
        (STREAM_CHECKPOINTS, None): frozenset({"Scan"}),
        (WAITING_LIST, None): frozenset({"GetItem", "Query", "Scan", "BatchWriteItem", PUT,
                                         UPDATE, CHECK}),
        (REQUESTS, None): frozenset({"GetItem", "BatchGetItem", "PutItem", PUT}),
        (OUTBOX, None): frozenset({"GetItem", "PutItem", "DeleteItem", "Scan", PUT}),
        (HISTORY, None): frozenset({"PutItem", "UpdateItem", "Query", "Scan"}),
        (LEASES, None): frozenset({"GetItem", "PutItem", "DeleteItem"}),
        (RATE_LIMITS, None): frozenset({"GetItem", "BatchGetItem", "UpdateItem"}),
        (WEBHOOK_ENDPOINTS, None): frozenset({"GetItem", "PutItem", "UpdateItem", "Scan"}),
        (WEBHOOK_DELIVERIES, None): frozenset({"PutItem", "UpdateItem"}),
        (WEBHOOK_DELIVERIES, "due"): frozenset({"Query"}),
        (WEBHOOK_DELIVERIES, "by_endpoint"): frozenset({"Query"}),
        (CHECKINS, None): frozenset({"GetItem", "PutItem", "Query", "BatchGetItem", PUT,
                                     UPDATE}),
        (ACCESS_CODES, None): frozenset({"GetItem", "Query", "Scan", "UpdateItem", "DeleteItem",
                                         "BatchWriteItem", PUT, UPDATE}),
        (ANSWERS, None): frozenset({"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query",
                                    "BatchWriteItem", PUT, DELETE}),
    },
    "worker_decider": {
        (STREAM_REGISTRATIONS, None): frozenset({"DescribeTable", "Scan", "DeleteItem",
                                                 UPDATE}),
        (STREAM_CHECKPOINTS, None): frozenset({"GetItem", "PutItem", "UpdateItem"}),
    },
    "decider": {
        (STREAM_REGISTRATIONS, None): frozenset({"DeleteItem", UPDATE}),
        (EVENTS, None): frozenset({"GetItem", UPDATE, CHECK}),
        (OUTBOX, None): frozenset({PUT}),
        (ACCESS_CODES, None): frozenset({UPDATE}),  # a rejection gives its code's use back
    },
    "probe": {
        (OUTBOX, None): frozenset({"Scan"}),
    },
}

# Grants the scenarios do not reach, each with the code that issues it (the test checks
# the code is there): error paths, repairs, lost answers.
RARE_PATHS: dict[tuple[str, str, str | None, str], tuple[str, str]] = {
    ("web", "event_locks", None, "PutItem"): (
        "booking/strategies/lock_table/audit.py", "self.locks.put({**key, \"capacity\": size"),
    ("web", "outbox", None, "GetItem"): ("booking/mail/replay.py", "sender.outbox.get(key)"),
    ("web", "request_history", None, "Query"): (
        "booking/dynamo/history.py", "self.table.query(key_condition=attr(\"request_id\")"),
    ("web", "slots", None, "UpdateItem"): (
        "booking/strategies/slots/audit.py", "strategy.slots.update, {\"event_id\": part"),
    ("web", "slots", None, DELETE): (
        "booking/strategies/slots/capacity.py", "Delete(strategy.slots, {\"event_id\": part"),
    ("web", "waiting_list", None, "BatchWriteItem"): (
        "booking/dynamo/table.py", "def delete_partition"),
    ("web", "requests", None, "PutItem"): (
        "booking/exactly_once/request_log.py", "self.table.put(row, condition=condition)"),
    # Creating codes with reserved seats when the seats are not there: the codes go again.
    ("web", "access_codes", None, "DeleteItem"): (
        "booking/service/reserved_seats.py", "self.table.delete(code_key(event.id, code.code))"),
    # An API booking's first read: the abuse limits' items, alone or in the strategy's
    # first read after a sell-out (not reached by the scenarios).
    ("web", "rate_limits", None, "BatchGetItem"): (
        "booking/dynamo/rate_limits.py", "self.table.store.batch_get(self.asked_keys("),
    ("web", "leases", None, "GetItem"): ("booking/dynamo/leases.py",
                                         "return self.table.get({\"lease_id\": lease_id})"),
    ("worker_decider", "stream_registrations", None, "DeleteItem"): (
        "booking/strategies/streams/__init__.py", "def _forget_orphan"),
    ("decider", "stream_registrations", None, "DeleteItem"): (
        "booking/strategies/streams/__init__.py", "def _forget_orphan"),
    # The answers of a streams request the decider rejected, deleted as its e-mail goes out.
    ("web", "answers", None, "DeleteItem"): (
        "booking/mail/sender.py", "self.answers.delete(message[\"event_id\"], message[\"registration_id\"])"),
    # The first answers of an order booked before its event had questions.
    ("web", "answers", None, "PutItem"): (
        "booking/questions/service.py", "self.store.table.put({**fresh.item(registration.email)"),
    # A rejection the decider's read did not settle checks the event item is still full.
    ("decider", "events", None, CHECK): (
        "booking/strategies/streams/__init__.py", "event = ConditionCheck(self.events, key, condition)"),
}

# What the Lambda service itself reads from the stream with the decider's role (the
# event source mapping), not calls of the code.
# (Lambda also asks for ``ListStreams``, which names no resource: granted on "*".)
STREAM_MAPPING_ACTIONS = ("DescribeStream", "GetRecords", "GetShardIterator")
# What the worker's decider reads from the stream with its own client (booking/dynamo/streams.py).
WORKER_STREAM_ACTIONS = ("DescribeStream", "GetRecords", "GetShardIterator")

_TRANSACTION_ACTIONS = {PUT: "PutItem", UPDATE: "UpdateItem", DELETE: "DeleteItem",
                        CHECK: "ConditionCheckItem"}


def iam_action(operation: str) -> str:
    """``TransactWriteItems.Put`` -> ``PutItem``; other operations are their own action."""
    return _TRANSACTION_ACTIONS.get(operation, operation)


def grants(role: str) -> dict[tuple[TableSpec, str | None], frozenset[str]]:
    """(table, index) -> IAM actions (without the ``dynamodb:`` prefix) for ``role``."""
    return {target: frozenset(iam_action(op) for op in operations)
            for target, operations in GRANTS[role].items()}


def api_operations(spec: TableSpec) -> list[str]:
    """The API operations any role issues on ``spec`` (CloudWatch's ``Operation``
    dimension: a transaction counts as ``TransactWriteItems``), sorted."""
    found: set[str] = set()
    for role in GRANTS.values():
        for (table, _index), operations in role.items():
            if table is spec:
                found.update(op.split(".")[0] for op in operations)
    found.discard("DescribeTable")
    return sorted(found)


def in_transactions(spec: TableSpec) -> bool:
    """Whether any role writes ``spec`` inside a transaction."""
    return any(op.startswith("TransactWriteItems.") for role in GRANTS.values()
               for (table, _index), operations in role.items() if table is spec
               for op in operations)
