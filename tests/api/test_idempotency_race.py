"""16 threads POST the same Idempotency-Key and payload at once, over HTTP, to a live
threaded server on DynamoDB Local. The careless control (the key kept out of the booking's
write: ``harness.controls.ForgetfulRequestLog``) runs through the same harness and fails."""
import http.client
import json
import threading

import pytest

from booking import wiring
from harness.controls import control_service

pytestmark = pytest.mark.concurrency

THREADS = 16


def post(port, path, body, key):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("POST", path, body=json.dumps(body), headers={
            "Content-Type": "application/json", "Idempotency-Key": key})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null"), response
    finally:
        connection.close()


def race(port, service, strategy):
    """16 identical keyed POSTs at once, then one retry: (answers, the retry, stored)."""
    event = service.create_event(name=f"Key race {strategy}", capacity=5, strategy=strategy)
    path = f"/api/v1/events/{event.id}/registrations/"
    body = {"name": "Ada Lovelace", "email": "ada@example.com"}
    barrier, answers = threading.Barrier(THREADS, timeout=30), [None] * THREADS

    def run(number):
        barrier.wait()
        answers[number] = post(port, path, body, "same-key-0001")[:2]

    threads = [threading.Thread(target=run, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    retry = post(port, path, body, "same-key-0001")[:2]
    return answers, retry, service.registrations(event.id)


def assert_one_booking_one_answer(answers, retry, stored):
    created = [body for status, body in answers if status == 201]
    assert created, answers
    assert all(status == 201 and body == created[0]
               or status == 202 and body["status"] == "pending" for status, body in answers), answers
    assert retry == (201, created[0])
    assert len(stored) == 1 and stored[0].registration_id == created[0]["id"]


@pytest.mark.parametrize("strategy", ["aggregate", "lock_table", "slots"])
def test_same_key_16_threads__one_registration_same_201_or_pending(live_api, strategy):
    answers, retry, stored = race(live_api, wiring.get_booking_service(), strategy)

    assert_one_booking_one_answer(answers, retry, stored)


def test_same_key_16_threads__key_outside_the_write_control__caught(live_api):
    careless = control_service(request_history=False)
    with wiring.use_service(careless):
        answers, retry, stored = race(live_api, careless, "lock_table")

    with pytest.raises(AssertionError):
        assert_one_booking_one_answer(answers, retry, stored)
