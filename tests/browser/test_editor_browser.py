"""A first organizer creates an event with ticket types, quotas and a zone typed as a city,
and changes it afterwards, in a real (headless Chromium) browser at 1280 and 390 px."""
import uuid

from playwright.sync_api import expect


def sign_in(live_site, page) -> None:
    username, password = f"organizer{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    live_site.manage("createsuperuser", "--noinput", "--username", username,
                     "--email", "organizer@example.com",
                     env={"DJANGO_SUPERUSER_PASSWORD": password})
    page.goto(live_site.url + "/admin/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def test_browser__editor__types_quotas_and_city_zone__every_error_at_once_then_saved(
        live_site, site_service, page, screenshot):
    sign_in(live_site, page)
    name = f"DevConf {uuid.uuid4().hex[:6]}"
    page.goto(live_site.url + "/admin/booking/dynamoevent/add/")
    expect(page.get_by_text("How many people do you expect in the first minute?")).to_be_visible()
    page.get_by_label("Time zone").fill("Berlin")
    page.get_by_label("Start").fill("2031-06-01T09:00")
    page.get_by_label("End").fill("2031-06-01T08:00")  # before the start
    page.get_by_label("Capacity").fill("120")
    page.get_by_text("Ticket types, quotas and seats per order").click()
    page.get_by_label("Quota 1 name").fill("Workshop A")
    page.get_by_label("Quota 1 seats").fill("30")
    page.get_by_label("Ticket type 1 name").fill("Conference")
    page.get_by_label("Ticket type 1 description").fill("Both days of talks.")
    page.get_by_label("Ticket type 2 name").fill("Workshop A")
    page.get_by_label("Ticket type 2 also counts against").fill("Workshop C")
    page.get_by_label("Seats per order").fill("4")
    screenshot(page, "editor-1-add-form")
    page.set_viewport_size({"width": 390, "height": 800})
    widest = page.evaluate("document.documentElement.scrollWidth")
    page.set_viewport_size({"width": 1280, "height": 800})
    assert widest <= 390, "the add form scrolls sideways on a phone"
    page.get_by_role("button", name="Save", exact=True).click()
    summary = page.locator("#error-summary")
    expect(summary).to_contain_text("Name")  # every error at once: name, end, type's quota
    expect(summary).to_contain_text("End")
    expect(page.locator(".orders")).to_contain_text("Workshop C")
    screenshot(page, "editor-2-every-error-at-once")
    assert not [e for e in site_service.iter_events() if e.name == name]

    page.locator("#id_name").fill(name)
    page.get_by_label("End").fill("2031-06-01T18:00")
    page.get_by_label("Ticket type 2 also counts against").fill("Workshop A")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist")).to_contain_text(f"The event “{name}” was added.")
    (event,) = [e for e in site_service.iter_events() if e.name == name]
    assert (event.time_zone, event.capacity, event.quotas) == ("Europe/Berlin", 120,
                                                               {"workshop-a": 30})
    assert event.ticket_types == {"conference": (), "workshop-a": ("workshop-a",)}
    assert event.starts_at.isoformat() == "2031-06-01T07:00:00+00:00"  # 09:00 CEST

    page.goto(live_site.url + f"/admin/booking/dynamoevent/{event.id}/change/")
    expect(page.locator("#type-rows")).to_contain_text(
        "A Workshop A seat takes 1 of the 120 seats and 1 of Workshop A's 30.")
    expect(page.locator(".orders")).to_contain_text("keeps its key and the quotas")
    expect(page.get_by_label("Start")).to_have_value("2031-06-01T09:00")
    page.get_by_label("Quota “Workshop A”").fill("200")  # more than the event's 120
    page.locator("#id_max_per_order").fill("6")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#warnings")).to_contain_text("more than the event's 120")
    screenshot(page, "editor-3-change-warning")
    page.get_by_label("Quota “Workshop A”").fill("40")
    page.get_by_label("Conference: label").fill("Main days")
    page.get_by_label("Conference: description").fill("Both days of talks and the party.")
    screenshot(page, "editor-4-change-types")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist")).to_contain_text("was changed")
    changed = site_service.get_event(event.id)
    assert (changed.quotas, changed.max_per_order) == ({"workshop-a": 40}, 6)
    assert changed.ticket_types == event.ticket_types  # the keys and quotas as they were
    assert changed.label("conference") == "Main days"
    assert changed.ticket_descriptions["conference"] == "Both days of talks and the party."

    page.goto(live_site.url + "/admin/booking/dynamoevent/add/")
    first_zone = page.locator("#time-zones option").first
    assert first_zone.get_attribute("value") == "Europe/Berlin"  # the last choice first
