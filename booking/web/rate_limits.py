"""Abuse limits shared by every process and host: at most N requests per client (address,
e-mail or admin user name) per time window, counted in DynamoDB (booking/dynamo/rate_limits.py).

Each limit has a name (``SIGNUP``, ``SIGNUP_EMAIL``, ``CANCEL``, ``ADMIN_LOGIN``) whose rate
the wiring gives (``web_settings().rates``). A rate is written ``10/10m`` (10 per 10
minutes; units s, m, h, d, and ``/m`` means one minute) or ``off``. Windows are fixed (a
new one starts every period), so a client can at most double its rate across a window
boundary. If the store cannot be reached the request is let through and the failure
logged: the limiter must not take the site down.
"""
import hashlib
import hmac
import ipaddress
import logging
import re
import time
from dataclasses import dataclass

from django.core import signing

from booking import wiring
from booking.dynamo.access import StoreError
from booking.errors import BookingError, RateLimited

logger = logging.getLogger(__name__)
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smhd])\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# Signups and cancellations per client address, signups per e-mail address, failed admin
# logins per address and per user name.
SIGNUP, SIGNUP_EMAIL, CANCEL, ADMIN_LOGIN = "signup", "signup_email", "cancel", "admin_login"
# JSON API requests per organizer token (booking/api/base.py).
API_TOKEN = "api_token"
# Each limit's counters keep the label they were first stored under, so a deploy never
# resets counts in progress.
STORED_AS = {SIGNUP: "BOOKING_SIGNUP_RATE", SIGNUP_EMAIL: "BOOKING_SIGNUP_EMAIL_RATE",
             CANCEL: "BOOKING_CANCEL_RATE", ADMIN_LOGIN: "ADMIN_LOGIN_RATE"}


@dataclass(frozen=True)
class Rate:
    limit: int
    seconds: int


def parse_rate(text: str) -> Rate | None:
    """``"10/10m"`` -> Rate(10, 600); ``"off"`` -> None; ValueError for anything else."""
    if text.strip().lower() in ("off", "none", "0", ""):
        return None
    match = _RATE.match(text)
    if not match or int(match[1]) < 1:
        raise ValueError(f"{text!r} is not a rate like '10/10m' or 'off'")
    count, span, unit = int(match[1]), int(match[2] or 1), match[3]
    return Rate(count, span * _UNIT_SECONDS[unit])


def client_address(request) -> str:
    """The client's address: the peer, or the entry the TRUSTED_PROXY_COUNT-th proxy from
    the right added to X-Forwarded-For. IPv6 clients are counted per /64 network."""
    address = request.META.get("REMOTE_ADDR", "")
    proxies = wiring.web_settings().trusted_proxy_count
    if proxies:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        if len(forwarded) >= proxies and forwarded[-proxies]:
            address = forwarded[-proxies]
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:64] or "unknown"
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def _rate(limit: str) -> Rate | None:
    return parse_rate(wiring.web_settings().rates[limit])


def _bucket(limit: str, client: str) -> str:
    # Keyed hash: the table never holds addresses, e-mails or user names in the clear.
    label = STORED_AS.get(limit, limit)
    digest = hmac.new(signing.Signer().key.encode(), f"{label}:{client}".encode(),
                      hashlib.sha256).hexdigest()[:32]
    return f"{label}:{digest}"


def _window(rate: Rate, now: float) -> tuple[int, int]:
    """(window start, seconds until it ends)."""
    start = int(now // rate.seconds) * rate.seconds
    return start, max(1, start + rate.seconds - int(now))


def check(limit: str, client: str, *, message: str | None = None, now=None) -> None:
    """Count one request of ``client`` against the named limit; raise ``RateLimited`` once
    it is over."""
    rate = _rate(limit)
    if rate is None:
        return
    start, retry_after = _window(rate, time.time() if now is None else now)
    try:
        count = wiring.rate_counters().hit(_bucket(limit, client), window_start=start,
                                           window_seconds=rate.seconds)
    except (BookingError, StoreError):
        logger.warning("Rate limit %s not counted: the store is unavailable", limit,
                       exc_info=True)
        return
    if count > rate.limit:
        raise RateLimited(message, retry_after=retry_after)


def count_failure(limit: str, client: str, *, now=None) -> None:
    """Count one failed attempt (e.g. a wrong password) without refusing anything."""
    try:
        check(limit, client, now=now)
    except RateLimited:
        pass


def ensure_not_blocked(limit: str, client: str, *, message: str | None = None,
                       now=None) -> None:
    """Raise ``RateLimited`` if ``client`` has used up its attempts (counting nothing)."""
    rate = _rate(limit)
    if rate is None:
        return
    start, retry_after = _window(rate, time.time() if now is None else now)
    try:
        used = wiring.rate_counters().hits(_bucket(limit, client), window_start=start)
    except (BookingError, StoreError):
        logger.warning("Rate limit %s not checked: the store is unavailable", limit,
                       exc_info=True)
        return
    if used >= rate.limit:
        raise RateLimited(message, retry_after=retry_after)
