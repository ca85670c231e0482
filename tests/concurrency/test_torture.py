"""The torture run end to end (manage.py torture): several OS processes, faults on, a fixed
seed; the checker must find nothing for the guarded strategies and must find the
anomalies of the controls (no guard; no request row in the booking's write), which proves
it can see them. Every process also sends the outbox's e-mails at the same time as the
others; each must go out exactly once. Every strategy that takes orders also gets an
order event in the same run (ticket types sharing two workshop quotas, orders of 1-4
seats, partial cancellations): the unguarded control is caught overbooking a quota there.
Scanners at the door run beside the bookings (harness/torture/door.py): a pass admitted
twice on a list without re-entry or a room over its limit is found, and a read-then-write
scanner is caught.
"""
import json
import re
from io import StringIO

import pytest
from tests import conformance
from django.core.management import CommandError, call_command


pytestmark = pytest.mark.concurrency

FAULTS = "throttle=0.05,lost_response=0.03,error500=0.02,delay_ms=0-5"


def torture(*args) -> tuple[int, dict]:
    out = StringIO()
    try:
        call_command("torture", "--json", "--faults", FAULTS, *args, stdout=out)
        status = 0
    except CommandError as failed:
        status = failed.returncode
    return status, json.loads(out.getvalue())


def test_torture__guarded_strategies_with_faults__no_anomaly():
    status, report = torture("--processes", "3", "--threads", "12", "--ops", "900",
                             "--seed", "20261123", "--strategies",
                             ",".join(conformance.ALL))

    assert report["anomalies"] == [], report["anomaly_counts"]
    assert status == 0
    assert report["operations"] >= 900
    assert all(report["faults"][kind] > 0 for kind in ("throttle", "lost_response", "error500"))
    assert {"repeat", "double", "shared", "mismatch"} <= set(report["steps"])
    assert report["codes"]["event_full"] > 0 and report["codes"]["ok"] > 0
    # Refusals are the product working: counted apart from failures (anomalies).
    assert report["expected_refusals"]["event_full"] == report["codes"]["event_full"]
    assert report["failures"] == 0
    for event in report["events"]:
        assert event["stored"] == event["counter"] <= event["capacity"]
    assert report["mail"]["sent"] == report["mail"]["messages"] > 0
    assert report["mail"]["still_owed"] == 0
    assert report["decider_kills"] == 1  # the streams event's decider, mid-run
    # Orders: an order event for every strategy, whole, quota by quota.
    ordering = set(conformance.ALL)
    assert {e["strategy"] for e in report["events"] if e["orders"]} == ordering
    for event in (e for e in report["events"] if e["orders"]):
        assert set(event["quotas"]) == {"capacity", "workshop-a", "workshop-b"}
        for quota in event["quotas"].values():
            assert quota["stored"] == quota["counter"] <= quota["capacity"]
            assert quota["peak_seen"] <= quota["capacity"]
    by_step = report["outcomes_by_step"]
    assert by_step["order"]["ok"] > 0 and by_step["partial"]["ok"] > 0, by_step
    # The door: scans from every process beside the bookings, with repeats and lost answers.
    door = report["door"]
    assert door["scans"] > 0 and door["repeated_nonces"] > 0, door
    assert {"admitted", "already_admitted", "exited"} <= set(door["answers"]), door
    # Access codes: every plain event's code ran out, and cancellations gave uses back.
    assert report["codes"]["access_code_used_up"] > 0
    coded = [e["code"] for e in report["events"] if e.get("code")]
    assert len(coded) == len(conformance.ALL)
    for code in coded:
        assert code["uses"] == code["holders"] <= code["max_uses"]
    assert by_step["cancel"]["ok"] > 0


def test_torture__unguarded_control__overbooking_found_and_saved_run_rechecks(tmp_path,
                                                                            monkeypatch):
    # The control's workers run without the cool-down after a throttle: turning an event's
    # requests away for a second after each injected throttle would hide its overbooking
    # by leaving fewer bookings in flight at once.
    monkeypatch.setenv("BOOKING_SHED_SECONDS", "0.001")
    saved = tmp_path / "run.json"
    status, report = torture("--processes", "3", "--threads", "8", "--ops", "300",
                             "--seed", "7", "--strategies", "unguarded",
                             "--unguarded-race-delay-ms", "10", "--history", str(saved))

    assert status == 1
    assert report["anomaly_counts"].get("overbooked", 0) > 0, report["anomaly_counts"]
    assert report["failures"] == len(report["anomalies"]) > 0
    plain, orders = (next(e["id"] for e in report["events"] if e["orders"] is kind)
                     for kind in (False, True))
    # Found on the plain event (5 seats), the order event (10 seats, quotas of 5), or both:
    # which one a run overbooks varies with the machine's load (each also has a race of its
    # own: tests/concurrency/test_booking_races.py, test_order_races.py).
    overbooked = [a for a in report["anomalies"] if a["kind"] == "overbooked"]
    assert {a["event_id"] for a in overbooked} <= {plain, orders}
    assert all(re.search(r"for (5|10) seats", a["detail"]) for a in overbooked), overbooked
    again_status, again = torture("--check-history", str(saved))
    assert (again_status, again["anomalies"]) == (1, report["anomalies"])
    assert again["operations"] == report["operations"]


def test_torture__no_request_rows__repeats_run_twice_found():
    # 300 steps over its plain and its order event, no faults (the repeats and reused ids
    # of the steps themselves show it; with faults it took twice as long): caught in every
    # run so far.
    status, report = torture("--processes", "3", "--threads", "8", "--ops", "300",
                             "--seed", "8", "--strategies", "lock_table", "--faults", "none",
                             "--no-request-history")

    assert status == 1
    found = report["anomaly_counts"]
    assert found.get("reused_id_ran", 0) + found.get("executed_twice", 0) \
        + found.get("answer_changed", 0) > 0, found
    assert any(a.get("history") for a in report["anomalies"])  # with its history excerpt


def test_torture__careless_codes_door_and_mail__each_found(monkeypatch):
    # Three controls of three separate parts, in one run (each is a run's worth of time):
    # - access codes that check the uses by a read, then count without a condition
    #   (harness.controls.CarelessAccessCodes). Seats to spare and a code of 2 uses: its
    #   orders meet the code's limit while seats are free (with a code for half the seats,
    #   the event was full first in most runs);
    # - scanners that read the pass (and the room's counter), then write without a
    #   condition (--careless-door);
    # - senders that skip the atomic counter send the same outbox row more than once when
    #   they see it at the same moment (--no-mail-claims).
    monkeypatch.setenv("BOOKING_SHED_SECONDS", "0.001")
    status, report = torture("--processes", "3", "--threads", "8", "--ops", "400",
                             "--seed", "11", "--strategies", "lock_table", "--faults", "none",
                             "--capacity", "20", "--code-uses", "2", "--careless-access-codes",
                             "--careless-door", "--no-mail-claims")

    assert status == 1
    found = report["anomaly_counts"]
    assert found.get("code_over_limit", 0) > 0, found
    assert found.get("door_admitted_twice", 0) + found.get("door_over_limit", 0) \
        + found.get("door_counter", 0) > 0, (found, report["door"])
    assert found.get("mail_twice", 0) > 0, found
