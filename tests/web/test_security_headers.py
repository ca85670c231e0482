"""Response headers and links: CSP with a per-response nonce, Permissions-Policy, no-store
on pages with personal data, absolute links from SITE_URL, opaque registration page_tokens."""
import base64
import re
from pathlib import Path

import pytest
from django.core import mail, signing
from django.urls import reverse

from booking import links as page_tokens
from booking.errors import OutcomeUnknown
from tests.web.test_signup import form_page, submit


@pytest.fixture
def event(service):
    return service.create_event(name="Django meetup", capacity=5, strategy="lock_table")


def cancel_link(message) -> str:
    return re.search(r"https?://[^/\s]+(/cancel/\S+/)", message.body).group(1)


def test_pages__csp_without_unsafe_inline_and_permissions_policy(client, admin_client, event):
    for response in (client.get("/"), client.get(f"/events/{event.id}/"),
                     admin_client.get("/admin/")):
        csp = response["Content-Security-Policy"]
        assert re.search(r"script-src 'self' 'nonce-[\w-]{20,}';", csp)
        assert "unsafe-inline" not in csp and "object-src 'none'" in csp
        assert "frame-ancestors 'none'" in csp
        assert "camera=()" in response["Permissions-Policy"]


@pytest.mark.parametrize("path", ["/api/v1/docs/", "/api/v1/redoc/"])
def test_api_docs__inline_script_and_styles_carry_the_nonce_no_unsafe_keyword(client, path):
    response = client.get(path)
    csp = response["Content-Security-Policy"]
    nonce = re.search(r"script-src 'self' 'nonce-([\w-]{20,})';", csp)[1]
    assert f"style-src 'self' 'nonce-{nonce}'" in csp
    assert "unsafe-" not in csp  # no 'unsafe-inline', 'unsafe-eval' or 'unsafe-hashes'
    html = response.content.decode()
    scripts = re.findall(r"<script([^>]*)>", html)
    inline = [attrs for attrs in scripts if "src=" not in attrs]
    assert inline and all(f'nonce="{nonce}"' in attrs for attrs in inline)
    assert "<style" not in html and "style=" not in html  # the page's own CSS is a file
    # Everything the page loads is this site's own (drf-spectacular's sidecar files): no
    # font service, no CDN. Links are read from the attributes, not searched for "cdn" in
    # the page, whose random CSRF token may spell it.
    loaded = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert loaded and all(url.startswith("/") and not url.startswith("//") for url in loaded)
    assert not re.search(r"https?://|fonts\.googleapis\.com", html)


def test_csp__nonce_new_for_every_response(client, event):
    nonces = {re.search(r"'nonce-([^']+)'", client.get("/")["Content-Security-Policy"])[1]
              for _ in range(3)}

    assert len(nonces) == 3


def test_in_progress_page__inline_script_carries_the_responses_nonce(client, service, event,
                                                                      monkeypatch):
    token = form_page(client, event.id)[1]

    def running(*args, **kwargs):
        raise OutcomeUnknown()
    monkeypatch.setattr(service, "register", running)
    response = submit(client, event.id, token=token)

    html = response.content.decode()
    nonce = re.search(r"'nonce-([^']+)'", response["Content-Security-Policy"])[1]
    scripts = re.findall(r"<script([^>]*)>", html)
    assert response.status_code == 202 and scripts
    assert all(f'nonce="{nonce}"' in attributes or "src=" in attributes
               for attributes in scripts)


def test_confirmation_and_cancel_pages__no_store(client, service, event):
    booked = client.get(submit(client, event.id)["Location"])
    link = cancel_link(mail.outbox[0])
    confirm = client.get(link)
    done = client.get(client.post(link)["Location"])

    for response in (booked, confirm, done):
        assert response.status_code == 200
        assert "no-store" in response["Cache-Control"]


def test_links__from_site_url__never_the_host_header(client, service, event, settings):
    settings.SITE_URL = "https://events.example.org"
    settings.ALLOWED_HOSTS = ["testserver"]

    client.defaults["HTTP_HOST"] = "testserver:6666"  # any port passes ALLOWED_HOSTS
    response = submit(client, event.id)
    page = client.get(response["Location"]).content.decode()

    assert "https://events.example.org/cancel/" in mail.outbox[0].body
    assert "6666" not in mail.outbox[0].body
    assert re.search(r'href="https://events\.example\.org/cancel/[^"]+/"', page)


def test_links__carry_no_readable_email(client, service, event):
    response = submit(client, event.id, email="ada.lovelace@example.com")
    tokens = [response["Location"].split("/booked/")[1].strip("/"),
              cancel_link(mail.outbox[0]).split("/cancel/")[1].strip("/")]

    for token in tokens:
        decoded = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        assert b"ada" not in decoded and "ada" not in token
        assert ":" not in token


def test_links__earlier_signed_link__still_cancels(client, service, event):
    registration = service.book(event.id, name="Ada", email="ada@example.com")
    legacy = signing.Signer(salt=page_tokens.CANCEL_SALT).sign_object(
        {"e": event.id, "m": "ada@example.com", "r": registration.registration_id})

    response = client.post(reverse("booking:cancel", args=[legacy]))

    assert response.status_code == 303
    assert service.registrations(event.id) == []


def test_links__after_key_rotation__old_links_work_via_fallbacks(client, service, event,
                                                                 settings):
    submit(client, event.id)
    link = cancel_link(mail.outbox[0])
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "n" * 25 + "ew-rotated-key-with-enough-variety-0123456789"

    assert "Cancel" in client.get(link).content.decode()
    assert client.post(link).status_code == 303
    assert service.registrations(event.id) == []


# An inline style="..." attribute or on...="..." handler: the CSP (no 'unsafe-inline')
# makes the browser ignore it, so a page would silently lose that look or behaviour.
INLINE = re.compile(r"""<[a-zA-Z][^>]*\s(style|on[a-z]+)\s*=\s*["']""")


def test_templates__no_inline_style_or_handler_attribute_the_csp_would_block():
    """Every page template (e-mails are not served under the CSP, and need inline styles)."""
    from django.conf import settings

    found = []
    for folder in settings.TEMPLATES[0]["DIRS"]:
        for path in sorted(Path(folder).rglob("*.html")):
            if "email" in path.relative_to(folder).parts:
                continue
            text = path.read_text()  # a tag may span lines
            found += [f"{path.relative_to(folder)}:{text.count(chr(10), 0, m.start()) + 1}: "
                      f"{m.group(0)}" for m in INLINE.finditer(text)]
    assert found == []
    assert INLINE.search('<p><code id="s" style="font-size: 1.2em">')  # what it looks for
