"""The admin's questions page offers several blank rows, and more without a script, and
names ticket types by their labels."""
import re

import pytest
from django.urls import reverse

from tests.organizers.helpers import DEFAULT

pytestmark = pytest.mark.django_db


def rows_of(html: str) -> int:
    return int(re.search(r'name="form-TOTAL_FORMS" value="(\d+)"', html).group(1))


def test_three_blank_rows__more_without_saving__then_all_saved(admin_client, service):
    event = service.create_event(name="Summit", capacity=10, organizer=DEFAULT)
    url = reverse("admin:booking_dynamoevent_questions", args=[event.id])
    html = admin_client.get(url).content.decode()
    assert rows_of(html) == 3 and html.count("New question") == 3
    typed = {"version": "0", "form-TOTAL_FORMS": "3", "form-INITIAL_FORMS": "0",
             "form-MIN_NUM_FORMS": "0", "form-MAX_NUM_FORMS": "60",
             **{f"form-{n}-{field}": "" for n in range(3)
                for field in ("id", "label", "choices", "help_text", "ORDER")},
             **{f"form-{n}-kind": "text" for n in range(3)},
             "form-0-id": "company", "form-0-label": "Company", "form-0-ORDER": "1",
             "form-1-id": "diet", "form-1-label": "", "form-1-ORDER": "2"}  # half typed
    more = admin_client.post(url, {**typed, "more_rows": "More blank rows"})
    page = more.content.decode()
    assert more.status_code == 200 and rows_of(page) == 6
    assert 'value="Company"' in page and "This field is required" not in page
    assert service.get_event(event.id).questions == ()  # nothing saved
    saved = admin_client.post(url, {**typed, "form-1-label": "Diet", "form-TOTAL_FORMS": "6",
                                    **{f"form-{n}-kind": "text" for n in range(3, 6)}})
    assert saved.status_code == 302
    assert [q.id for q in service.get_event(event.id).questions] == ["company", "diet"]


def test_the_registrations_button_comes_before_the_intro_and_types_show_labels(
        admin_client, service):
    event = service.create_event(
        name="DevConf", capacity=10, organizer=DEFAULT, max_per_order=2,
        ticket_types={"conference": [], "workshop-a": []},
        ticket_labels={"conference": "Conference pass"})
    html = admin_client.get(reverse("admin:booking_dynamoevent_questions",
                                    args=[event.id])).content.decode()
    assert html.index('class="object-tools"') < html.index('class="questions-intro"')
    assert "Conference pass</label>" in html and "Workshop A</label>" in html
