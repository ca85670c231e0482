"""Access codes over the JSON API (docs/api.md): created and listed under
``/events/{id}/access-codes/`` (scoped to the token's organizer), used in a booking's
``access_code``; refusals are problems with nothing stored."""
import itertools
import json

import pytest

from booking.api.models import READ, WRITE
from tests.api.test_registrations import assert_problem, post
from tests.organizers.helpers import DEFAULT, issue

pytestmark = pytest.mark.django_db


@pytest.fixture
def event(service):
    return service.create_event(name="Summit", capacity=10, organizer=DEFAULT)


def codes_path(event):
    return f"/api/v1/events/{event.id}/access-codes/"


def create(client, auth, event, body, key=None):
    key = key or f"codes-{next(_KEYS)}"
    return client.post(codes_path(event), json.dumps(body), content_type="application/json",
                       HTTP_IDEMPOTENCY_KEY=key, **auth)


_KEYS = itertools.count(1)


def book(client, event, n, code, key=None):
    return post(client, f"/api/v1/events/{event.id}/registrations/",
                {"name": f"P{n}", "email": f"p{n}@example.com", "access_code": code},
                key=key or f"key-{n:06d}")


def test_create__write_token__201_with_the_codes__listed_with_uses(client, service, event):
    _, auth = issue(WRITE)
    given = create(client, auth, event, {"code": "speaker-7q2k", "max_uses": 2})
    generated = create(client, auth, event, {"count": 3, "valid_until": "2099-01-01T00:00:00Z"})

    assert given.status_code == generated.status_code == 201, given.content
    assert [c["code"] for c in given.json()["results"]] == ["SPEAKER-7Q2K"]
    assert len(generated.json()["results"]) == 3
    assert book(client, event, 1, "Speaker-7Q2K").status_code == 201

    _, read = issue(READ, username="reader")
    listed = client.get(codes_path(event), **read).json()["results"]
    assert len(listed) == 4
    speaker = next(c for c in listed if c["code"] == "SPEAKER-7Q2K")
    assert (speaker["uses"], speaker["max_uses"], speaker["remaining"]) == (1, 2, 1)


def test_create__read_token__403_nothing_stored(client, service, event):
    _, read = issue(READ)
    assert_problem(create(client, read, event, {"count": 1}), 403, "permission-denied")
    assert service.access_codes(event.id) == []


def test_codes__another_organizers_event__404_as_missing(client, service):
    other = service.create_event(name="Theirs", capacity=5, organizer="other-org")
    service.create_access_codes(other.id, codes=["THEIRS"])
    _, auth = issue(WRITE)

    assert_problem(client.get(codes_path(other), **auth), 404, "event-not-found")
    assert_problem(create(client, auth, other, {"count": 1}), 404, "event-not-found")
    assert [c.code for c in service.access_codes(other.id)] == ["THEIRS"]


@pytest.mark.parametrize("body", [{"code": "A B"}, {"count": 0}, {"code": "X1X", "count": 2},
                                  {"max_uses": "3"}, {"nope": 1}])
def test_create__bad_body__400_nothing_stored(client, service, event, body):
    _, auth = issue(WRITE)
    response = create(client, auth, event, body)
    assert response.status_code == 400, response.content
    assert service.access_codes(event.id) == []


def test_book__unknown_code__400_invalid_access_code_nothing_stored(client, service, event):
    body = assert_problem(book(client, event, 1, "NOPE-NOPE"), 400, "invalid-access-code")
    assert body.get("field") == "access_code"
    assert service.registrations(event.id) == []


def test_book__used_up__409_access_code_used_up_nothing_stored(client, service, event):
    service.create_access_codes(event.id, codes=["ONCE-ONLY"], max_uses=1)
    assert book(client, event, 1, "once-only").status_code == 201

    assert_problem(book(client, event, 2, "once-only"), 409, "access-code-used-up")
    assert [r.email for r in service.registrations(event.id)] == ["p1@example.com"]


def test_book__wrong_codes__rate_limited_then_even_a_right_code_waits(client, service, event,
                                                                      settings):
    settings.BOOKING_ACCESS_CODE_RATE = "3/10m"
    service.create_access_codes(event.id, codes=["RIGHT-CODE"], max_uses=10)
    for n in range(3):
        assert_problem(book(client, event, n, f"WRONG-{n}"), 400, "invalid-access-code")

    assert_problem(book(client, event, 9, "RIGHT-CODE"), 429, "rate-limited")
    assert service.registrations(event.id) == []


def test_book__right_codes__never_count_against_the_limit(client, service, event, settings):
    settings.BOOKING_ACCESS_CODE_RATE = "2/10m"
    service.create_access_codes(event.id, codes=["RIGHT-CODE"], max_uses=10)
    for n in range(4):
        assert book(client, event, n, "RIGHT-CODE").status_code == 201


# --- the fourth round: a keyed creation is one creation; guessable codes are warned ------
def test_create__same_key_twice__one_code_same_answer_seats_reserved_once(client, service,
                                                                           event):
    _, auth = issue(WRITE)
    body = {"count": 1, "reserved_seats": 2}
    first = create(client, auth, event, body, key="one-key")
    again = create(client, auth, event, body, key="one-key")

    assert first.status_code == again.status_code == 201, again.content
    assert again.json()["results"] == first.json()["results"]
    assert len(service.access_codes(event.id)) == 1
    assert service.availability(event.id).remaining == 8  # 2 reserved, not 4


def test_create__same_key_other_settings__422_nothing_more_stored(client, service, event):
    _, auth = issue(WRITE)
    assert create(client, auth, event, {"code": "X7KQ-P2MW"}, key="one-key").status_code == 201

    assert_problem(create(client, auth, event, {"code": "M9XP-Q4RT"}, key="one-key"), 422,
                   "idempotency-key-reused")
    assert [c.code for c in service.access_codes(event.id)] == ["X7KQ-P2MW"]


def test_create__without_a_key__400_like_every_post_nothing_stored(client, service, event):
    _, auth = issue(WRITE)
    response = client.post(codes_path(event), json.dumps({"count": 1}),
                           content_type="application/json", **auth)

    assert_problem(response, 400, "idempotency-key-missing")
    assert service.access_codes(event.id) == []


@pytest.mark.parametrize("code", ["VIP", "SPEAKER-2031", "SUMMIT-2027", "AAAA-BBBB"])
def test_create__guessable_code__created_with_a_warning(client, service, event, code):
    _, auth = issue(WRITE)
    response = create(client, auth, event, {"code": code})

    assert response.status_code == 201, response.content
    assert [c["code"] for c in response.json()["results"]] == [code]
    assert len(response.json()["warnings"]) == 1 and "easy to guess" in response.json()[
        "warnings"][0]


@pytest.mark.parametrize("body", [{"code": "X7KQ-P2MW"}, {"count": 3}])
def test_create__random_or_generated_code__no_warning(client, service, event, body):
    _, auth = issue(WRITE)
    assert create(client, auth, event, body).json()["warnings"] == []
