"""The public signup form tells every error at once (booking/web/forms.py, views.py): the
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
