"""A signup form with the organizer's questions in a real (headless Chromium) browser,
keyboard and labels only: the error summary links each refused answer to its field, the
booking's page shows the answers and its link edits them, at 1280 and 390 px
(docs/orders.md#questions)."""
import re
import uuid

from playwright.sync_api import expect

QUESTIONS = [
    {"id": "company", "label": "Company", "kind": "text", "required": True},
    {"id": "shirt", "label": "T-shirt size", "kind": "choice", "choices": ["S", "M", "L"]},
    {"id": "diet", "label": "Dietary needs", "kind": "multiple_choice",
     "choices": ["Vegetarian", "Vegan", "No nuts"], "help_text": "Tick all that apply."},
    {"id": "arrival", "label": "Arrival day", "kind": "date"},
    {"id": "phone", "label": "Phone", "kind": "phone"},
    {"id": "bio", "label": "Anything we should know", "kind": "long_text"},
    {"id": "photos", "label": "I agree to be photographed", "kind": "boolean",
     "required": True},
    {"id": "name_on_pass", "label": "Name on the pass", "kind": "text", "per_pass": True,
     "required": True},
]


def test_browser__questions_asked_refused_answered_shown_and_edited(
        live_site, site_service, page, screenshot):
    event = site_service.create_event(name=f"Asked {uuid.uuid4().hex[:6]}", capacity=20,
                                      strategy="lock_table",
                                      starts_at="2031-06-01T09:00:00+00:00")
    site_service.set_questions(event.id, QUESTIONS, expected_version=0)
    email = f"ada{uuid.uuid4().hex[:6]}@example.com"

    page.goto(live_site.url + f"/events/{event.id}/")
    page.get_by_label("Your name").fill("Ada Lovelace")
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Phone (optional)").fill("call me")
    screenshot(page, "questions-1-form")
    page.get_by_role("button", name="Book my seat").click()

    summary = page.get_by_role("alert")
    expect(summary).to_contain_text("Company: This question is required.")
    expect(summary).to_contain_text("I agree to be photographed: Please tick this to continue.")
    expect(summary).to_contain_text("Phone (optional): Enter a phone number")
    screenshot(page, "questions-2-refused")
    summary.get_by_role("link", name=re.compile("^Company")).click()
    expect(page.get_by_label("Company")).to_be_focused()
    assert site_service.find_registration(event.id, email=email) is None

    page.get_by_label("Company").fill("Analytical Engines Ltd")
    page.get_by_label("M", exact=True).check()
    page.get_by_label("Vegan").check()
    page.get_by_label("Phone (optional)").fill("+44 20 7946 0958")
    page.get_by_label("I agree to be photographed").check()
    page.get_by_label("Name on the pass").fill("Ada L.")
    page.get_by_label("Name on the pass").press("Enter")

    page.wait_for_url(re.compile(r"/booked/"))
    expect(page.get_by_role("heading", name="Your answers")).to_be_visible()
    assert "Analytical Engines Ltd" in page.content() and "Ada L." in page.content()
    screenshot(page, "questions-3-booked")

    page.get_by_role("link", name="Change my answers").click()
    expect(page.get_by_label("Company")).to_have_value("Analytical Engines Ltd")
    page.get_by_label("Company").fill("Difference Engines Ltd")
    screenshot(page, "questions-4-edit")
    page.get_by_role("button", name="Save my answers").click()
    expect(page.get_by_role("status")).to_contain_text("Your answers are saved.")
    registration = site_service.find_registration(event.id, email=email)
    assert site_service.answers(registration).answers["company"] == "Difference Engines Ltd"
