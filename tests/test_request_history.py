"""Exactly-once booking requests: the request history (seed 000) and replay_failed."""
import json
import threading
import time
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from booking import requests
from booking.dynamo import history, leases
from booking.errors import (AlreadyRegistered, EventFull, EventNotFound, InvalidBooking,
                            RequestInProgress)

RID = "form-token-0001"


@pytest.fixture
def event(service):
    return service.create_event(name="Tea", capacity=1, strategy="aggregate")


def rows(request_id=RID):
    return [r["exec_status"] for r in reversed(list(history.newest_first(request_id)))]


def crashed_runner(event, *, request_id=RID, email="ada@example.com", age=0.0):
    """A `started` row whose runner never finished (it started ``age`` seconds ago)."""
    content = {"event_id": event.id, "email": email, "name": "Ada"}
    request = requests.Request(request_id, "book", content)
    history.start(request_id, 0, {**request.fields(), "runner": "crashed-runner"},
                  now=time.time() - age,
                  ttl=int(time.time()) + 3600)


def test_book__repeated_after_success__same_registration_no_seat(service, event):
    first = service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)
    again = service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)

    assert again == first
    assert service.availability(event.id).confirmed == 1
    assert rows() == ["started", "succeeded"]


def test_book__without_request_id__generated_and_recorded(service, event):
    registration = service.book(event.id, name="Ada", email="ada@example.com")

    assert len(registration.request_id) == 32
    assert rows(registration.request_id) == ["started", "succeeded"]


@pytest.mark.parametrize("change", ["other_event", "other_person", "cancel"])
def test_request_id__reused_for_different_content__refused_nothing_stored(
        service, event, change):
    other = service.create_event(name="Other", capacity=5, strategy="aggregate")
    service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)

    with pytest.raises(InvalidBooking, match="already used for a different booking"):
        if change == "other_event":
            service.book(other.id, name="Ada", email="ada@example.com", request_id=RID)
        elif change == "other_person":
            service.book(event.id, name="Bob", email="bob@example.com", request_id=RID)
        else:
            service.cancel(event.id, email="ada@example.com", request_id=RID)

    assert service.availability(other.id).confirmed == 0
    assert service.find_registration(event.id, email="ada@example.com") is not None
    assert rows() == ["started", "succeeded"]


def test_book__failed_then_repeated__runs_again(service, event):
    service.book(event.id, name="Bob", email="bob@example.com")
    with pytest.raises(EventFull):
        service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)
    failed = history.newest_first(RID).__next__()
    assert (failed["exec_status"], failed["reason_code"]) == ("failed", "event_full")

    service.cancel(event.id, email="bob@example.com")
    booked = service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)

    assert booked.request_id == RID
    assert rows() == ["started", "failed", "started", "succeeded"]


def test_book__same_request_running__raises_in_progress_no_seat(service, event):
    crashed_runner(event, age=1)

    with pytest.raises(RequestInProgress):
        service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)

    assert service.availability(event.id).confirmed == 0
    assert rows() == ["started"]


def test_book__started_row_stale__runner_crashed_runs_again(service, event, settings):
    settings.BOOKING_REQUEST_STALE_SECONDS = 30
    crashed_runner(event, age=31)

    booked = service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)

    assert booked.email == "ada@example.com"
    assert [r["seq"] for r in history.newest_first(RID)] == [4, 3, 1]  # generation 1


def test_book__history_past_retention__treated_as_absent(service, event, settings, monkeypatch):
    settings.BOOKING_REQUEST_HISTORY_DAYS = 1
    service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)
    later = time.time() + 86400 + 60  # past retention; TTL has not deleted the rows yet
    monkeypatch.setattr(requests.time, "time", lambda: later)

    other = service.create_event(name="Other", capacity=5, strategy="aggregate")
    booked = service.book(other.id, name="Bob", email="bob@example.com", request_id=RID)

    assert booked.event_id == other.id
    assert rows() == ["started", "succeeded", "started", "succeeded"]


def test_book__different_person_already_registered__recorded_failed(service, event):
    event = service.create_event(name="Big", capacity=5, strategy="aggregate")
    service.book(event.id, name="Ada", email="ada@example.com")

    with pytest.raises(AlreadyRegistered):
        service.book(event.id, name="Ada", email="ADA@example.com", request_id=RID)

    assert rows() == ["started", "failed"]


@pytest.mark.parametrize("bad", ["email", "event"])
def test_book__bad_input__nothing_stored_no_history(service, event, bad):
    error = InvalidBooking if bad == "email" else EventNotFound
    with pytest.raises(error):
        service.book("f" * 32 if bad == "event" else event.id, name="Ada",
                     email="not-an-email" if bad == "email" else "ada@example.com",
                     request_id=RID)

    assert rows() == []
    assert service.availability(event.id).confirmed == 0


def test_cancel__repeated__same_answer_seat_freed_once(service, event):
    service.book(event.id, name="Ada", email="ada@example.com")
    first = service.cancel(event.id, email="ada@example.com", request_id=RID)
    service.book(event.id, name="Ada", email="ada@example.com")  # booked again meanwhile

    again = service.cancel(event.id, email="ada@example.com", request_id=RID)

    assert again == first
    assert service.availability(event.id).confirmed == 1


# --- replay_failed ---------------------------------------------------------------------
def failed_booking(service, event):
    service.book(event.id, name="Bob", email="bob@example.com")
    with pytest.raises(EventFull):
        service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)
    service.cancel(event.id, email="bob@example.com")


def replay(*args):
    out = StringIO()
    call_command("replay_failed", "--json", *args, stdout=out)
    return json.loads(out.getvalue())["requests"]


def test_replay_failed__dry_run__lists_runs_nothing(service, event):
    failed_booking(service, event)

    listed = replay("--dry-run")

    assert [(r["request_id"], r["outcome"]) for r in listed] == [(RID, "dry_run")]
    assert rows() == ["started", "failed"]


def test_replay_failed__twice__reruns_failed_only_once(service, event):
    failed_booking(service, event)
    service.book(event.id, name="Eve", email="eve@example.com", request_id="form-token-ok")
    service.cancel(event.id, email="eve@example.com")

    first, second = replay(), replay()

    assert [(r["request_id"], r["outcome"]) for r in first] == [(RID, "succeeded")]
    assert second == []
    assert service.find_registration(event.id, email="ada@example.com").request_id == RID


def test_replay_failed__outside_window__skipped(service, event):
    failed_booking(service, event)

    assert replay("--until", "2000-01-01T00:00:00+00:00") == []
    assert rows() == ["started", "failed"]


def test_replay_failed__another_run_holds_lease__refused_runs_nothing(service, event):
    failed_booking(service, event)
    leases.acquire("replay_failed", seconds=60)

    with pytest.raises(CommandError, match="holds the lease"):
        replay()
    assert rows() == ["started", "failed"]


def test_replay_failed__bad_since__clear_error(service):
    with pytest.raises(CommandError, match="--since must be an ISO 8601"):
        replay("--since", "yesterday")


# --- the real embedded server: the same request at the same instant ---------------------
def test_same_request_from_many_threads__one_executes_one_seat(server_store):
    from booking.service import get_booking_service

    service = get_booking_service()
    event = service.create_event(name="Rush", capacity=5, strategy="lock_table")
    barrier, answers, lock = threading.Barrier(8), [], threading.Lock()
    strategy, executions = service.strategy("lock_table"), []
    book = strategy.book
    strategy.book = lambda *args: executions.append(1) or book(*args)

    def submit():
        barrier.wait()
        try:
            answer = service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)
        except RequestInProgress:
            answer = "in progress"
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=submit) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    confirmations = {a for a in answers if a != "in progress"}
    assert len(answers) == 8 and len(confirmations) == 1
    assert len(executions) == 1  # the strategy's own "already mine" check would hide more
    assert service.availability(event.id).confirmed == 1
    assert rows() == ["started", "succeeded"]
    assert history.newest_first(RID).__next__()["seq"] == 2  # no generation ran twice


def test_signup_view__same_form_still_running__202_page_that_asks_again(client, service, event):
    from booking import links

    token = links.new_form_token(event.id)
    crashed_runner(event, request_id=links.request_id_from_form_token(token, event.id))

    response = client.post(f"/events/{event.id}/", {"name": "Ada", "email": "ada@example.com",
                                                    "token": token})

    html = response.content.decode()
    assert response.status_code == 202 and "Still processing" in html
    assert f'value="{token}"' in html and "submit()" in html
    assert service.availability(event.id).confirmed == 0


def test_book__start_row_update_resent_after_lost_answer__runs_once(service, event,
                                                                     monkeypatch):
    # botocore resends an UpdateItem whose answer was lost: the counter reads 2, but the
    # row's runner is our own, so the request runs (not "still processing").
    real_start = history.start

    def start_applied_twice(*args, **kwargs):
        real_start(*args, **kwargs)
        return real_start(*args, **kwargs)

    monkeypatch.setattr(history, "start", start_applied_twice)
    booked = service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)
    monkeypatch.setattr(history, "start", real_start)

    assert booked.request_id == RID
    assert rows() == ["started", "succeeded"]
    assert next(history.newest_first(RID))["exec_status"] == "succeeded"
    assert service.book(event.id, name="Ada", email="ada@example.com", request_id=RID) == booked


def test_book__request_history_switched_off__repeat_runs_again(service, event, settings):
    # The control for the torture checker: without the history a repeat is a new booking.
    settings.BOOKING_DISABLE_REQUEST_HISTORY = True
    service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)
    service.cancel(event.id, email="ada@example.com")

    again = service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)

    assert again.request_id == RID
    assert service.availability(event.id).confirmed == 1
    assert rows() == []


def test_book__outcome_row_write_fails_twice__retried_and_recorded(service, event, monkeypatch):
    from booking.errors import StoreUnavailable

    real_record, failures = history.record, []

    def flaky_record(*args, **kwargs):
        if len(failures) < 2:
            failures.append(1)
            raise StoreUnavailable()
        return real_record(*args, **kwargs)

    monkeypatch.setattr(history, "record", flaky_record)
    monkeypatch.setattr(requests, "RECORD_RETRY_DELAY", 0)
    booked = service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)

    assert rows() == ["started", "succeeded"]
    assert next(history.newest_first(RID))["result"]["registration_id"] == booked.registration_id


def test_book__outcome_row_never_written__booking_still_answers_and_is_logged(
        service, event, monkeypatch, caplog):
    from booking.errors import StoreUnavailable

    def unavailable(*args, **kwargs):
        raise StoreUnavailable()

    monkeypatch.setattr(history, "record", unavailable)
    monkeypatch.setattr(requests, "RECORD_RETRY_DELAY", 0)
    booked = service.book(event.id, name="Ada", email="ada@example.com", request_id=RID)

    assert booked.email == "ada@example.com"
    assert rows() == ["started"]  # goes stale; a repeat then re-runs it
    failure = [r for r in caplog.records if "Could not record" in r.getMessage()]
    assert failure and failure[0].exc_info[0] is StoreUnavailable
