"""The public signup form tells every error at once (booking/entry/forms.py, views.py): the
name, the e-mail, the ticket quantities, the questions and the access code in one answer,
nothing stored, as the admin's editor does."""
import datetime as dt
import re

from django.urls import reverse

from booking.mail import sender as booking_mail


def test_signup__everything_wrong__every_error_in_one_answer_nothing_stored(client, service):
    event = service.create_event(
        name="Summit", capacity=10, strategy="lock_table", max_per_order=2,
        ticket_types={"conference": [], "workshop-a": []},
        starts_at=dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=10))
    service.set_questions(event.id, [{"id": "company", "label": "Company", "kind": "text",
                                      "required": True}], expected_version=0)
    service.create_access_codes(event.id, codes=["TALKS-7Q2K"], max_uses=5,
                                ticket_types=["conference"])
    url = reverse("booking:event_detail", args=[event.id])
    token = re.search(r'name="token" value="([^"]+)"',
                      client.get(url).content.decode()).group(1)
    response = client.post(url, {"name": "", "email": "not an address", "token": token,
                                 "qty_conference": "2", "qty_workshop-a": "1",
                                 "access_code": "NOPE-NOPE"})
    booking_mail.flush()
    summary = re.search(r'<div class="error-summary".*?</div>', response.content.decode(),
                        re.S).group(0)
    assert response.status_code == 400
    assert "Your name: Enter your name." in summary
    assert "E-mail:" in summary
    assert "One order holds at most 2 seats." in summary
    assert "Company: This question is required." in summary
    assert "Access code: This access code is not valid for this event." in summary
    assert service.registrations(event.id) == []
    assert service.access_codes(event.id)[0].uses == 0


def test_signup__code_for_other_types__told_with_the_other_errors(client, service):
    event = service.create_event(name="Labels", capacity=10, strategy="lock_table",
                                 ticket_types={"conference": [], "workshop-a": []},
                                 max_per_order=2)
    service.create_access_codes(event.id, codes=["TALKS-7Q2K"], max_uses=5,
                                ticket_types=["conference"])
    url = reverse("booking:event_detail", args=[event.id])
    token = re.search(r'name="token" value="([^"]+)"',
                      client.get(url).content.decode()).group(1)
    response = client.post(url, {"name": "", "email": "ada@example.com", "token": token,
                                 "qty_conference": "0", "qty_workshop-a": "1",
                                 "access_code": "talks-7q2k"})
    html = response.content.decode()
    assert response.status_code == 400 and "Enter your name." in html
    assert "This access code is not valid for Workshop A." in html
    assert service.registrations(event.id) == []


def test_form__description_apart_from_the_seats_and_one_pass_instruction(client, service):
    """The organizer's description and the seats left are two sentences in two elements;
    the per-pass instruction is said once; a posted form shows the passes of its seats."""
    event = service.create_event(name="Talks", capacity=10, strategy="lock_table",
                                 max_per_order=4, ticket_types={"conference": []},
                                 ticket_descriptions={"conference": "Talks all day"})
    service.set_questions(event.id, [{"id": "name_on_pass", "label": "Name on the pass",
                                      "kind": "text", "per_pass": True,
                                      "required": True}], expected_version=0)
    url = reverse("booking:event_detail", args=[event.id])
    html = client.get(url).content.decode()
    # Two sentences, in two elements of the help text the field points to.
    assert ('<span class="ticket-description">Talks all day.</span> '
            '<span class="ticket-seats">10 seats left.') in html
    assert "Talks all day 10 left" not in html
    assert html.count("Answer for each seat you book") == 2  # with a script, without
    assert html.count('class="pass-questions"') == 4 and " hidden>" not in html.split(
        'data-pass="4"')[1][:20]
    assert 'src="/static/booking/signup.js"' in html
    token = re.search(r'name="token" value="([^"]+)"', html).group(1)
    refused = client.post(url, {"name": "Ada", "email": "ada@example.com", "token": token,
                                "qty_conference": "2"}).content.decode()
    assert 'data-pass="2">' in refused and 'data-pass="3" hidden>' in refused
    assert "Name on the pass, pass 2: This question is required." in refused
    assert "pass 3: This" not in refused
