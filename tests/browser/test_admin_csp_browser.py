"""The admin's pages that show a secret once and list webhook endpoints, in a real browser
under the site's Content-Security-Policy: the browser reports no blocked inline style
(their look comes from the admin's stylesheet), at 1280 and 390 px."""
import uuid

from playwright.sync_api import expect

from tests.browser import test_api_docs_browser
from tests.browser.test_editor_browser import sign_in

watched_page = test_api_docs_browser.watched_page  # the fixture: CSP reports recorded

# A public address given by number: registering it resolves nothing, and the endpoint
# listens to one event nobody books and is removed at the end, so nothing is ever sent.
HOOK = "https://93.184.216.34/hooks/booking"


def test_browser__secret_and_webhook_list__no_csp_violation(live_site, site_service,
                                                             watched_page, screenshot):
    page = watched_page
    sign_in(live_site, page)
    event = site_service.create_event(name=f"Quiet {uuid.uuid4().hex[:6]}", capacity=5,
                                      organizer="acme")
    page.goto(live_site.url + "/admin/booking_api/webhookendpointentry/add/")
    page.get_by_label("URL").fill(HOOK)
    page.get_by_label("registration.created").check()
    # By its value: with several organizers' events in the site, its label also names
    # "(acme)".
    page.locator("#id_event_id").select_option(value=event.id)
    page.get_by_role("button", name="Save").click()
    secret = page.locator("#one-time-secret")
    expect(secret).to_be_visible()
    assert secret.evaluate("e => getComputedStyle(e).userSelect") == "all"  # the stylesheet's
    screenshot(page, "admin-csp-1-webhook-secret")

    page.goto(live_site.url + "/admin/booking_api/webhookendpointentry/")
    row = page.locator("#result_list tr", has_text=HOOK)
    expect(row.get_by_role("button", name="Send test ping")).to_be_visible()
    assert row.locator("form").first.evaluate("e => getComputedStyle(e).display") == "inline"
    screenshot(page, "admin-csp-2-webhook-list")
    assert page.violations == [] and page.outside == []

    page.on("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Remove").click()
    expect(page.locator("#result_list tr", has_text=HOOK)).to_have_count(0)
