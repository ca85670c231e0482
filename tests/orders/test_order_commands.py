"""create_event's order options and check_capacity on an event with quotas."""
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.orders.test_orders import devconf


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_event__quotas_types_and_seats_per_order(service, default_organizer):
    data = json.loads(run("create_event", "--name", "DevConf", "--capacity", "50",
                          "--quota", "workshop-a=10", "--quota", "workshop-b=12",
                          "--ticket-type", "conference", "--ticket-type", "workshop-a:workshop-a",
                          "--ticket-type", "both:workshop-a,workshop-b",
                          "--max-per-order", "4", "--json"))
    assert data["quotas"] == {"workshop-a": 10, "workshop-b": 12}
    assert data["ticket_types"] == {"conference": [], "workshop-a": ["workshop-a"],
                                    "both": ["workshop-a", "workshop-b"]}
    assert data["max_per_order"] == 4
    event = service.get_event(data["id"])
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"both": 2})
    assert {n: q.remaining for n, q in service.availability(event.id).quotas.items()} == {
        "capacity": 48, "workshop-a": 8, "workshop-b": 10}
    assert run("check_capacity", event.id) == "Checked 1 event(s): all invariants hold.\n"


def test_create_event__without_order_options__prints_as_ever(service, default_organizer):
    data = json.loads(run("create_event", "--name", "Talk", "--capacity", "3", "--json"))
    assert "quotas" not in data and "ticket_types" not in data


@pytest.mark.parametrize("args,message", [
    (["--quota", "workshop"], "NAME=N"),
    (["--quota", "a=x"], "NAME=N"),
    (["--quota", "a=1", "--quota", "a=2"], "twice"),
    (["--max-per-order", "many"], "whole number"),
    (["--ticket-type", "t:nope"], "unknown quota 'nope'"),
    (["--max-per-order", "0"], "from 1 to 50"),
    (["--expected-rate", "fast"], "whole number"),
    (["--expected-rate", "0"], "from 1 to 1,000,000"),
])
def test_create_event__bad_order_options__exit_2_and_nothing_stored(service, args, message,
                                                                  default_organizer):
    with pytest.raises(CommandError) as refused:
        run("create_event", "--name", "X", "--capacity", "5", *args)
    assert message in str(refused.value) and refused.value.returncode == 2
    assert service.list_events() == []


def test_list_events_json__every_strategy__each_quota_with_its_seats(service):
    for strategy in ("aggregate", "lock_table", "slots", "streams"):
        event = devconf(service, strategy, workshop=3)
        service.book(event.id, name="Ada", email="ada@example.com",
                     tickets={"conference": 1, "workshop-a": 2})
    rows = json.loads(run("list_events", "--json"))
    assert sorted(row["strategy"] for row in rows) == ["aggregate", "lock_table", "slots",
                                                      "streams"]
    for row in rows:
        confirmed = 0 if row["strategy"] == "streams" else 2  # streams: decided later
        assert row["quota_seats"]["workshop-a"] == {
            "capacity": 3, "confirmed": confirmed, "held": 0, "remaining": 3 - confirmed}, row
        assert row["quota_seats"]["capacity"]["confirmed"] == confirmed + confirmed // 2
        assert row["quotas_remaining"]["workshop-b"] == 3


def test_create_event__expected_rate__shards_split_for_it(service, default_organizer):
    event_id = run("create_event", "--name", "Drop", "--capacity", "100", "--strategy",
                   "shards", "--expected-rate", "5000", "--id-only").strip()
    assert service.get_event(event_id).expected_rate == 5000
    assert service.strategy("shards").shard_count(event_id) == 13
