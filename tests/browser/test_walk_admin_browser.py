"""A first organizer's walk through the admin's pages (headless Chromium, 1280 and 390 px):
adding an attendee on an event with required questions, the access codes' list and form,
the editor's code-only types, the questions page's blank rows."""
import uuid
from datetime import datetime, timedelta, timezone

from playwright.sync_api import expect

from tests.browser.test_editor_browser import sign_in

SOON = (datetime.now(timezone.utc) + timedelta(days=20)).isoformat()


def devconf(site_service, **extra):
    return site_service.create_event(
        name=f"DevConf {uuid.uuid4().hex[:6]}", capacity=20, strategy="lock_table",
        time_zone="Asia/Tokyo", starts_at=SOON, organizer="acme", max_per_order=2,
        ticket_types={"conference": [], "speaker": []},
        ticket_labels={"conference": "Conference pass"}, **extra)


def test_browser__add_attendee__required_answers_and_passes_booked(live_site, site_service,
                                                                   page, screenshot):
    event = devconf(site_service)
    site_service.set_questions(event.id, [
        {"id": "company", "label": "Company", "required": True},
        {"id": "name_on_pass", "label": "Name on the pass", "required": True,
         "per_pass": True}], expected_version=0)
    sign_in(live_site, page)
    page.goto(f"{live_site.url}/admin/booking/dynamoevent/{event.id}/registrations/add/")
    expect(page.get_by_label("Attendee's name")).to_be_visible()
    page.get_by_label("Attendee's name").fill("Ada Lovelace")
    page.get_by_label("Conference pass").fill("2")
    page.get_by_label("Company").fill("Analytical Engines")
    page.get_by_label("Name on the pass, pass 1").fill("Ada")
    page.get_by_label("Name on the pass, pass 2").fill("Charles")
    screenshot(page, "walk-admin-1-add-attendee")
    page.get_by_role("button", name="Add attendee").click()
    expect(page.locator(".messagelist")).to_contain_text("Added Ada Lovelace (2 seats).")
    [order] = site_service.registrations(event.id)
    assert site_service.answers(order).pass_answers == ({"name_on_pass": "Ada"},
                                                        {"name_on_pass": "Charles"})


def test_browser__access_codes__labels_reserved_seats_and_the_events_zone(
        live_site, site_service, page, screenshot):
    event = devconf(site_service, code_only_types=["speaker"])
    sign_in(live_site, page)
    page.goto(f"{live_site.url}/admin/booking/dynamoevent/{event.id}/access-codes/")
    expect(page.get_by_text("In the event's time zone, JST (Asia/Tokyo).")).to_be_visible()
    page.get_by_label("Code", exact=True).fill("SPEAKER-7Q2K")
    page.get_by_label("Seats reserved per code").fill("3")
    page.get_by_label("Valid until").fill("2031-05-01T18:30")
    page.get_by_label("Speaker (only with a code)").check()
    page.get_by_role("button", name="Create codes").click()
    row = page.locator("#result_list tbody tr").first
    expect(row).to_contain_text("SPEAKER-7Q2K")
    expect(row.locator(".field-reserved")).to_have_text("3")
    expect(row.locator(".field-types")).to_have_text("Speaker")
    expect(row.locator(".field-valid-until")).to_have_text("1 May 2031, 18:30 JST (Asia/Tokyo)")
    screenshot(page, "walk-admin-2-access-codes")


def test_browser__editor__a_code_only_type_from_the_add_form(live_site, site_service, page,
                                                             screenshot):
    name = f"Summit {uuid.uuid4().hex[:6]}"
    sign_in(live_site, page)
    page.goto(live_site.url + "/admin/booking/dynamoevent/add/")
    page.locator("#id_name").fill(name)
    page.get_by_label("Time zone").fill("Tokyo")
    page.get_by_label("Start").fill("2031-06-01T09:00")
    page.get_by_label("Capacity").fill("50")
    page.get_by_text("Ticket types, quotas and seats per order").click()
    page.get_by_label("Ticket type 1 name").fill("Conference")
    page.get_by_label("Ticket type 2 name").fill("Speaker")
    page.get_by_label("Ticket type 2 only with an access code").check()
    page.get_by_label("Seats per order").fill("2")
    screenshot(page, "walk-admin-3-editor-code-only")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist")).to_contain_text(f"The event “{name}” was added.")
    (event,) = [e for e in site_service.iter_events() if e.name == name]
    assert event.code_only_types == ("speaker",)


def test_browser__questions__button_clear_of_the_intro_and_more_blank_rows(
        live_site, site_service, page, screenshot):
    event = devconf(site_service)
    sign_in(live_site, page)
    page.goto(f"{live_site.url}/admin/booking/dynamoevent/{event.id}/questions/")
    expect(page.get_by_text("New question")).to_have_count(3)
    button = page.locator(".object-tools").bounding_box()
    intro = page.locator(".questions-intro").bounding_box()
    assert button["y"] + button["height"] <= intro["y"] + 1, "the button overlaps the intro"
    page.locator("#id_form-0-id").fill("company")
    page.locator("#id_form-0-label").fill("Company")
    page.get_by_role("button", name="More blank rows").click()
    expect(page.get_by_text("New question")).to_have_count(6)
    expect(page.locator("#id_form-0-label")).to_have_value("Company")
    screenshot(page, "walk-admin-4-questions")
    page.get_by_role("button", name="Save questions").click()
    expect(page.locator(".messagelist")).to_contain_text("Saved 1 question.")
    assert [q.id for q in site_service.get_event(event.id).questions] == ["company"]
