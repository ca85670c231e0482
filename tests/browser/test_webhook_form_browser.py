"""The admin's "Add webhook endpoint" form with two organizers (the fourth round, point
12): the events offered are the chosen organizer's, a link switches to the other's; the
URL's help names WEBHOOK_ALLOWED_HOSTS. At 1280 and 390 px."""
import uuid

from playwright.sync_api import expect


def test_browser__webhook_form__two_organizers__events_of_the_chosen_one(
        live_site, site_service, page, screenshot):
    username, password = f"hooks{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    live_site.manage("createsuperuser", "--noinput", "--username", username,
                     "--email", "hooks@example.com", env={"DJANGO_SUPERUSER_PASSWORD": password})
    live_site.manage("create_organizer", "zeta", "--name", "Zeta", check=False)
    ours = site_service.create_event(name=f"Acme gala {uuid.uuid4().hex[:4]}", capacity=5,
                                     organizer="acme", starts_at="2031-06-01T19:00:00+00:00")
    zetas = site_service.create_event(name=f"Zeta party {uuid.uuid4().hex[:4]}", capacity=5,
                                      organizer="zeta", starts_at="2031-06-02T19:00:00+00:00")

    page.goto(live_site.url + "/admin/login/?next=/admin/booking_api/webhookendpointentry/add/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()

    event_choice = page.get_by_label("Event")
    expect(page.get_by_label("Organizer")).to_have_value("acme")
    expect(event_choice.locator("option", has_text=ours.name)).to_have_count(1)
    expect(event_choice.locator("option", has_text=zetas.name)).to_have_count(0)
    expect(page.locator("#organizer-events")).to_contain_text("Zeta")
    expect(page.get_by_text("WEBHOOK_ALLOWED_HOSTS")).to_be_visible()
    screenshot(page, "webhook-form-1-first-organizer")

    page.locator("#organizer-events").get_by_role("link", name="Zeta").click()
    expect(page.get_by_label("Organizer")).to_have_value("zeta")
    expect(event_choice.locator("option", has_text=zetas.name)).to_have_count(1)
    expect(event_choice.locator("option", has_text=ours.name)).to_have_count(0)
    screenshot(page, "webhook-form-2-other-organizer")
