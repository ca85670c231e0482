"""The admin login, throttled by the shared rate limiter (booking/entry/limits.py).

Login attempts are counted per client address and per user name (ADMIN_LOGIN_RATE). Each
attempt takes its place in both counts atomically *before* the password is checked, so
any number of parallel attempts gets at most the limit checked; a right password gives
its places back. Once either count is used up, every login attempt for it answers 429,
the right password included, until the period has passed. Counting happens in DynamoDB,
so it holds across processes and hosts.
"""
from django.contrib import admin

from booking.errors import RateLimited
from booking.entry import limits as rate_limits
from booking.entry.error_pages import render_error

LOGIN_LIMITED = ("Too many failed logins. Please wait before trying again; the wait ends "
                 "on its own.")
# Reserves an attempt before the password check (a collaborator, so a test can put a
# careless check-then-count variant in its place and see the race test fail).
attempts = rate_limits.attempt


def _clients(request, username) -> list[str]:
    name = str(username or "")[:150].casefold()
    return [f"address:{rate_limits.client_address(request)}", f"user:{name}"]


def throttled_login(request, extra_context=None):
    """The admin's own login view, refused with 429 while attempts are used up."""
    if request.method != "POST":
        return admin.site.login(request, extra_context)
    clients = _clients(request, request.POST.get("username"))
    try:
        with attempts(rate_limits.ADMIN_LOGIN, clients, message=LOGIN_LIMITED) as succeeded:
            response = admin.site.login(request, extra_context)
            if response.status_code == 302 and request.user.is_authenticated:
                succeeded()  # a right password is not a failed attempt
            return response
    except RateLimited as error:
        return render_error(request, error, title="Too many failed logins")
