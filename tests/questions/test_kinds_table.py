"""One table of answers (tests/questions/helpers.py: every kind, valid and invalid values)
through the three entry points alike: the service, the signup form and the JSON API. A
valid answer is stored as the same value whichever way it came; an invalid one is refused
naming its question, with nothing stored."""
import json
import re

import pytest
from django.urls import reverse

from booking.dynamo.tables import ANSWERS
from booking.questions.rules import InvalidAnswers
from tests.mail.helpers import deliver_owed
from tests.helpers import table
from tests.questions.helpers import CASES, QUESTIONS, case_id, form_value

ENTRIES = ("service", "form", "api")


@pytest.fixture
def asked(service):
    event = service.create_event(name="Asked", capacity=5, strategy="lock_table")
    return service.set_questions(event.id, QUESTIONS, expected_version=0)


def stored_answers(event_id):
    return [item["answers"] for item in table(ANSWERS).query(
        key_condition="event_id = :e", values={":e": event_id})]


def through_service(service, event, answers):
    try:
        service.book(event.id, name="Ada", email="ada@example.com", answers=answers)
    except InvalidAnswers as refused:
        return refused.errors
    return None


def through_form(client, event, answers):
    page = client.get(reverse("booking:event_detail", args=[event.id]))
    token = re.search(r'name="token" value="([^"]+)"', page.content.decode()).group(1)
    data = {"name": "Ada", "email": "ada@example.com", "token": token}
    data.update({f"q_{qid}": form_value(qid, value) for qid, value in answers.items()})
    response = client.post(reverse("booking:event_detail", args=[event.id]), data)
    deliver_owed()
    if response.status_code == 303:
        return None
    assert response.status_code == 400, response.status_code
    html = response.content.decode()
    # the error summary links each refused answer to its field
    return {f"answers.{qid}": message for qid, message in
            re.findall(r'<a href="#id_q_([a-z_]+)">[^<]*?: ([^<]+)</a>', html)}


def through_api(client, event, answers):
    response = client.post(f"/api/v1/events/{event.id}/registrations/",
                           json.dumps({"name": "Ada", "email": "ada@example.com",
                                       "answers": answers}),
                           content_type="application/json", HTTP_IDEMPOTENCY_KEY="key-00001")
    deliver_owed()
    if response.status_code == 201:
        assert response.json()["answers"] == {k: _json(v) for k, v in stored_answers(
            event.id)[0].items()}
        return None
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["field"] == next(iter(body["errors"]))
    return body["errors"]


def _json(value):
    from booking.questions.rules import json_value
    return json_value(value)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_kind_through_every_entry_point(service, client, asked, case, entry):
    qid, value, stored = case
    errors = {"service": lambda: through_service(service, asked, {qid: value}),
              "form": lambda: through_form(client, asked, {qid: value}),
              "api": lambda: through_api(client, asked, {qid: value})}[entry]()
    if stored is None:
        assert errors and list(errors) == [f"answers.{qid}"], errors
        assert service.registrations(asked.id) == [] and stored_answers(asked.id) == []
    else:
        assert errors is None
        assert stored_answers(asked.id) == [{qid: stored}]


@pytest.mark.parametrize("entry", ENTRIES)
def test_required_answers_through_every_entry_point(service, client, entry):
    event = service.create_event(name="Req", capacity=5, strategy="aggregate")
    service.set_questions(event.id, [
        {"id": "company", "label": "Company", "kind": "text", "required": True},
        {"id": "consent", "label": "Photos", "kind": "boolean", "required": True},
        {"id": "shirt", "label": "Shirt", "kind": "choice", "choices": ["S", "M"]}],
        expected_version=0)
    run = {"service": through_service, "form": through_form, "api": through_api}[entry]
    args = (service,) if entry == "service" else (client,)
    errors = run(*args, event, {"shirt": "S"})
    assert set(errors) == {"answers.company", "answers.consent"}
    assert service.registrations(event.id) == [] and stored_answers(event.id) == []
    assert run(*args, event, {"company": "Acme", "consent": True}) is None
    assert stored_answers(event.id) == [{"company": "Acme", "consent": True}]
