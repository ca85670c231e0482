"""The API's documentation pages (Swagger UI at /api/v1/docs/, Redoc at /api/v1/redoc/) in
a real browser, served with the site's Content-Security-Policy: each draws the schema
from the sidecar's own files, nothing is fetched from elsewhere, and the browser reports
no blocked script or style."""
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect


@pytest.fixture
def watched_page(page):
    """The page, with CSP violations and failed requests recorded; requests that leave
    127.0.0.1 refused and recorded."""
    page.violations, page.outside = [], []
    page.on("console", lambda message: page.violations.append(message.text)
            if "Content Security Policy" in message.text else None)
    page.on("pageerror", lambda error: page.violations.append(str(error)))

    def only_local(route):
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            return route.continue_()
        page.outside.append(route.request.url)
        return route.abort()
    page.route("**/*", only_local)
    return page


def test_swagger_ui__draws_the_schema_under_the_csp(live_site, watched_page, screenshot):
    page = watched_page
    response = page.goto(live_site.url + "/api/v1/docs/")
    policy = response.headers["content-security-policy"]
    assert "'nonce-" in policy and "unsafe-inline" not in policy
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Event booking API")
    expect(page.locator(".opblock-summary-path").first).to_be_visible()
    assert page.locator(".opblock-summary-path", has_text="/api/v1/events/").count() >= 1
    # Swagger UI's own stylesheet applies (not just unstyled markup).
    assert page.locator(".swagger-ui .opblock").first.evaluate(
        "e => getComputedStyle(e).borderRadius") != "0px"
    screenshot(page, "api-docs-swagger")
    assert page.violations == [] and page.outside == []


def test_redoc__draws_the_schema_under_the_csp(live_site, watched_page, screenshot):
    page = watched_page
    response = page.goto(live_site.url + "/api/v1/redoc/")
    assert "unsafe-inline" not in response.headers["content-security-policy"]
    expect(page.get_by_role("heading", name="Event booking API")).to_be_visible()
    expect(page.get_by_text("/api/v1/events/", exact=False).first).to_be_attached()
    assert "Something went wrong" not in page.content()
    # Redoc's generated styles apply: the menu is a styled side panel, not bare markup.
    assert page.locator(".menu-content").evaluate(
        "e => getComputedStyle(e).position") in ("sticky", "fixed")
    screenshot(page, "api-docs-redoc")
    # Redoc's menu always asks for a "Powered by" logo from its CDN (it hides it when it
    # fails): the policy refuses it before any request, as it should. Nothing else.
    logo = "Loading the image 'https://cdn.redoc.ly/redoc/logo-mini.svg'"
    assert [v for v in page.violations if not v.startswith(logo)] == []
    assert page.outside == []
