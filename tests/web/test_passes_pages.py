"""Passes people see (the booked page, the printable page, the confirmation e-mail) and
the scanner page's own answers (headers, sign-in, bad input, the name search)."""
import email
import json
import re
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from django.core import mail
from django.urls import reverse

from booking import links, pass_images
from booking.checkin.passes import PassSigner
from booking.mail.inline import EmailWithInlineImages, InlineImage
from booking.organizers.models import CHECKIN
from tests.organizers.helpers import staff
from tests.helpers import forged
from tests.web.test_signup import submit


@pytest.fixture
def event(service):
    return service.create_event(name="Pass night", capacity=10, organizer="alpha",
                                ticket_types={"conference": [], "workshop": []},
                                max_per_order=5)


def booked_path(registration) -> str:
    token = links.registration_token(registration, salt=links.CONFIRMATION_SALT)
    return reverse("booking:booked", args=[registration.event_id, token])


def test_qr__a_full_qr_code_never_micro_sized_by_css():
    code = PassSigner(b"k").code("a" * 32, "b" * 32 + "-1", "admission")
    svg = pass_images.svg(code, title="Ada <&> pass")

    assert svg.startswith('<svg viewBox="0 0 ') and 'class="pass-qr"' in svg
    assert "width=" not in svg.split(">")[0]  # the page's CSS sizes it
    assert "<title>Ada &lt;&amp;&gt; pass</title>" in svg
    side = int(re.search(r'viewBox="0 0 (\d+) ', svg)[1])
    assert side >= 21 + 8  # a QR code of version 1 or more with its quiet zone
    png = pass_images.png(code)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(ValueError):
        pass_images.svg("")


def test_booked_page__one_pass_per_seat_with_qr_and_printable_link(client, service, event):
    registration = service.book(event.id, name="Ada", email="ada@example.com",
                                tickets={"conference": 2, "workshop": 1})
    page = client.get(booked_path(registration)).content.decode()
    passes = service.passes(registration)

    assert page.count('class="pass-qr"') == 3
    for each in passes:
        assert each.code in page
    assert page.count("Conference") >= 2 and "Workshop" in page
    printable = reverse("booking:passes", args=[event.id, booked_path(registration).split("/")[-2]])
    assert f'href="{printable}"' in page


def test_printable_passes__one_a_page_by_the_persons_link_only(client, service, event):
    registration = service.book(event.id, name="Ada", email="ada@example.com",
                                tickets={"conference": 2})
    token = booked_path(registration).split("/")[-2]
    response = client.get(reverse("booking:passes", args=[event.id, token]))
    page = response.content.decode()

    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    assert page.count('class="pass-card') == 2 and "passes-print" in page
    assert "pass 1 of 2" in page and "pass 2 of 2" in page and "Ada" in page
    other = service.create_event(name="Other", capacity=3)
    assert client.get(reverse("booking:passes", args=[other.id, token])).status_code == 400
    assert client.get(reverse("booking:passes", args=[event.id, token + "x"])).status_code == 400
    service.cancel(event.id, email="ada@example.com")
    gone = client.get(reverse("booking:passes", args=[event.id, token]))
    assert gone.status_code == 410 and "pass-qr" not in gone.content.decode()


def test_confirmation_email__each_pass_an_inline_png_by_cid_and_its_code_in_text(
        client, service):
    plain = service.create_event(name="Mail night", capacity=5, starts_at="2031-05-01 18:00")
    submit(client, plain.id, email="mia@example.com")
    (sent,) = mail.outbox
    (the_pass,) = service.passes(service.find_registration(plain.id, email="mia@example.com"))
    parsed = email.message_from_bytes(sent.message().as_bytes())

    assert the_pass.code in sent.body
    tree = [(part.get_content_type(), part.get("Content-ID")) for part in parsed.walk()]
    assert [t for t, _ in tree] == ["multipart/mixed", "multipart/alternative", "text/plain",
                                    "multipart/related", "text/html", "image/png",
                                    "text/calendar"]
    html = next(p for p in parsed.walk() if p.get_content_type() == "text/html")
    cid = dict(tree)["image/png"].strip("<>")
    assert f'src="cid:{cid}"' in html.get_payload(decode=True).decode()
    image = next(p for p in parsed.walk() if p.get_content_type() == "image/png")
    assert image.get_payload(decode=True) == pass_images.png(the_pass.code)


def test_inline_images__without_images_the_message_is_djangos_own():
    message = EmailWithInlineImages("s", "text", None, ["a@example.com"])
    message.attach_alternative("<p>html</p>", "text/html")
    kinds = [p.get_content_type() for p in message.message().walk()]
    assert kinds == ["multipart/alternative", "text/plain", "text/html"]
    with_image = EmailWithInlineImages("s", "text", None, ["a@example.com"],
                                       inline_images=[InlineImage("x@y", b"png", "x.png")])
    with_image.attach_alternative("<img src='cid:x@y'>", "text/html")
    kinds = [p.get_content_type() for p in with_image.message().walk()]
    assert kinds == ["multipart/alternative", "text/plain", "multipart/related", "text/html",
                     "image/png"]


# --- the scanner page ---------------------------------------------------------------------
@pytest.fixture
def door_staff(db, client):
    user = staff("door", "alpha", CHECKIN)
    client.force_login(user)
    return user


@pytest.fixture
def door_list(service, event):
    return service.create_checkin_list(event.id, name="Main door")


def test_scanner__camera_allowed_here_only_and_strict_csp(client, door_staff, door_list):
    page = client.get(f"/checkin/{door_list.id}/")
    elsewhere = client.get("/checkin/")

    assert page.status_code == 200
    policy = page["Permissions-Policy"]
    assert "camera=(self)" in policy and "camera=()" not in policy
    assert "microphone=()" in policy and "geolocation=()" in policy
    assert "camera=()" in elsewhere["Permissions-Policy"]
    assert "unsafe-inline" not in page["Content-Security-Policy"]
    html = page.content.decode()
    assert "<script>" not in html  # scripts are static files; the config is JSON data
    assert 'type="application/json"' in html and "vendor/jsqr-1.4.0/jsQR.js" in html


def test_scanner__config_holds_the_events_public_key_and_list_rules(
        client, service, door_staff, event):
    limited = service.create_checkin_list(event.id, name="Workshop room",
                                          ticket_types=["workshop"], allow_reentry=True)
    html = client.get(f"/checkin/{limited.id}/").content.decode()
    config = json.loads(re.search(r'id="checkin-config" type="application/json">(.*?)</script>',
                                  html)[1])

    assert config["publicKeys"] == [service.pass_public_key(event.id)]
    assert config["eventId"] == event.id and config["listId"] == limited.id
    assert config["ticketTypes"] == ["workshop"] and config["allowReentry"] is True
    assert config["ticketLabels"] == {"conference": "Conference", "workshop": "Workshop"}


def test_scanner__pick_page_lists_only_events_the_user_may_scan(client, service, door_staff,
                                                                 door_list):
    theirs = service.create_event(name="Beta gala", capacity=5, organizer="beta")
    service.create_checkin_list(theirs.id, name="Beta door")
    page = client.get("/checkin/").content.decode()

    assert "Pass night" in page and "Main door" in page
    assert "Beta gala" not in page and "Beta door" not in page


def test_scanner__signed_out__sign_in_first_and_json_answers_404(client, db, door_list):
    page = client.get(f"/checkin/{door_list.id}/")
    assert page.status_code == 302 and page["Location"].startswith("/admin/login/?next=")
    assert client.get("/checkin/").status_code == 302
    scan = client.post(f"/checkin/{door_list.id}/scan/", "{}", content_type="application/json")
    assert scan.status_code == 404


@pytest.mark.parametrize("body, field", [
    ("not json", None), ("[1]", None),
    (json.dumps({"code": "BP1.x.y", "direction": "sideways", "nonce": "n" * 12}), "direction"),
    (json.dumps({"code": "BP1.x.y", "direction": "entry"}), "nonce"),
    (json.dumps({"code": "", "direction": "entry", "nonce": "n" * 12}), "code"),
])
def test_scanner__bad_input__400_with_the_reason_nothing_stored(client, service, door_staff,
                                                                door_list, body, field):
    response = client.post(f"/checkin/{door_list.id}/scan/", body,
                           content_type="application/json")

    assert response.status_code == 400 and json.loads(response.content)["error"]
    assert service.scan_log(door_list.id) == []


def test_scanner__a_scan_answers_every_decision_with_200(client, service, door_staff,
                                                         door_list, event):
    registration = service.book(event.id, name="Ann Example", email="ann@example.com",
                                tickets={"conference": 1})
    (the_pass,) = service.passes(registration)
    nonce = uuid.uuid4().hex

    def scan(code, nonce):
        response = client.post(f"/checkin/{door_list.id}/scan/",
                               json.dumps({"code": code, "direction": "entry", "nonce": nonce,
                                           "gate": "West"}), content_type="application/json")
        assert response.status_code == 200
        return json.loads(response.content)

    first = scan(the_pass.code, nonce)
    assert (first["status"], first["name"], first["ticket_label"]) == (
        "admitted", "Ann Example", "Conference")
    assert scan(the_pass.code, nonce) == first  # a lost answer asked again: the same
    again = scan(the_pass.code, uuid.uuid4().hex)
    assert again["status"] == "already_admitted" and again["first_gate"] == "West"
    assert scan(forged(the_pass.code), uuid.uuid4().hex)["status"] == "unknown_code"


def test_scanner__batch_uploads_a_queue_once(client, service, door_staff, door_list, event):
    codes = [service.passes(service.book(event.id, name=f"P{n}", email=f"p{n}@example.com",
                                         tickets={"conference": 1}))[0].code for n in range(2)]
    start = datetime.now(timezone.utc) - timedelta(minutes=5)
    scans = [{"code": code, "direction": "entry", "nonce": uuid.uuid4().hex, "gate": "Hall",
              "scanned_at": (start + timedelta(minutes=n)).isoformat()}
             for n, code in enumerate(codes)]
    body = json.dumps({"scans": scans})

    first = client.post(f"/checkin/{door_list.id}/batch/", body, content_type="application/json")
    again = client.post(f"/checkin/{door_list.id}/batch/", body, content_type="application/json")

    assert [r["status"] for r in json.loads(first.content)["results"]] == ["admitted"] * 2
    assert json.loads(again.content) == json.loads(first.content)
    assert service.checkin_list(door_list.id).admitted == 2


def test_scanner__name_search_finds_names_never_addresses(client, service, door_staff,
                                                          door_list, event):
    service.book(event.id, name="Grace Hopper", email="grace@navy.example",
                 tickets={"conference": 1, "workshop": 1})
    service.book(event.id, name="Alan Turing", email="hopper-fan@example.com",
                 tickets={"conference": 1})

    found = json.loads(client.get(f"/checkin/{door_list.id}/search/?q=hopper").content)

    assert [p["name"] for p in found["people"]] == ["Grace Hopper"]  # not by e-mail
    assert [p["ticket_label"] for p in found["people"][0]["passes"]] == ["Conference",
                                                                         "Workshop"]
    assert "@" not in json.dumps(found)


def test_scanner__two_phones_offline_one_pass__one_admission_one_conflict_reported(
        client, service, door_staff, door_list, event):
    (the_pass,) = service.passes(service.book(event.id, name="Dee", email="dee@example.com",
                                              tickets={"conference": 1}))
    start = datetime.now(timezone.utc) - timedelta(minutes=10)

    def phone(gate, minutes):
        scan = {"code": the_pass.code, "direction": "entry", "nonce": uuid.uuid4().hex,
                "gate": gate, "scanned_at": (start + timedelta(minutes=minutes)).isoformat()}
        response = client.post(f"/checkin/{door_list.id}/batch/", json.dumps({"scans": [scan]}),
                               content_type="application/json")
        return json.loads(response.content)["results"][0]

    north, south = phone("North", 1), phone("South", 2)

    assert (north["status"], north["conflict"]) == ("admitted", False)
    assert south["conflict"] is True and south["accepted"] is False
    assert south["first_gate"] == "North" and south["message"]
    counted = service.checkin_list(door_list.id)
    assert (counted.admitted, counted.conflicts) == (1, 1)


def test_scanner__service_worker_served_from_checkin_scope_without_any_list(client, db):
    response = client.get("/checkin/worker.js")
    body = response.content.decode()

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert "/static/booking/checkin.js" in body and "jsqr-1.4.0/jsQR.js" in body
    assert 'request.method !== "GET"' in body  # scans are never cached or replayed


def test_booked_and_booking_pages__each_pass_shows_its_own_short_code_under_its_qr(
        client, service, event):
    """A guest reads the short code aloud or types it at the scanner: each pass's own,
    right after its QR code, on the page after booking and on the booking's own page."""
    registration = service.book(event.id, name="Ada", email="ada-short@example.com",
                                tickets={"conference": 2, "workshop": 1})
    passes = service.passes(registration)
    assert len({each.short_code for each in passes}) == 3
    booking_page = reverse("booking:booking", args=[
        links.registration_token(registration, salt=links.CANCEL_SALT)])
    for path in (booked_path(registration), booking_page):
        page = client.get(path).content.decode()
        cards = page.split('class="pass-card')[1:]
        assert len(cards) == 3, path
        for card, each in zip(cards, passes):
            qr, after = card.split('class="pass-qr"', 1)
            assert each.short_code not in qr and (
                f"Code at the door: <strong>{each.short_code}</strong>" in after), path
