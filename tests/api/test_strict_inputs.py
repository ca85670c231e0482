"""Strict input on every API route (the fourth round): integers are JSON integers, booleans
JSON booleans, texts and choices JSON strings, unknown fields refused; each refusal a
problem+json 400 with nothing applied. A sweep over every request body the API declares,
so a route added with DRF's lax fields (``IntegerField`` takes ``"1"`` and ``2.0``) fails
here, and the version-checked routes tried with such values."""
import inspect
import json

import pytest
from rest_framework import serializers

from booking.api import access_codes, questions, serializers as api_serializers, views, waitlist, webhooks
from booking.api.models import WRITE
from booking.api.serializers import StrictSerializer
from tests.organizers.helpers import DEFAULT, issue

pytestmark = pytest.mark.django_db
# DRF fields that turn "1" into 1, 2.0 into 2, "yes" into True, 5 into "5" or compare str(x).
LAX = (serializers.IntegerField, serializers.FloatField, serializers.DecimalField,
       serializers.BooleanField, serializers.CharField, serializers.ChoiceField)
STRICT = (api_serializers.StrictIntegerField, api_serializers.TextField,
          api_serializers.StrictChoiceField)
# The check-in routes' inputs are checked with the door's own strictness
# (tests/api/test_checkin_api.py); every other module's are swept here.
SWEPT = (access_codes, questions, api_serializers, views, waitlist, webhooks)


def _inputs():
    for module in SWEPT:
        for name, found in inspect.getmembers(module, inspect.isclass):
            if issubclass(found, StrictSerializer) and found is not StrictSerializer:
                yield f"{module.__name__}.{name}", found


def _lax(field, where):
    if isinstance(field, serializers.ListField):
        yield from _lax(field.child, f"{where}[]")
    elif isinstance(field, serializers.DictField):
        yield from _lax(field.child, f"{where}{{}}")
    elif isinstance(field, LAX) and not isinstance(field, STRICT):
        yield f"{where}: {type(field).__name__}"


def test_every_request_body__strict_fields_only():
    inputs = dict(_inputs())
    assert len(inputs) >= 8, sorted(inputs)  # the sweep sees the API's bodies
    lax = [found for name, body in inputs.items()
           for field_name, field in body().fields.items()
           for found in _lax(field, f"{name}.{field_name}")]
    assert lax == []


@pytest.fixture
def event(service):
    event = service.create_event(name="Conf", capacity=5, strategy="lock_table",
                                 organizer=DEFAULT)
    return service.set_questions(event.id, [{"id": "company", "label": "Company"}],
                                 expected_version=0)


def put(client, path, body, **auth):
    return client.put(path, json.dumps(body), content_type="application/json", **auth)


def assert_refused(response, field):
    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    assert field in json.dumps(response.json())


@pytest.mark.parametrize("version", ["1", 1.0, 2.0, True, None, [1]])
def test_questions_put__version_not_an_integer__400_nothing_applied(client, service, event,
                                                                    version):
    _, auth = issue(WRITE)
    response = put(client, f"/api/v1/events/{event.id}/questions/",
                   {"questions": [], "expected_version": version}, **auth)

    assert_refused(response, "expected_version")
    assert [q.id for q in service.get_event(event.id).questions] == ["company"]


@pytest.mark.parametrize("version", ["1", 1.0, True])
def test_answers_put__version_not_an_integer__400_nothing_applied(client, service, event,
                                                                  version):
    registration = service.book(event.id, name="Ada", email="ada@example.com",
                                answers={"company": "Acme"})
    from booking import links
    secret = links.registration_token(registration, salt=links.CANCEL_SALT)
    response = put(client, f"/api/v1/registrations/{secret}/answers/",
                   {"answers": {"company": "Beta"}, "expected_version": version})

    assert_refused(response, "expected_version")
    assert service.answers(registration).answers == {"company": "Acme"}


def test_answers_put__unknown_field__400_nothing_applied(client, service, event):
    registration = service.book(event.id, name="Ada", email="ada@example.com",
                                answers={"company": "Acme"})
    from booking import links
    secret = links.registration_token(registration, salt=links.CANCEL_SALT)
    response = put(client, f"/api/v1/registrations/{secret}/answers/",
                   {"answers": {"company": "Beta"}, "expected_version": 1, "force": True})

    assert_refused(response, "force")
    assert service.answers(registration).answers == {"company": "Acme"}
