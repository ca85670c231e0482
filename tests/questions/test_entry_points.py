"""Answers where people and organizers see them: the booking's page and its edit page, the
confirmation e-mail, the admin (questions page, registrations, CSV), the API (questions,
registration bodies, the person's answers), webhooks, and ``purge_answers``."""
import csv
import datetime as dt
import io
import json
import re

import pytest
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from booking.api.models import WRITE
from booking.dynamo.tables import ANSWERS
from tests.mail.helpers import deliver_owed
from tests.helpers import table
from tests.organizers.helpers import DEFAULT, issue

pytestmark = pytest.mark.django_db

QUESTIONS = [
    {"id": "company", "label": "Company", "kind": "text", "required": True},
    {"id": "shirt", "label": "T-shirt size", "kind": "choice", "choices": ["S", "M", "L"]},
    {"id": "name_on_pass", "label": "Name on the pass", "kind": "text", "per_pass": True},
]
SOON = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=10)


@pytest.fixture
def event(service):
    event = service.create_event(name="Conf", capacity=5, strategy="lock_table",
                                 starts_at=SOON, organizer=DEFAULT)
    return service.set_questions(event.id, QUESTIONS, expected_version=0)


def form_token(client, event_id):
    page = client.get(reverse("booking:event_detail", args=[event_id]))
    return page, re.search(r'name="token" value="([^"]+)"', page.content.decode()).group(1)


def signup(client, event, **answers):
    _, token = form_token(client, event.id)
    response = client.post(reverse("booking:event_detail", args=[event.id]), {
        "name": "Ada", "email": "ada@example.com", "token": token, **answers})
    deliver_owed()
    return response


def test_form_renders_questions_with_labels_and_the_booked_page_and_mail_show_answers(
        client, service, event):
    page, _ = form_token(client, event.id)
    html = page.content.decode()
    assert 'for="id_q_company"' in html and 'aria-required="true"' in html
    assert "<legend>T-shirt size (optional)</legend>" in html
    assert "<legend>Your pass</legend>" in html and 'for="id_p0_name_on_pass"' in html

    refused = signup(client, event, q_shirt="M")
    assert refused.status_code == 400
    assert '<a href="#id_q_company">Company: This question is required.</a>' in (
        refused.content.decode())

    booked = signup(client, event, q_company="Acme", q_shirt="M", p0_name_on_pass="Ada L.")
    assert booked.status_code == 303
    shown = client.get(booked["Location"]).content.decode()
    assert "Your answers" in shown and "Acme" in shown and "Ada L." in shown
    assert "Change my answers" in shown
    sent = mail.outbox[-1]
    assert "Company: Acme" in sent.body and "Pass 1, Name on the pass: Ada L." in sent.body


def test_the_person_edits_their_answers_and_a_stale_edit_is_refused_not_lost(
        client, service, event):
    booked = signup(client, event, q_company="Acme")
    edit_url = reverse("booking:answers", args=[event.id, booked["Location"].rstrip("/")
                                                .rsplit("/", 1)[1]])
    page_one = client.get(edit_url).content.decode()
    page_two = client.get(edit_url).content.decode()
    version = re.search(r'name="version" value="(\d+)"', page_one).group(1)
    assert 'value="Acme"' in page_one

    saved = client.post(edit_url, {"version": version, "q_company": "Beta"})
    assert saved.status_code == 303
    stale_version = re.search(r'name="version" value="(\d+)"', page_two).group(1)
    stale = client.post(edit_url, {"version": stale_version, "q_company": "Gamma"})
    assert stale.status_code == 409
    assert "your change was not saved" in stale.content.decode()
    assert 'value="Beta"' in stale.content.decode()  # the newer answers, shown
    registration = service.find_registration(event.id, email="ada@example.com")
    assert service.answers(registration).answers == {"company": "Beta"}

    invalid = client.post(edit_url, {"version": "2", "q_company": "", "q_shirt": "XXL"})
    assert invalid.status_code == 400
    assert service.answers(registration).answers == {"company": "Beta"}


def test_admin_questions_page_saves_in_order_and_refuses_a_stale_page(admin_client, service,
                                                                       event):
    url = reverse("admin:booking_dynamoevent_questions", args=[event.id])
    page = admin_client.get(url)
    assert page.status_code == 200 and "Name on the pass" in page.content.decode()
    form = {"version": "1", "form-TOTAL_FORMS": "2", "form-INITIAL_FORMS": "1",
            "form-MIN_NUM_FORMS": "0", "form-MAX_NUM_FORMS": "1000",
            "form-0-id": "company", "form-0-label": "Company name", "form-0-kind": "text",
            "form-0-ORDER": "2", "form-0-choices": "", "form-0-help_text": "",
            "form-1-id": "diet", "form-1-label": "Diet", "form-1-kind": "multiple_choice",
            "form-1-choices": "Vegan\nVegetarian", "form-1-ORDER": "1",
            "form-1-help_text": ""}
    saved = admin_client.post(url, form)
    assert saved.status_code == 302
    stored = service.get_event(event.id)
    assert [q.id for q in stored.questions] == ["diet", "company"]
    assert stored.questions[0].choices == ("Vegan", "Vegetarian")
    assert stored.questions_version == 2
    stale = admin_client.post(url, {**form, "form-0-label": "Lost?"})  # read at version 1
    assert stale.status_code == 302
    assert [q.label for q in service.get_event(event.id).questions] == ["Diet", "Company name"]
    bad = admin_client.post(url, {**form, "version": "2", "form-1-choices": ""})
    assert bad.status_code == 400 and "Question 1 (diet)" in bad.content.decode()


def test_admin_csv_has_a_column_per_question_and_removed_ones(admin_client, service, event):
    service.book(event.id, name="Ada", email="ada@example.com",
                 answers={"company": "=cmd", "shirt": "M"},
                 pass_answers=[{"name_on_pass": "Ada L."}])
    service.book(event.id, name="Bo", email="bo@example.com", answers={"company": "Beta"})
    service.set_questions(event.id, QUESTIONS[:1] + QUESTIONS[2:], expected_version=1)
    response = admin_client.get(reverse("admin:booking_dynamoevent_export", args=[event.id]))
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == ["name", "email", "registered_at", "Company", "Name on the pass",
                       "T-shirt size (question removed)"]
    assert [row[:2] + row[3:] for row in rows[1:]] == [
        ["Ada", "ada@example.com", "'=cmd", "Pass 1: Ada L.", "M"],
        ["Bo", "bo@example.com", "Beta", "", ""]]
    listed = admin_client.get(reverse("admin:booking_dynamoevent_registrations",
                                      args=[event.id])).content.decode()
    assert "Company: =cmd; T-shirt size (removed): M; Pass 1, Name on the pass: Ada L." in listed


def test_api_questions_and_answers(client, service, event):
    _, auth = issue(WRITE)
    got = client.get(f"/api/v1/events/{event.id}/questions/").json()
    assert got["version"] == 1 and [q["id"] for q in got["questions"]] == [
        "company", "shirt", "name_on_pass"]
    put = client.put(f"/api/v1/events/{event.id}/questions/",
                     json.dumps({"questions": got["questions"][:1], "expected_version": 1}),
                     content_type="application/json", **auth)
    assert put.status_code == 200 and put.json()["version"] == 2
    stale = client.put(f"/api/v1/events/{event.id}/questions/",
                       json.dumps({"questions": [], "expected_version": 1}),
                       content_type="application/json", **auth)
    assert stale.status_code == 412
    anonymous = client.put(f"/api/v1/events/{event.id}/questions/",
                           json.dumps({"questions": [], "expected_version": 2}),
                           content_type="application/json")
    assert anonymous.status_code in (401, 403)
    assert len(service.get_event(event.id).questions) == 1

    booked = client.post(f"/api/v1/events/{event.id}/registrations/",
                         json.dumps({"name": "Ada", "email": "ada@example.com",
                                     "answers": {"company": "Acme"}}),
                         content_type="application/json", HTTP_IDEMPOTENCY_KEY="key-00001")
    assert booked.status_code == 201
    body = booked.json()
    assert body["answers"] == {"company": "Acme"} and body["pass_answers"] == []
    secret = body["secret"]
    mine = client.get(f"/api/v1/registrations/{secret}/answers/").json()
    assert mine == {"answers": {"company": "Acme"}, "pass_answers": [], "version": 1}
    edited = client.put(f"/api/v1/registrations/{secret}/answers/",
                        json.dumps({"answers": {"company": "Beta"}, "expected_version": 1}),
                        content_type="application/json")
    assert edited.status_code == 200 and edited.json()["version"] == 2
    stale = client.put(f"/api/v1/registrations/{secret}/answers/",
                       json.dumps({"answers": {"company": "Gamma"}, "expected_version": 1}),
                       content_type="application/json")
    assert stale.status_code == 412
    assert client.get(f"/api/v1/registrations/{secret}/").json()["answers"] == {
        "company": "Beta"}
    listed = client.get(f"/api/v1/events/{event.id}/registrations/", **auth).json()
    assert listed["results"][0]["answers"] == {"company": "Beta"}


def test_webhook_registration_created_carries_the_answers(service, event):
    from booking.webhooks.fanout import Fanout
    from booking.models import CONFIRMATION
    from booking.mail.sender import message_for

    registration = service.book(event.id, name="Ada", email="ada@example.com",
                                answers={"company": "Acme"},
                                pass_answers=[{"name_on_pass": "Ada L."}])
    fanout = Fanout(endpoints=None, deliveries=None, availability=None, waiting_entry=None,
                    retention_seconds=60, answers=service.questions.store.read)
    changes = list(fanout.changes(message_for(CONFIRMATION, registration),
                                  lambda: service.get_event(event.id), set()))
    data = changes[0][1]
    assert data["answers"] == {"company": "Acme"}
    assert data["pass_answers"] == [{"name_on_pass": "Ada L."}]


def test_purge_answers_command(service, event):
    service.book(event.id, name="Ada", email="ada@example.com", answers={"company": "A"})
    with pytest.raises(CommandError) as early:
        call_command("purge_answers", event.id, "--after-days", "30", stdout=io.StringIO())
    assert "not been over for 30 days" in str(early.value)
    service.events.update({"event_id": event.id}, "SET starts_at = :s",
                          values={":s": "2020-01-01T10:00:00+00:00"})
    service.catalog.forget(event.id)
    out = io.StringIO()
    call_command("purge_answers", event.id, "--after-days", "30", stdout=out)
    assert "Deleted the answers of 1 order." in out.getvalue()
    assert list(table(ANSWERS).query(key_condition="event_id = :e",
                                     values={":e": event.id})) == []
    with pytest.raises(CommandError):
        call_command("purge_answers", "0" * 32, "--after-days", "1", stdout=io.StringIO())


def test_form_asks_per_pass_questions_for_each_seat_of_an_order(client, service):
    event = service.create_event(name="Orders", capacity=10, strategy="slots",
                                 quotas={"ws": 3}, ticket_types={"conference": [], "ws": ["ws"]},
                                 max_per_order=3, starts_at=SOON)
    service.set_questions(event.id, [
        {"id": "name_on_pass", "label": "Name on the pass", "required": True, "per_pass": True},
        {"id": "laptop", "label": "Laptop", "kind": "boolean", "per_pass": True,
         "ticket_types": ["ws"]}], expected_version=0)
    page, token = form_token(client, event.id)
    html = page.content.decode()
    assert html.count("<legend>Pass ") == 3 and 'for="id_p2_name_on_pass"' in html
    data = {"name": "Ada", "email": "ada@example.com", "token": token, "qty_conference": "1",
            "qty_ws": "1", "p0_name_on_pass": "Ada", "p0_laptop": "on"}
    refused = client.post(reverse("booking:event_detail", args=[event.id]), data)
    assert refused.status_code == 400
    assert "Name on the pass, pass 2: This question is required." in refused.content.decode()
    booked = client.post(reverse("booking:event_detail", args=[event.id]),
                         {**data, "p1_name_on_pass": "Bo", "p1_laptop": "on"})
    deliver_owed()
    assert booked.status_code == 303
    order = service.find_registration(event.id, email="ada@example.com")
    # the conference pass is not asked about a laptop: its tick is left out
    assert service.answers(order).pass_answers == ({"name_on_pass": "Ada"},
                                                   {"name_on_pass": "Bo", "laptop": True})
