"""An organizer uses the events admin in a real (headless Chromium) browser."""
import uuid

from playwright.sync_api import expect


def test_browser__admin__login_add_edit_capacity_see_registrations(
        live_site, site_service, page, screenshot):
    username, password = f"organizer{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    live_site.manage("createsuperuser", "--noinput", "--username", username,
                     "--email", "organizer@example.com",
                     env={"DJANGO_SUPERUSER_PASSWORD": password})
    name = f"Admin night {uuid.uuid4().hex[:6]}"

    page.goto(live_site.url + "/admin/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name="Events", exact=True).first.click()  # not "Later events"
    screenshot(page, "admin-1-event-list")

    page.get_by_role("link", name="Add event").click()
    page.locator("#id_name").fill(name)
    page.get_by_label("Time zone").fill("Europe/Berlin")
    page.get_by_label("Start").fill("2031-06-01T19:00")
    page.get_by_label("End").fill("2031-06-01T22:00")
    page.get_by_label("Venue").fill("Town hall, Berlin")
    page.get_by_label("Capacity").fill("3")
    page.get_by_label("Hundreds at once").check()
    screenshot(page, "admin-2-add-form")
    page.get_by_role("button", name="Save", exact=True).click()
    # expect() waits for the page after the redirect; page.content() could read it half-loaded.
    expect(page.locator(".messagelist")).to_contain_text(f"The event “{name}” was added.")
    row = page.locator("#result_list tr", has_text=name)
    assert "Hundreds at once" in row.inner_text() and "Version" not in page.content()
    assert "Sun 1 Jun 2031, 19:00–22:00 CEST (Europe/Berlin)" in row.inner_text()
    screenshot(page, "admin-3-added")

    (event,) = [e for e in site_service.iter_events() if e.name == name]
    site_service.book(event.id, name="Grace Hopper", email="grace@example.com")
    row.get_by_role("link", name=name).click()
    page.get_by_label("Capacity").fill("0")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".field-capacity")).to_contain_text("1 person is registered")
    screenshot(page, "admin-4-capacity-refused")
    page.get_by_label("Capacity").fill("5")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist")).to_contain_text("was changed")
    cells = page.locator("#result_list tr", has_text=name).locator("td").all_inner_texts()
    assert cells[1:4] == ["5", "1", "4"]  # capacity, confirmed, remaining
    screenshot(page, "admin-5-capacity-changed")

    page.locator("#result_list tr", has_text=name).get_by_role("link", name="Registrations").click()
    expect(page.locator("#result_list").get_by_text("grace@example.com")).to_be_visible()
    screenshot(page, "admin-6-registrations")
    assert site_service.availability(event.id).capacity == 5

    page.locator("#result_list").get_by_label("Select grace@example.com").check()
    page.locator("select[name=action]").select_option("cancel_selected")
    page.get_by_role("button", name="Go").click()
    expect(page.get_by_role("button", name="Yes, cancel and e-mail them")).to_be_visible()
    screenshot(page, "admin-7-cancel-confirmation")
    page.get_by_role("button", name="Yes, cancel and e-mail them").click()
    expect(page.locator(".messagelist")).to_contain_text("Cancelled 1 registration")
    assert live_site.mail_containing("grace@example.com")
    page.get_by_role("link", name="Registered at").click()
    screenshot(page, "admin-8-registrations-by-time")

    page.goto(live_site.url + f"/admin/booking/dynamoevent/{event.id}/delete/")
    screenshot(page, "admin-9-delete-confirmation")
    page.goto(live_site.url + "/admin/booking/dynamoevent/?show=upcoming&q=ADMIN")
    expect(page.locator("#result_list")).to_contain_text(name)
    screenshot(page, "admin-10-search-filtered")
