"""The booking path's length: distinct ``booking/`` modules whose functions ran on the
request's thread (``sys.setprofile``) during a warm second booking, in-process, lock_table,
through the form and through the API (docs/development/architecture.md#the-booking-path).

The bars are the path as it is now; the aim (issue "a short booking path") is 20 for each.
A module added to the path fails here: take it off the path, or raise the bar knowingly."""
import importlib.util
import json
import os
from pathlib import Path

from booking.entry import forms as page_tokens
from booking.wiring import get_booking_service

ROOT = Path(__file__).resolve().parents[2]
BOOKING = ROOT / "booking"
FORM_BAR, API_BAR = 29, 35


def modules_run(call):
    """(call's result, the booking/ files whose functions ran on this thread), traced as
    ``scripts/trace_path.py`` traces."""
    spec = importlib.util.spec_from_file_location("trace_path", ROOT / "scripts/trace_path.py")
    trace_path = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(trace_path)
    results = []
    seen = trace_path.traced(lambda: results.append(call()), booking=str(BOOKING) + os.sep)
    return results[0], sorted(n.replace(os.sep, "/").removeprefix("booking/") for n in seen)


def signup(client, event, n):
    return client.post(f"/events/{event.id}/", {
        "name": f"P{n}", "email": f"p{n}@example.com",
        "token": page_tokens.new_form_token(event.id)})


def api_booking(client, event, n):
    return client.post(f"/api/v1/events/{event.id}/registrations/",
                       json.dumps({"name": f"A{n}", "email": f"a{n}@example.com"}),
                       content_type="application/json",
                       HTTP_IDEMPOTENCY_KEY=f"path-key-{n:04d}")


def test_warm_form_booking__passes_at_most_the_bar_of_modules(client, dynamo):
    event = get_booking_service().create_event(name="Path", capacity=9, strategy="lock_table")
    assert signup(client, event, 1).status_code == 303

    response, modules = modules_run(lambda: signup(client, event, 2))

    assert response.status_code == 303
    assert "web/views.py" in modules and "service/bookings.py" in modules
    assert len(modules) <= FORM_BAR, modules


def test_warm_api_booking__passes_at_most_the_bar_of_modules(client, dynamo):
    event = get_booking_service().create_event(name="Path", capacity=9, strategy="lock_table")
    assert api_booking(client, event, 1).status_code == 201

    response, modules = modules_run(lambda: api_booking(client, event, 2))

    assert response.status_code == 201
    assert "api/views.py" in modules and "service/bookings.py" in modules
    assert len(modules) <= API_BAR, modules
