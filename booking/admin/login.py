"""The admin login, throttled by the shared rate limiter (booking/web/rate_limits.py).

Failed logins are counted per client address and per user name (ADMIN_LOGIN_RATE); once
either is used up, every login attempt for it answers 429, the right password included,
until the period has passed. Counting happens in DynamoDB, so it holds across processes
and hosts.
"""
from django.contrib import admin
from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver

from booking.errors import RateLimited
from booking.web import rate_limits
from booking.web.errors import render_error

LOGIN_LIMITED = ("Too many failed logins. Please wait before trying again; the wait ends "
                 "on its own.")


def _clients(request, username) -> list[str]:
    name = str(username or "")[:150].casefold()
    return [f"address:{rate_limits.client_address(request)}", f"user:{name}"]


def throttled_login(request, extra_context=None):
    """The admin's own login view, refused with 429 while attempts are used up."""
    if request.method == "POST":
        try:
            for client in _clients(request, request.POST.get("username")):
                rate_limits.ensure_not_blocked(rate_limits.ADMIN_LOGIN, client,
                                               message=LOGIN_LIMITED)
        except RateLimited as error:
            return render_error(request, error, title="Too many failed logins")
    return admin.site.login(request, extra_context)


@receiver(user_login_failed)
def count_failed_login(sender, credentials, request=None, **kwargs):
    if request is None:  # not a login through a web request
        return
    for client in _clients(request, credentials.get("username")):
        rate_limits.count_failure(rate_limits.ADMIN_LOGIN, client)
