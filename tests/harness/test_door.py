"""The ticket drop through the door (``bench_booking --drop ... --via api|form``): make
serve's stack (nginx, gunicorn, the worker) on a DynamoDB Local behind the capacity proxy,
a tiny drop (30 people for 5 seats within 3 s), each person from its own loopback address."""
import json
from io import StringIO

import pytest
from django.core.management import call_command

from harness.bench.door import person_address
from harness.serving import nginx_available

pytestmark = pytest.mark.skipif(not nginx_available(), reason="needs Debian's nginx "
                                "(scripts/ensure_nginx.sh)")


def tiny_drop(via: str, strategy: str) -> dict:
    out = StringIO()
    call_command("bench_booking", "--drop", "30:5:3", "--scale", "1", "--strategies", strategy,
                 "--via", via, "--patience", "20", "--probes", "2", "--workers", "2",
                 "--threads", "16", "--warmup", "30", "--json", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


@pytest.fixture(scope="module", params=[("api", "lock_table"), ("form", "shards"),
                                        ("api", "streams")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def drop_row(request):
    results = tiny_drop(*request.param)
    assert results["drop_config"]["via"] == request.param[0]
    return {"via": request.param[0], **results["drop"][0]}


def test_door__every_person_a_definite_answer_never_overbooked(drop_row):
    assert drop_row["people"] == 30 and drop_row["seats"] == 5
    assert drop_row["booked"] == 5 and drop_row["full"] == 25
    assert drop_row["not_definite"] == 0 and drop_row["other"] == {}
    # What the store holds: the drop's 5 and the 2 people booked alone before it; each
    # person told "booked" holds a seat, and each seat's holder was told.
    assert drop_row["confirmed_stored"] == 5 + 2 and drop_row["overbooked"] == 0
    assert drop_row["told_booked_not_confirmed"] == 0 and drop_row["confirmed_not_told"] == 0
    assert drop_row["sold_out_s"] is not None and len(drop_row["timeline"]) == 5


def test_door__each_person_seen_from_their_own_address(drop_row):
    # 30 in the drop, 2 booked alone, 2 refused alone: gunicorn saw each one's own address
    # in X-Forwarded-For (nginx's), which the app's per-address limits count.
    assert drop_row["client_addresses_seen"] == 34
    assert len({person_address(i) for i in range(100_000)}) == 100_000
    assert not any(person_address(i) in ("127.0.0.1",) for i in range(1000))


def test_door__web_tier_and_store_figures(drop_row):
    # nginx's share is a few clock ticks for 30 people: read, perhaps 0.
    assert drop_row["gunicorn_cpu_s_per_person"] > 0 and drop_row["nginx_cpu_s_per_person"] >= 0
    assert drop_row["nginx_processes"] >= 2  # its master and at least one worker
    assert drop_row["gunicorn_workers"] == 2 and drop_row["requests_per_second_per_worker"] > 0
    assert drop_row["longest_request_s"] > 0
    assert drop_row["probe_bookings"] == {"booked": 2}
    assert drop_row["probe_rejections"] == {"full": 2}
    # The signup limits (API): one read per ask (was this key counted before?) and one
    # write for a key's first ask; a repeat with the same key reads and writes nothing
    # more; never more than the registration's own writes.
    limits, alone = drop_row["per_booking_alone"]["rate_limits"], drop_row["per_booking_alone"]
    via_api = drop_row["via"] == "api"
    if drop_row["strategy"] != "streams":  # streams may answer 202 first, then 201
        assert limits["write_units"] == 1.0 and drop_row["per_rejection"]["rate_limits"][
            "write_units"] == 1.0
        assert limits["requests"] == (2.0 if via_api else 1.0), limits
    registrations = "stream_registrations" if drop_row["strategy"] == "streams" else "registrations"
    assert limits["write_units"] <= alone[registrations]["write_units"]
    refused = drop_row["per_rejection"]["rate_limits"]
    assert refused["write_units"] <= drop_row["asked_per_person"] + 1, refused
    assert drop_row["write_units_by_table"][registrations] > 0
