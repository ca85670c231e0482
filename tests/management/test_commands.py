"""Event scripting commands: create_event, list_events, seed_demo."""
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_create_event__valid__prints_id_and_stores_event(service):
    event_id = run("create_event", "--name", "Talk", "--capacity", "3",
                   "--strategy", "slots", "--starts-at", "2030-05-01T18:00+02:00").split()[0]

    event = service.get_event(event_id)
    assert (event.name, event.capacity, event.strategy) == ("Talk", 3, "slots")
    assert event.starts_at.isoformat() == "2030-05-01T16:00:00+00:00"  # stored in UTC


def test_create_event__json__prints_whole_event(service):
    data = json.loads(run("create_event", "--name", "Talk", "--capacity", "3", "--json"))

    assert data["organizer"] == "acme"  # the only organizer
    assert set(data) == {"id", "organizer", "name", "capacity", "strategy", "version", "starts_at", "ends_at",
                         "time_zone", "venue", "description", "created_at"}
    assert service.get_event(data["id"]).strategy == data["strategy"] == "lock_table"


@pytest.mark.parametrize("args, message", [
    (("--capacity", "3.5"), "Capacity must be a whole number."),
    (("--capacity", "-1"), "Capacity cannot be negative."),
    (("--capacity", "3", "--strategy", "nope"), "Unknown strategy."),
    (("--capacity", "900", "--strategy", "aggregate"), "at most 441 seats"),
    (("--capacity", "3", "--starts-at", "soon"), "ISO 8601"),
])
def test_create_event__bad_input__command_error_and_nothing_stored(service, args, message):
    with pytest.raises(CommandError, match=message) as failed:
        run("create_event", "--name", "Talk", *args)

    assert failed.value.returncode == 2
    assert service.list_events() == []


def test_list_events__table_and_json__show_counts_and_strategy(service):
    event = service.create_event(name="Talk", capacity=3, strategy="aggregate")
    service.book(event.id, name="Ada", email="ada@example.com")

    rows = json.loads(run("list_events", "--json"))
    text = run("list_events")

    assert [(r["id"], r["capacity"], r["confirmed"], r["remaining"], r["strategy"])
            for r in rows] == [(event.id, 3, 1, 2, "aggregate")]
    assert "CONFIRMED" in text and event.id in text and "aggregate" in text


def test_list_events__none__says_how_to_create(service):
    assert "No events yet" in run("list_events")


def test_seed_demo__empty_store__creates_future_events_once(service):
    run("seed_demo")
    events = service.list_events()

    assert len(events) >= 3 and len({e.strategy for e in events}) == 3
    assert all(e.starts_at > timezone.now() for e in events)
    assert "nothing seeded" in run("seed_demo")
    assert len(service.list_events()) == len(events)
    run("seed_demo", "--force")
    assert len(service.list_events()) == 2 * len(events)


def test_create_event__product_service__unguarded_control_refused_nothing_stored(service):
    # The product's registry offers only guarded strategies: the control is built by
    # tests and harnesses alone (harness/controls.py), never reachable from a command.
    from booking import wiring

    wiring.reset_services()  # the service built from settings, as in production

    with pytest.raises(CommandError, match="Unknown strategy") as failed:
        run("create_event", "--name", "Talk", "--capacity", "3", "--strategy", "unguarded")

    assert failed.value.returncode == 2
    assert "unguarded" not in wiring.get_booking_service().catalog.strategies
    assert service.list_events() == []


def test_create_event__a_quota_beyond_the_capacity__created_with_a_warning(service):
    """Kept (the capacity may grow), but not without a word, as the admin's editor warns."""
    out, err = StringIO(), StringIO()
    call_command("create_event", "--name", "Small", "--capacity", "10", "--quota",
                 "workshop-a=30", "--id-only", stdout=out, stderr=err)
    assert len(out.getvalue().split()) == 1  # the id only, for scripts
    assert "the quota workshop-a has 30 seats, more than the event's 10" in err.getvalue()
