"""Every bad input is refused with a clear 4xx and nothing is stored: names, e-mails,
start dates, request bodies; and odd data already stored never breaks a page."""
from datetime import datetime, timedelta, timezone

import pytest
from django.contrib.contenttypes.models import ContentType
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from booking import validation
from tests.helpers import book_directly, table
from booking.dynamo.tables import EVENTS
from booking.errors import BookingClosed, InvalidBooking
from booking.models import DynamoEvent, Registration
from tests.web.test_signup import form_page, submit

FAR_FUTURE = "9999-12-31T23:59-05:00"
YEAR_ONE = "0001-01-01T00:00+05:00"


@pytest.fixture
def event(service):
    return service.create_event(name="Django meetup", capacity=5, strategy="lock_table",
                                starts_at=datetime(2031, 5, 4, 18, 30, tzinfo=timezone.utc))


def nothing_stored(service, event):
    return service.registrations(event.id) == [] and mail.outbox == []


# --- names -----------------------------------------------------------------------------
@pytest.mark.parametrize("name, text", [
    ("Ada\u2028Lovelace", "control characters"),       # line separator
    ("Ada\u2029Byron", "control characters"),          # paragraph separator
    ("\ufffd", "control characters"),                  # only a replacement character
    ("Ada \ufffd", "control characters"),
    ("Ada\ufdd0", "control characters"),               # noncharacters
    ("Ada\uffff", "control characters"),
    ("\u200d\u200c\u200d", "does not show"),            # invisible joiners only
    ("\u3164\u3164", "does not show"),                  # Hangul fillers render as nothing
    ("Ada\u3164", "does not show"),                     # ... also beside a letter
    ("\u2800\u2800", "does not show"),                  # braille blank pattern
    ("Ada\u2800Lovelace", "does not show"),
    ("Ada\u200dLovelace", "does not show"),              # a joiner Latin never needs
    ("A\ufe0fda", "does not show"),                     # a variation selector on a letter
    ("Ada\u034f", "does not show"),                     # combining grapheme joiner
    ("Ada\u115f\u1160", "does not show"),               # choseong/jungseong fillers
    ("Za" + "\u0301\u0302\u0303\u0304\u0305\u0306" + "lgo", "does not show"),  # a flood
    ("...", "letter or digit"),
    ("🎉", "letter or digit"),
])
def test_signup__unusable_name__400_nothing_stored(client, service, event, name, text):
    response = submit(client, event.id, name=name)

    assert response.status_code == 400
    assert text in response.content.decode()
    assert nothing_stored(service, event)


REAL_NAMES = [
    "Zoë O'Brien-Łukasiewicz", "李小龍", "R2D2", "Ada 🎉", "محمد", "Nguyễn Thị Minh Khai",
    "Þórunn Ásdís", "山田 太郎", "김민준", "Ελένη Παπαδοπούλου", "Юлия Смирнова",
    "שָׁלוֹם כֹּהֵן",            # Hebrew with points (up to three marks on a letter)
    "علی\u200cرضا",            # Persian: a non-joiner inside a name
    "लक्ष्मी", "क्\u200dष",      # Devanagari, with a joiner where shaping needs it
    "தமிழ்செல்வி", "สมชาย ใจดี", "ဇော်ဇော်", "ⵜⴰⵎⴰⵣⵉⵖⵜ",
    "葛\U000E0100飾",            # an ideographic variation selector after its ideograph
    "I \u2764\ufe0f Django",     # an emoji presentation selector
    "👨\u200d👩\u200d👧 Picnic",  # an emoji family sequence
    "\u2764\ufe0f\u200d\U0001F525 Fans",  # a ZWJ sequence after an emoji's presentation selector
]


@pytest.mark.parametrize("name", REAL_NAMES)
def test_person_name__real_names_in_many_scripts__accepted(name):
    assert validation.clean_person_name(name)


@pytest.mark.parametrize("name", ["Sophie Müller", "محمد علی\u200cرضا", "山田 太郎"])
def test_signup__real_name__booked_and_stored_as_typed(client, service, event, name):
    response = submit(client, event.id, name=name)

    assert response.status_code == 303  # to the confirmation page
    assert [r.name for r in service.registrations(event.id)] == [name]


@pytest.mark.parametrize("name", ["\u3164", "\u2800\u2800", "\u200b", "\u115f\u1160 \u3164",
                                  "A\u200d\u200dB\u3164"])
def test_create_event__invisible_name__refused_nothing_stored(service, name):
    with pytest.raises(InvalidBooking) as refused:
        service.create_event(name=name, capacity=3)

    assert refused.value.field == "name"
    assert service.list_events() == []


def test_admin_add__invisible_event_name__error_at_field_nothing_stored(admin_client, service, default_organizer):
    response = admin_client.post(reverse("admin:booking_dynamoevent_add"), {
        "name": "\u3164\u2800", "capacity": "3", "strategy": "lock_table"})

    assert response.status_code == 200
    assert "does not show" in response.content.decode()
    assert service.list_events() == []


def test_create_event__invisible_venue__refused_nothing_stored(service):
    with pytest.raises(InvalidBooking) as refused:
        service.create_event(name="Talk", capacity=3, venue="Room\u2800")

    assert refused.value.field == "venue" and service.list_events() == []


# --- e-mail addresses ------------------------------------------------------------------
@pytest.mark.parametrize("email", [
    "=?utf-8?b?YWRh?=@example.com",          # "ada" as an RFC 2047 encoded word
    "=?utf-8?q?ada?=@example.com", "=?UTF-8?B?YWRh?=@example.com",
    '"a da"@example.com', '"ada\\"@example.com', 'a"da@example.com',  # quotes that matter
    "ada@[127.0.0.1]", "ada@[IPv6:::1]",      # address literals
])
def test_signup__not_a_plain_address__400_explained_nothing_stored(client, service, event,
                                                                    email):
    response = submit(client, event.id, email=email)

    assert response.status_code == 400
    assert "Please type the address itself" in response.content.decode()
    assert nothing_stored(service, event)


@pytest.mark.parametrize("spelling", ['"ada"@example.com', '"Ada"@EXAMPLE.com',
                                      "ADA@example.com", '"ada"@Example.Com'])
def test_book__another_spelling_of_one_mailbox__already_registered(service, event, spelling):
    from booking.errors import AlreadyRegistered

    service.book(event.id, name="Ada", email="ada@example.com")

    with pytest.raises(AlreadyRegistered):
        service.book(event.id, name="Ada", email=spelling)
    assert len(service.registrations(event.id)) == 1


@pytest.mark.parametrize("other", ["ada+talks@example.com", "a.da@example.com"])
def test_book__plus_address_or_dots__distinct_people(service, event, other):
    service.book(event.id, name="Ada", email="ada@example.com")
    service.book(event.id, name="Ada", email=other)

    assert len(service.registrations(event.id)) == 2


def test_book__quoted_local_part__mailed_unquoted(service, event):
    registration = service.book(event.id, name="Carol", email='"carol"@example.com')

    assert registration.email == "carol@example.com"
    assert registration.contact in (None, "carol@example.com")


@pytest.mark.parametrize("email", ["ızmir@example.com", "straße@example.com",
                                   "josé@example.com"])
def test_signup__non_ascii_local_part__400_explained_nothing_stored(client, service, event,
                                                                    email):
    response = submit(client, event.id, email=email)

    assert response.status_code == 400
    assert "no accents or non-Latin letters" in response.content.decode()
    assert nothing_stored(service, event)


@pytest.mark.parametrize("email", ["user@straße.example", "user@exa mple.com",
                                   "user@.example", "user@ex\u2028ample.com"])
def test_signup__unusable_domain__400_nothing_stored(client, service, event, email):
    response = submit(client, event.id, email=email)

    assert response.status_code == 400
    assert nothing_stored(service, event)


def test_signup__idna_and_unicode_domain__one_person(client, service, event):
    first = submit(client, event.id, email="user@bücher.example")
    second = submit(client, event.id, email="User@XN--BCHER-KVA.example")

    assert (first.status_code, second.status_code) == (303, 409)
    assert [r.email for r in service.registrations(event.id)] == ["user@xn--bcher-kva.example"]


def test_signup__mail_goes_to_address_as_typed(client, service, event):
    submit(client, event.id, email="  Ada.Lovelace@Bücher.Example ")

    assert [m.to for m in mail.outbox] == [["Ada.Lovelace@Bücher.Example"]]
    assert service.registrations(event.id)[0].email == "ada.lovelace@xn--bcher-kva.example"


@pytest.mark.parametrize("email", ["Ada@Example.COM", " bob.SMITH+tag@Sub.Example.org ",
                                   "o'hara@example.ie", "X@Y.CO"])
def test_normalize_email__ascii_address__same_key_as_before(email):
    assert validation.normalize_email(email) == email.strip().casefold()


def test_cancel__registration_stored_under_earlier_key__still_found_and_cancelled(service,
                                                                                 event):
    legacy = Registration(event_id=event.id, email="ızmir@example.com", name="Legacy",
                          registered_at=datetime.now(timezone.utc), registration_id="a" * 32)
    book_directly(service.strategy(event.strategy), service, event, legacy)

    assert service.find_registration(event.id, email="ızmir@example.com") is not None
    service.cancel(event.id, email="ızmir@example.com")
    assert service.registrations(event.id) == []


# --- request bodies --------------------------------------------------------------------
def test_signup__multipart_with_file__415_nothing_stored(service, event, tmp_path):
    multipart = Client()  # Django's own client posts multipart/form-data
    upload = tmp_path / "small.bin"  # within the body limit: larger ones answer 413
    upload.write_bytes(b"x" * (16 * 1024))
    token = form_page(multipart, event.id)[1]
    with upload.open("rb") as part:
        response = multipart.post(reverse("booking:event_detail", args=[event.id]), {
            "name": "Ada", "email": "ada@example.com", "token": token, "file": part})

    assert response.status_code == 415
    assert "file uploads are not accepted" in response.content.decode()
    assert nothing_stored(service, event)


def test_cancel__multipart__415_nothing_cancelled(client, service, event):
    submit(client, event.id)
    link = mail.outbox[0].body.split("cancel/")[1].split("/")[0]

    response = Client().post(reverse("booking:cancel", args=[link]), {"x": "1"})

    assert response.status_code == 415
    assert len(service.registrations(event.id)) == 1


@pytest.mark.parametrize("charset", ["latin-1", "iso-8859-1", "utf-16", "cp1252", "no-such"])
def test_signup__non_utf8_charset__400_nothing_stored(client, service, event, charset):
    token = form_page(client, event.id)[1]
    body = f"name=Ad%E9&email=ada%40example.com&token={token}"

    response = client.generic(  # generic(): the client itself must not encode the body
        "POST", reverse("booking:event_detail", args=[event.id]), body.encode(),
        content_type=f"application/x-www-form-urlencoded; charset={charset}")

    assert response.status_code == 400
    assert "UTF-8" in response.content.decode()
    assert nothing_stored(service, event)


def test_signup__utf8_charset_named__accepted(client, service, event):
    token = form_page(client, event.id)[1]
    body = f"name=Ad%C3%A9&email=ada%40example.com&token={token}"

    response = client.post(reverse("booking:event_detail", args=[event.id]), body,
                           content_type="application/x-www-form-urlencoded; charset=UTF-8")

    assert response.status_code == 303
    assert [r.name for r in service.registrations(event.id)] == ["Adé"]


# --- start dates -------------------------------------------------------------------------
@pytest.mark.parametrize("starts_at", [FAR_FUTURE, YEAR_ONE, "1999-12-31T23:00Z",
                                       "2300-01-01T00:00Z"])
def test_create_event__implausible_start__refused_nothing_stored(service, starts_at):
    with pytest.raises(InvalidBooking) as refused:
        service.create_event(name="Odd", capacity=3, starts_at=starts_at)

    assert refused.value.field == "starts_at" and "between 2000" in refused.value.message
    assert service.list_events() == []


@pytest.mark.parametrize("starts_at", [FAR_FUTURE, YEAR_ONE])
def test_create_event_command__implausible_start__exit_2_nothing_stored(service, starts_at,
                                                                     default_organizer):
    with pytest.raises(CommandError, match="Start time must be between") as refused:
        call_command("create_event", "--name", "Odd", "--capacity", "3",
                     "--starts-at", starts_at)

    assert refused.value.returncode == 2
    assert service.list_events() == []


def test_create_event__start_with_offset__stored_in_utc(service):
    event = service.create_event(name="Talk", capacity=3, starts_at="2030-05-01T18:00+02:00")

    stored = service.get_event(event.id).starts_at
    assert stored.isoformat() == "2030-05-01T16:00:00+00:00"


class CountingInput:
    """A WSGI body that records how much of it anyone read."""

    def __init__(self, body: bytes):
        self.body, self.read_bytes = body, 0

    def read(self, size=-1):
        chunk = self.body[self.read_bytes:] if size is None or size < 0 else \
            self.body[self.read_bytes:self.read_bytes + size]
        self.read_bytes += len(chunk)
        return chunk

    def readline(self, size=-1):
        return self.read(size)


def wsgi_post(path: str, body: bytes, content_type: str):
    """POST ``body`` through the whole WSGI stack; (status, bytes of the body read)."""
    from django.core.handlers.wsgi import WSGIHandler
    from django.test import RequestFactory

    environ = dict(RequestFactory().generic("POST", path, b"", content_type=content_type).environ)
    environ["CONTENT_LENGTH"], stream = str(len(body)), CountingInput(body)
    environ["wsgi.input"] = stream
    statuses = []
    WSGIHandler()(environ, lambda status, headers, *exc: statuses.append(status))
    return int(statuses[0].split()[0]), stream.read_bytes


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/admin/login/", "/admin/password_change/", "/",
                                  "/events/" + "0" * 32 + "/", "/admin/logout/",
                                  "/admin/booking/dynamoevent/add/", "/api/v1/events/"])
@pytest.mark.parametrize("megabytes", [20, 100])
def test_request__body_over_the_limit__413_before_anything_reads_it(path, megabytes):
    body = b"--x\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\n"
    body += b"\0" * (megabytes * 1024 * 1024)

    status, read = wsgi_post(path, body, "multipart/form-data; boundary=x")

    assert (status, read) == (413, 0)


@pytest.mark.django_db
def test_request__body_within_the_limit__goes_on_to_the_usual_checks(service, event):
    status, _ = wsgi_post(f"/events/{event.id}/", b"name=Ada&email=ada%40example.com",
                          "application/x-www-form-urlencoded")

    assert status == 403  # no CSRF cookie: refused by the next check, not by its size


@pytest.mark.parametrize("starts_at", [FAR_FUTURE, YEAR_ONE, "9999-12-31T23:59"])
def test_admin_add__implausible_start__error_at_field_nothing_stored(admin_client, service,
                                                                    starts_at,
                                                                    default_organizer):
    response = admin_client.post(reverse("admin:booking_dynamoevent_add"), {
        "name": "Odd", "capacity": "3", "strategy": "lock_table", "starts_at": starts_at})

    assert response.status_code == 200
    assert "Start time must be between" in response.content.decode()
    assert service.list_events() == []


def test_admin_change__implausible_start__error_nothing_changed(admin_client, service, event):
    response = admin_client.post(reverse("admin:booking_dynamoevent_change", args=[event.id]), {
        "name": "Odd", "capacity": "3", "starts_at": FAR_FUTURE, "version": "1"})

    assert response.status_code == 200
    assert "Start time must be between" in response.content.decode()
    assert service.get_event(event.id) == event


@pytest.mark.parametrize("stored", ["9999-12-31T23:59:00-05:00", "0001-01-01T00:00:00+05:00",
                                    "not a date"])
def test_pages__odd_start_already_stored__never_500(client, admin_client, service, event,
                                                    stored):
    table(EVENTS).update({"event_id": event.id}, "SET starts_at = :odd",
                         values={":odd": stored})

    pages = [client.get("/"), client.get(f"/events/{event.id}/"),
             admin_client.get(reverse("admin:booking_dynamoevent_changelist")),
             admin_client.get(reverse("admin:booking_dynamoevent_change", args=[event.id]))]

    assert [page.status_code for page in pages] == [200, 200, 200, 200]
    assert "Date to be announced" in pages[1].content.decode()


@pytest.mark.parametrize(("stored_start", "zone"), [
    ("9999-12-31T20:00:00+00:00", "Pacific/Kiritimati"),  # overflows once in its zone (+14)
    ("2031-05-04T18:30:00+00:00", "Mars/Olympus_Mons"),   # a zone nobody knows
])
def test_pages__start_unshowable_in_its_stored_zone__date_to_be_announced(
        client, admin_client, service, event, stored_start, zone):
    table(EVENTS).update({"event_id": event.id}, "SET starts_at = :start, time_zone = :zone",
                         values={":start": stored_start, ":zone": zone})
    healthy = service.create_event(name="Healthy talk", capacity=3)

    pages = [client.get("/"), client.get(f"/events/{event.id}/"),
             admin_client.get(reverse("admin:booking_dynamoevent_changelist")),
             admin_client.get(reverse("admin:booking_dynamoevent_change", args=[event.id]))]

    assert [page.status_code for page in pages] == [200, 200, 200, 200]
    assert "Date to be announced" in pages[1].content.decode()
    assert healthy.name in pages[0].content.decode()  # one bad item never hides the list


def test_check_capacity__start_unshowable_in_its_stored_zone__named(service, event):
    from tests.management.test_check_capacity import check_json

    table(EVENTS).update({"event_id": event.id}, "SET time_zone = :zone",
                         values={":zone": "Mars/Olympus_Mons"})

    status, found = check_json(event.id)

    assert status == 1
    assert "event_time_showable" in str(found)


# --- bookings close when the event starts -------------------------------------------
@pytest.fixture
def started(service):
    return service.create_event(name="Started", capacity=5,
                                starts_at=datetime.now(timezone.utc) - timedelta(minutes=1))


def test_book__event_started__booking_closed_nothing_stored(service, started):
    with pytest.raises(BookingClosed):
        service.book(started.id, name="Ada", email="ada@example.com")

    assert service.registrations(started.id) == []


def test_signup__event_started__409_closed_nothing_stored(client, service, started):
    from booking.entry import forms as page_tokens

    response = submit(client, started.id, token=page_tokens.new_form_token(started.id))

    assert response.status_code == 409
    assert "Bookings closed when this event started" in response.content.decode()
    assert nothing_stored(service, started)


def test_pages__event_started__say_closed_without_form(client, started):
    detail, token = form_page(client, started.id)

    assert token is None and "Bookings closed" in detail.content.decode()
    assert "Bookings closed" in client.get("/").content.decode()


def test_book__start_moved_into_the_past__closed_after_the_event_is_read(service, event):
    service.update_event(event.id, expected_version=1,
                         starts_at=datetime.now(timezone.utc) - timedelta(seconds=1))

    with pytest.raises(BookingClosed):
        service.book(event.id, name="Ada", email="ada@example.com")


def test_book__repeat_of_a_booked_request_after_the_start__same_registration(service, event):
    booked = service.book(event.id, name="Ada", email="ada@example.com", request_id="a" * 32)
    service.update_event(event.id, expected_version=1,
                         starts_at=datetime.now(timezone.utc) - timedelta(seconds=1))

    again = service.book(event.id, name="Ada", email="ada@example.com", request_id="a" * 32)

    assert again.registration_id == booked.registration_id
    with pytest.raises(BookingClosed):
        service.book(event.id, name="Bo", email="bo@example.com", request_id="b" * 32)


# --- admin: CSV and "view on site" ---------------------------------------------------
def test_export__every_cell_quoted(admin_client, service, event):
    service.book(event.id, name="Lovelace; Ada", email="ada@example.com")

    response = admin_client.get(reverse("admin:booking_dynamoevent_export", args=[event.id]))

    lines = b"".join(response.streaming_content).decode().splitlines()
    assert lines[0] == '"name","email","registered_at"'
    assert lines[1].startswith('"Lovelace; Ada","ada@example.com","')


def view_on_site_url(object_id):
    content_type = ContentType.objects.get_for_model(DynamoEvent)
    return f"/admin/r/{content_type.id}/{object_id}/"


def test_view_on_site__event__redirects_to_public_page(admin_client, event):
    response = admin_client.get(view_on_site_url(event.id))

    assert response.status_code == 302
    assert response["Location"] == f"/events/{event.id}/"


@pytest.mark.parametrize("object_id", ["0" * 32, "not-an-id", "1"])
def test_view_on_site__unknown_event__404(admin_client, service, object_id):
    assert admin_client.get(view_on_site_url(object_id)).status_code == 404


def test_view_on_site__anonymous__sent_to_login(client, event):
    response = client.get(view_on_site_url(event.id))

    assert response.status_code == 302 and "/admin/login/" in response["Location"]
