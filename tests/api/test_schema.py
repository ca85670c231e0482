"""Schemathesis over the served schema, against the live API on DynamoDB Local: every
operation fuzzed (valid and invalid inputs), then the stateful links followed (list ->
event -> book -> get / cancel). 0 server errors, 0 schema violations, every 4xx a problem.
Bounded and deterministic (``derandomize``) to keep the suite's time."""
from collections import Counter

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from hypothesis.stateful import run_state_machine_as_test
from schemathesis import checks
from schemathesis.generation import GenerationMode

from booking.wiring import get_booking_service

pytestmark = pytest.mark.concurrency
EXAMPLES = 12
BOUNDED = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                   suppress_health_check=list(HealthCheck))
CHECKS = [checks.not_a_server_error, checks.status_code_conformance,
          checks.content_type_conformance, checks.response_schema_conformance,
          checks.response_headers_conformance]


@schemathesis.check
def client_errors_are_problems(ctx, response, case):
    """Every 4xx is application/problem+json with type, title, status and detail."""
    if 400 <= response.status_code < 500:
        assert response.headers.get("content-type", [""])[0] == "application/problem+json", (
            response.status_code, response.headers)
        body = response.json()
        assert {"type", "title", "status", "detail"} <= set(body), body
        assert body["status"] == response.status_code


@pytest.fixture
def schema(live_api, settings):
    settings.BOOKING_SIGNUP_RATE = settings.BOOKING_SIGNUP_EMAIL_RATE = "off"
    settings.BOOKING_CANCEL_RATE = "off"
    service = get_booking_service()
    for number in range(2):
        service.create_event(name=f"Fuzzed {number}", capacity=50, strategy="lock_table")
    return schemathesis.openapi.from_url(
        f"http://127.0.0.1:{live_api}/api/v1/schema/?format=json")


def test_schema__every_operation_fuzzed__no_errors_all_problems(schema):
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            @BOUNDED
            @given(case=operation.as_strategy(generation_mode=mode))
            def call(case):
                case.call_and_validate(checks=CHECKS + [client_errors_are_problems])

            try:
                call()
            except Unsatisfiable:
                assert mode == GenerationMode.NEGATIVE  # nothing invalid to make (a path str)


def with_booking_body(schema):
    """The served links, and a valid body on BookThisEvent (the event's own name, a fixed
    address), which the test adds: random names and addresses are refused so often that
    the links would rarely reach a 201 within the budget."""
    for path_item in schema.raw_schema["paths"].values():
        for operation in path_item.values():
            link = (operation.get("responses", {}).get("200", {}).get("links", {})
                    .get("BookThisEvent") if isinstance(operation, dict) else None)
            if link:
                link["requestBody"] = {"name": "$response.body#/name",
                                       "email": "linked@example.com"}
                link["x-schemathesis"] = {"merge_body": False}
    return schema


def test_schema__stateful_links__reach_a_201_no_errors_all_problems(schema):
    seen = Counter()

    # The linked operations alone: the other operations' every input is fuzzed above, and
    # here they would spend the budget before the chain is followed.
    linked = with_booking_body(schema).include(operation_id=[
        "events_list", "events_retrieve", "registrations_create", "registrations_retrieve",
        "registrations_destroy"])

    class Links(linked.as_state_machine()):
        def validate_response(self, response, case, **kwargs):
            seen[(case.operation.label, response.status_code)] += 1
            case.validate_response(response, checks=CHECKS + [client_errors_are_problems])

    run_state_machine_as_test(Links, settings=settings(
        BOUNDED, max_examples=EXAMPLES, stateful_step_count=6))

    # The links were followed to a booking: list -> event -> book (201).
    assert seen[("GET /api/v1/events/{event_id}/", 200)], seen
    assert seen[("POST /api/v1/events/{event_id}/registrations/", 201)], seen
