"""The events admin: list, add, change (optimistic locking), delete, against DynamoDB (moto)."""
import pytest
from django.urls import reverse

from booking.admin import EventAdmin
from booking.errors import EventNotFound

GUARDED = ("aggregate", "lock_table", "slots")
pytestmark = pytest.mark.django_db


def admin_url(name, *args):
    return reverse(f"admin:booking_dynamoevent_{name}", args=args)


def book(service, event, count, start=0):
    for n in range(start, start + count):
        service.book(event.id, name=f"Person {n}", email=f"p{n}@example.com")


def change_data(form_response, **overrides):
    """What the browser would post back from a rendered change form, with edits."""
    form = form_response.context["form"]
    data = {name: form[name].value() or "" for name in form.fields}
    return {**data, **overrides}


def test_list__shows_seats_strategy_and_version(admin_client, service):
    for strategy in GUARDED:
        event = service.create_event(name=f"Talk {strategy}", capacity=4, strategy=strategy)
        book(service, event, 1)
    response = admin_client.get(admin_url("changelist"))
    assert response.status_code == 200
    rows = {row["event"].name: row for row in response.context["rows"]}
    assert set(rows) == {f"Talk {s}" for s in GUARDED}
    for strategy in GUARDED:
        row = rows[f"Talk {strategy}"]
        assert (row["seats"].confirmed, row["seats"].remaining) == (1, 3)
        assert row["event"].strategy == strategy
    assert rows["Talk aggregate"]["event"].version == 1  # bookings never bump the edit version
    assert b"Talk lock_table" in response.content and b"admin/css/base.css" in response.content


def test_list__pages__follow_next_links_through_all_events(admin_client, service, monkeypatch):
    monkeypatch.setattr(EventAdmin, "list_per_page", 2)
    created = {service.create_event(name=f"Event {n}", capacity=1).name for n in range(5)}
    seen, url = [], admin_url("changelist")
    for _ in range(5):
        response = admin_client.get(url)
        seen += [row["event"].name for row in response.context["rows"]]
        assert len(response.context["rows"]) <= 2
        if not response.context["next_url"]:
            break
        url = admin_url("changelist") + response.context["next_url"]
        assert admin_client.get(url).context["first_url"]
    assert sorted(seen) == sorted(created)


def test_list__tampered_page_link__shows_first_page_with_warning(admin_client, service):
    service.create_event(name="Only", capacity=1)
    response = admin_client.get(admin_url("changelist") + "?page=forged", follow=True)
    assert [row["event"].name for row in response.context["rows"]] == ["Only"]
    assert "not valid" in response.content.decode()


def test_list__search__keeps_matching_names(admin_client, service):
    service.create_event(name="Python meetup", capacity=1)
    service.create_event(name="Rust meetup", capacity=1)
    response = admin_client.get(admin_url("changelist") + "?q=Python")
    assert [row["event"].name for row in response.context["rows"]] == ["Python meetup"]


@pytest.mark.parametrize(("crowd", "kind"), [
    ("few", "lock_table"), ("hundreds", "slots"), ("thousands", "shards")])
def test_add__valid__creates_bookable_event(admin_client, service, crowd, kind):
    response = admin_client.post(admin_url("add"), {
        "name": "Workshop", "capacity": "2", "crowd": crowd, "starts_at": "2031-05-01T18:30"})
    assert response.status_code == 302
    (event,) = service.iter_events()
    assert (event.name, event.capacity, event.strategy) == ("Workshop", 2, kind)
    assert event.starts_at.hour == 18
    book(service, event, 2)
    assert service.availability(event.id).is_full


def test_add__form__asks_the_crowd_in_plain_words_never_strategy_names(admin_client, service):
    response = admin_client.get(admin_url("add"))
    form = response.context["form"]
    assert [value for value, _ in form.fields["crowd"].choices] == [
        "few", "hundreds", "thousands", "line"]
    assert form["crowd"].value() == "few"
    html = response.content.decode()
    assert "How many people do you expect in the first minute?" in html
    for internal in ("lock_table", "aggregate", "slots", "streams", "shards", "Size"):
        assert internal not in html


@pytest.mark.parametrize(("data", "field", "text"), [
    ({"capacity": "-1"}, "capacity", "greater than or equal to 0"),
    ({"capacity": "20000", "crowd": "hundreds"}, "capacity", "at most 10,000 seats"),
    ({"crowd": "unguarded"}, "crowd", "valid choice"),
    ({"name": "   "}, "name", "required"),
])
def test_add__bad_input__error_next_to_field_and_nothing_stored(admin_client, service, data,
                                                                field, text):
    posted = {"name": "Workshop", "capacity": "2", "crowd": "few", **data}
    response = admin_client.post(admin_url("add"), posted)
    assert response.status_code == 200
    assert text in " ".join(response.context["form"].errors[field])
    assert list(service.iter_events()) == []


@pytest.mark.parametrize("strategy", GUARDED)
def test_change__current_version__saves(admin_client, service, strategy):
    event = service.create_event(name="Talk", capacity=2, strategy=strategy)
    opened = admin_client.get(admin_url("change", event.id))
    response = admin_client.post(admin_url("change", event.id),
                                 change_data(opened, name="Talk (room B)", capacity="6"))
    assert response.status_code == 302
    saved = service.get_event(event.id)
    assert (saved.name, saved.capacity, saved.version) == ("Talk (room B)", 6, event.version + 1)
    assert service.availability(event.id).remaining == 6


@pytest.mark.parametrize("strategy", GUARDED)
def test_change__two_forms_same_version__second_shows_conflict_and_keeps_first(
        admin_client, service, strategy):
    event = service.create_event(name="Talk", capacity=2, strategy=strategy)
    first = admin_client.get(admin_url("change", event.id))
    second = admin_client.get(admin_url("change", event.id))
    admin_client.post(admin_url("change", event.id), change_data(first, capacity="5"))
    response = admin_client.post(admin_url("change", event.id),
                                 change_data(second, name="Renamed"))
    assert response.status_code == 200
    assert "changed by someone else since you opened it" in response.content.decode()
    assert response.context["conflict"].capacity == 5
    kept = service.get_event(event.id)
    assert (kept.name, kept.capacity) == ("Talk", 5)
    # Re-applying the shown form (now at the current version) saves on top of the first edit.
    response = admin_client.post(admin_url("change", event.id), change_data(response))
    assert response.status_code == 302
    assert service.get_event(event.id).name == "Renamed"


@pytest.mark.parametrize("strategy", GUARDED)
def test_change__booked_after_opening__edit_still_saved(admin_client, service, strategy):
    event = service.create_event(name="Talk", capacity=3, strategy=strategy)
    opened = admin_client.get(admin_url("change", event.id))
    book(service, event, 2)
    response = admin_client.post(admin_url("change", event.id),
                                 change_data(opened, capacity="2", name="Talk 2"))
    assert response.status_code == 302
    changed = service.get_event(event.id)
    assert (changed.capacity, changed.name, changed.version) == (2, "Talk 2", event.version + 1)


def test_change__edited_by_someone_else_after_opening__shows_conflict(admin_client, service):
    event = service.create_event(name="Talk", capacity=3, strategy="aggregate")
    opened = admin_client.get(admin_url("change", event.id))
    service.update_event(event.id, expected_version=event.version, name="Their name")
    response = admin_client.post(admin_url("change", event.id), change_data(opened, capacity="1"))
    assert "since you opened it" in response.content.decode()
    assert response.context["form"]["version"].value() == event.version + 1
    assert service.get_event(event.id).capacity == 3


@pytest.mark.parametrize("strategy", GUARDED)
def test_change__capacity_below_confirmed__error_next_to_capacity(admin_client, service, strategy):
    event = service.create_event(name="Talk", capacity=3, strategy=strategy)
    book(service, event, 2)
    opened = admin_client.get(admin_url("change", event.id))
    response = admin_client.post(admin_url("change", event.id), change_data(opened, capacity="1"))
    assert "2 people are registered" in " ".join(response.context["form"].errors["capacity"])
    assert service.availability(event.id).capacity == 3
    assert len(service.registrations(event.id)) == 2


def test_change__unknown_event__404(admin_client, service):
    response = admin_client.get(admin_url("change", "0" * 32))
    assert response.status_code == 404


@pytest.mark.parametrize("strategy", GUARDED)
def test_delete__confirm_then_post__removes_event_and_registrations(admin_client, service,
                                                                    strategy):
    event = service.create_event(name="Talk", capacity=3, strategy=strategy)
    book(service, event, 2)
    confirm = admin_client.get(admin_url("delete", event.id))
    assert "2 registrations will be deleted with it" in confirm.content.decode()
    assert admin_client.post(admin_url("delete", event.id)).status_code == 302
    with pytest.raises(EventNotFound):
        service.get_event(event.id)
    assert list(service.iter_events()) == []


def test_list__search_ignores_case(admin_client, service):
    service.create_event(name="Wine tasting", capacity=3)
    service.create_event(name="Beer night", capacity=3)
    response = admin_client.get(admin_url("changelist") + "?q=WINE")
    assert [row["event"].name for row in response.context["rows"]] == ["Wine tasting"]


def test_list__soonest_first_filters_upcoming_past_full(admin_client, service):
    later = service.create_event(name="Later", capacity=1, starts_at="2031-01-01 10:00")
    sooner = service.create_event(name="Sooner", capacity=2, starts_at="2030-01-01 10:00")
    past = service.create_event(name="Past", capacity=1, starts_at="2020-01-01 10:00")
    service.book(later.id, name="Ada", email="ada@example.com")

    def names(query=""):
        response = admin_client.get(admin_url("changelist") + query)
        return [row["event"].name for row in response.context["rows"]]

    assert names() == ["Past", "Sooner", "Later"]
    assert names("?show=upcoming") == ["Sooner", "Later"]
    assert names("?show=past") == [past.name]
    assert names("?show=full") == ["Later"] and sooner


def test_list__internals_out_plain_language_sizes(admin_client, service):
    service.create_event(name="Talk", capacity=1200, strategy="slots")
    html = admin_client.get(admin_url("changelist")).content.decode()
    assert "Version" not in html and "1,200" in html and "Hundreds at once" in html
    assert "slots" not in html


def test_add__plain_choices_default_and_save_and_add_another(admin_client, service, settings):
    form = admin_client.get(admin_url("add")).context["form"]
    labels = dict(form.fields["crowd"].choices)
    assert labels["few"].startswith("A few at a time") and "almost every event" in labels["few"]
    response = admin_client.post(admin_url("add"), {
        "name": "Wine", "capacity": "5", "crowd": "few", "time_zone": "Europe/Berlin",
        "starts_at": "2030-12-12 19:30", "ends_at": "", "venue": "", "description": "",
        "_addanother": "1"})
    assert response.status_code == 302 and response["Location"] == admin_url("add")
    [event] = [e for e in service.iter_events() if e.name == "Wine"]
    assert event.starts_at.isoformat() == "2030-12-12T18:30:00+00:00"


def test_add_and_change__many_events__the_list_after_saving_shows_the_one_saved(
        admin_client, service, monkeypatch):
    # The list is a Scan's page, in the table's order: with more events than a page holds,
    # the one just saved is often on a later page unless the list is searched for it.
    monkeypatch.setattr(EventAdmin, "list_per_page", 2)
    for n in range(6):
        service.create_event(name=f"Older {n}", capacity=1)
    response = admin_client.post(admin_url("add"), {
        "name": "Jazz and wine", "capacity": "5", "crowd": "few", "time_zone": "Europe/Berlin",
        "starts_at": "2030-12-12 19:30", "ends_at": "", "venue": "", "description": ""},
        follow=True)
    assert [row["event"].name for row in response.context["rows"]] == ["Jazz and wine"]
    assert "The event “Jazz and wine” was added." in response.content.decode()
    [event] = [e for e in service.iter_events() if e.name == "Jazz and wine"]
    form = admin_client.get(admin_url("change", event.id))
    response = admin_client.post(admin_url("change", event.id),
                                 change_data(form, capacity="7"), follow=True)
    assert [row["event"].name for row in response.context["rows"]] == ["Jazz and wine"]
    assert response.context["search"] == "Jazz and wine"


def test_add__bad_zone_or_end_before_start__errors_at_fields_nothing_stored(admin_client,
                                                                           service):
    response = admin_client.post(admin_url("add"), {
        "name": "Wine", "capacity": "5", "crowd": "few", "time_zone": "Berlln",
        "starts_at": "2030-12-12 19:30", "ends_at": "2030-12-12 18:00"})
    assert "Did you mean Europe/Berlin?" in " ".join(response.context["form"].errors["time_zone"])
    response = admin_client.post(admin_url("add"), {
        "name": "Wine", "capacity": "5", "crowd": "few", "time_zone": "Europe/Berlin",
        "starts_at": "2030-12-12 19:30", "ends_at": "2030-12-12 18:00"})
    assert "after the start" in " ".join(response.context["form"].errors["ends_at"])
    assert not [e for e in service.iter_events() if e.name == "Wine"]


def test_add__city_name__the_zone_it_names_and_offered_first_next_time(admin_client, service):
    response = admin_client.post(admin_url("add"), {
        "name": "Wine", "capacity": "5", "crowd": "few", "time_zone": "berlin",
        "starts_at": "2030-12-12T19:30"})
    assert response.status_code == 302
    [event] = service.iter_events()
    assert event.time_zone == "Europe/Berlin"
    assert event.starts_at.isoformat() == "2030-12-12T18:30:00+00:00"
    again = admin_client.get(admin_url("add"))
    assert again.context["time_zones"][0] == ("Europe/Berlin", "Berlin")
    assert again.context["form"]["time_zone"].value() == "Europe/Berlin"


def test_add__several_bad_fields__every_error_at_once_nothing_stored(admin_client, service):
    response = admin_client.post(admin_url("add"), {
        "name": "   ", "capacity": "20000", "crowd": "hundreds", "time_zone": "Europe/Berlin",
        "starts_at": "2030-12-12T19:30", "ends_at": "2030-12-12T18:00", **rows(
            quotas=[("Workshop A", "")], types=[("Workshop A", "", "Workshop C")])})
    form = response.context["form"]
    assert {"name", "capacity", "ends_at"} <= set(form.errors)
    assert "How many seats" in str(form.quota_rows.errors)
    html = response.content.decode()
    assert html.count("<li><a href=") >= 3  # the summary links to each field
    assert list(service.iter_events()) == []


def test_add__start_in_past_or_quota_beyond_capacity__warns_then_saves_when_confirmed(
        admin_client, service):
    posted = {"name": "Late", "capacity": "10", "crowd": "few", "starts_at": "2020-01-01T10:00",
              **rows(quotas=[("Room", "20")], types=[("Room seat", "", "Room")])}
    response = admin_client.post(admin_url("add"), posted)
    assert response.status_code == 200
    warnings = " ".join(response.context["form"].warnings)
    assert "The start is in the past" in warnings and "more than the event's 10" in warnings
    assert "Save anyway" in response.content.decode() and list(service.iter_events()) == []
    assert admin_client.post(admin_url("add"), {**posted, "save_anyway": "on"}).status_code == 302
    [event] = service.iter_events()
    assert event.quotas == {"room": 20}


def rows(*, quotas=(), types=()) -> dict:
    """The add form's quota and ticket-type rows as a browser posts them."""
    data = {"quota-TOTAL_FORMS": "3", "quota-INITIAL_FORMS": "0",
            "type-TOTAL_FORMS": "4", "type-INITIAL_FORMS": "0"}
    for number, (label, seats) in enumerate(quotas):
        data |= {f"quota-{number}-label": label, f"quota-{number}-seats": seats}
    for number, (label, description, against) in enumerate(types):
        data |= {f"type-{number}-label": label, f"type-{number}-description": description,
                 f"type-{number}-counts_against": against}
    return data


def test_change__shows_local_time_in_event_zone(admin_client, service):
    event = service.create_event(name="Wine", capacity=5, time_zone="Europe/Berlin",
                                 starts_at="2030-12-12 19:30")
    form = admin_client.get(admin_url("change", event.id)).context["form"]
    assert (form["starts_at"].value(), form["time_zone"].value()) == (
        "2030-12-12T19:30", "Europe/Berlin")
    assert 'type="datetime-local"' in str(form["starts_at"])


def test_export__registered_at_in_event_zone_with_offset(admin_client, service):
    event = service.create_event(name="Wine", capacity=5, time_zone="Asia/Kolkata")
    service.book(event.id, name="Ada", email="ada@example.com")
    body = b"".join(admin_client.get(admin_url("export", event.id)).streaming_content).decode()
    assert body.splitlines()[1].endswith('+05:30"')


def workshop_event(service, strategy="lock_table"):
    event = service.create_event(name="DevConf", capacity=10, strategy=strategy,
                                 quotas={"workshop-a": 3}, max_per_order=4,
                                 ticket_types={"conference": [], "workshop-a": ["workshop-a"]})
    service.book(event.id, name="Ada", email="ada@example.com", tickets={"workshop-a": 2})
    return event


def test_change__quota_field_shows_its_seats_and_resizes_it(admin_client, service):
    event = workshop_event(service)
    opened = admin_client.get(admin_url("change", event.id))
    field = opened.context["form"]["quota_workshop-a"]
    assert field.value() == 3 and "2 confirmed, 0 held, 1 remaining" in field.help_text
    posted = change_data(opened, **{"quota_workshop-a": "40"})
    warned = admin_client.post(admin_url("change", event.id), posted)
    assert "more than the event's 10" in " ".join(warned.context["form"].warnings)
    assert service.get_event(event.id).quotas == {"workshop-a": 3}
    response = admin_client.post(admin_url("change", event.id), {**posted, "save_anyway": "on"})
    assert response.status_code == 302
    assert service.availability(event.id).quotas["workshop-a"].capacity == 40
    assert service.get_event(event.id).quotas == {"workshop-a": 40}


@pytest.mark.parametrize("strategy", ("aggregate", "slots"))
def test_change__quota_below_confirmed__error_next_to_it_nothing_stored(admin_client, service,
                                                                       strategy):
    event = workshop_event(service, strategy)
    opened = admin_client.get(admin_url("change", event.id))
    response = admin_client.post(admin_url("change", event.id),
                                 change_data(opened, name="Renamed", **{"quota_workshop-a": "1"}))
    errors = " ".join(response.context["form"].errors["quota_workshop-a"])
    assert "2 seats are confirmed or held in quota 'workshop-a'" in errors
    stored = service.get_event(event.id)
    assert (stored.name, stored.quotas, stored.version) == ("DevConf", {"workshop-a": 3},
                                                             event.version)


def test_change__plain_event__no_quota_fields(admin_client, service):
    event = service.create_event(name="Talk", capacity=3, strategy="aggregate")
    opened = admin_client.get(admin_url("change", event.id))
    assert not [name for name in opened.context["form"].fields if name.startswith("quota_")]


def test_list__filter_with_no_match__says_the_filters_words(admin_client, service):
    service.create_event(name="Roomy", capacity=5, starts_at="2031-01-01 10:00")

    def empty_line(query):
        return admin_client.get(admin_url("changelist") + query).content.decode()

    full = empty_line("?show=full")
    assert "No full events." in full and "No events yet." not in full
    assert "No past events." in empty_line("?show=past")
    assert "No full event on this page has “Wine” in its name." in empty_line("?show=full&q=Wine")
    assert "No events yet." not in empty_line("")


def test_an_event_without_organizer_says_so_in_the_list_editor_and_webhook_form(
        admin_client, service):
    """Made from Python without ``organizer=``: the superuser's admin names the gap and the
    way out, never "Python meetup ()"."""
    orphan = service.create_event(name="Python meetup", capacity=2)
    service.create_event(name="Owned", capacity=2, organizer="acme")
    listing = admin_client.get(admin_url("changelist")).content.decode()
    assert listing.count("No organizer: only superusers see it") == 1
    editor = admin_client.get(admin_url("change", orphan.id)).content.decode()
    assert "Only superusers see this event" in editor and "assign_organizer" in editor
    webhooks = admin_client.get(reverse("admin:booking_api_webhookendpointentry_add")).content.decode()
    # A webhook belongs to an organizer and offers only that organizer's events: an event
    # with none is not offered at all (never as "Python meetup ()").
    assert "Python meetup" not in webhooks and "Owned" in webhooks
