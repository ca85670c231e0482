"""Abuse limits shared by every process and host: at most N requests per client (address,
e-mail or admin user name) per time window, counted in DynamoDB (booking/dynamo/rate_limits.py).

Every limit decides and counts in one atomic write, never a read and a later write
(``check``, ``check_once``, ``attempt``). A limit that counts something about a person
(their e-mail address) counts only what that person's own network sends, once per form
submission, so nobody else can spend it (docs/security.md).

Each limit has a name (``SIGNUP``, ``SIGNUP_EMAIL``, ``CANCEL``, ``ADMIN_LOGIN``, ...) whose rate
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
from contextlib import contextmanager
from dataclasses import dataclass

from django.core import signing

from booking import validation, wiring
from booking.dynamo.access import StoreError
from booking.errors import BookingError, InvalidAccessCode, RateLimited
from booking.organizers import limit_hits
from booking.organizers import rights as organizer_rights

logger = logging.getLogger(__name__)
# What the pages and the API say when a limit refuses (the same words on both).
SIGNUPS_LIMITED = ("Too many signups from your network. Please wait a few minutes and try "
                   "again.")
EMAIL_LIMITED = ("Too many signups for this e-mail address. Please wait a while and try "
                 "again.")
CODES_LIMITED = ("Too many wrong access codes from your network. Please wait a few minutes "
                 "and try again.")
OFFER_LIMITED = "Too many attempts from your network. Please wait a few minutes and try again."
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smhd])\s*$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# Signups and cancellations per client address, signups per e-mail address, failed admin
# logins per address and per user name.
SIGNUP, SIGNUP_EMAIL, CANCEL, ADMIN_LOGIN = "signup", "signup_email", "cancel", "admin_login"
# JSON API requests per organizer token (booking/api/base.py).
API_TOKEN = "api_token"
# "Resend my confirmation" requests per client address; confirmations resent per
# registration (booking/web/views.py).
RESEND, RESEND_MAIL = "resend", "resend_mail"
# Bookings with a wrong access code per client address (guessing codes is an attack):
# ``code_attempt``.
ACCESS_CODE = "access_code"
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


def _key() -> bytes:
    """The site's signing key as bytes (the keyed hashes' key)."""
    key = signing.Signer().key
    return key if isinstance(key, bytes) else key.encode()


def _bucket(limit: str, client: str) -> str:
    # Keyed hash: the table never holds addresses, e-mails or user names in the clear.
    label = STORED_AS.get(limit, limit)
    digest = hmac.new(_key(), f"{label}:{client}".encode(),
                      hashlib.sha256).hexdigest()[:32]
    return f"{label}:{digest}"


def _window(rate: Rate, now: float) -> tuple[int, int]:
    """(window start, seconds until it ends)."""
    start = int(now // rate.seconds) * rate.seconds
    return start, max(1, start + rate.seconds - int(now))


def _counted(limit: str, count) -> bool:
    """Run one counter update; a store that cannot answer lets the request through."""
    try:
        return count()
    except (BookingError, StoreError):
        logger.warning("Rate limit %s not counted: the store is unavailable", limit,
                       exc_info=True)
        return True


def signed_in_staff(request) -> bool:
    """Whether someone who may use the admin is signed in (no read: the session's user)."""
    return organizer_rights.may_use(getattr(request, "user", None))


def organizer_staff_on(request, event) -> bool:
    """Whether the request comes from organizer staff signed in with a role on ``event``
    (the desk at the venue, an organizer booking people in): never limited there."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:  # a visitor: nothing more to ask
        return False
    return (event is not None and organizer_rights.may_use(user)
            and organizer_rights.for_user(user).knows_event(event))


def _refused(limit: str, client: str, message, retry_after: int, event=None) -> RateLimited:
    """The refusal to raise, recorded for the admin's "Limit hits" page first (``event``:
    the event, None, or a callable that reads it, called only now)."""
    event = event() if callable(event) else event
    limit_hits.record(limit=limit, network=_digest(f"network|{client}", 12), event=event)
    return RateLimited(message, retry_after=retry_after)


def check(limit: str, client: str, *, message: str | None = None, now=None,
          event=None) -> None:
    """Count one request of ``client`` against the named limit; raise ``RateLimited`` once
    it is over (recorded as a hit, on ``event`` when the request is about one)."""
    rate = _rate(limit)
    if rate is None:
        return
    start, retry_after = _window(rate, time.time() if now is None else now)
    bucket = _bucket(limit, client)
    if not _counted(limit, lambda: wiring.rate_counters().hit(
            bucket, window_start=start, window_seconds=rate.seconds) <= rate.limit):
        raise _refused(limit, client, message, retry_after, event)


def check_once(limit: str, client: str, submission: str, *, message: str | None = None,
               now=None, event=None) -> None:
    """As ``check``, but the submission ``submission`` (a form token's request id, an
    Idempotency-Key) counts only the first time: double clicks, resubmissions and the
    202 page's re-checks pass uncounted, in the same one write."""
    rate = _rate(limit)
    if rate is None:
        return
    start, retry_after = _window(rate, time.time() if now is None else now)
    bucket = _bucket(limit, client)
    if not _counted(limit, lambda: wiring.rate_counters().hit_once(
            bucket, window_start=start, window_seconds=rate.seconds, once=submission,
            limit=rate.limit)):
        raise _refused(limit, client, message, retry_after, event)


def check_address(email: str, client: str, submission: str, *,
                  message: str | None = None) -> None:
    """The per-e-mail signup limit alone (``check_signup`` counts it with the network's in
    one write), counted for the network it comes from and once per submission."""
    check_once(SIGNUP_EMAIL, f"{validation.normalize_email(email)}|{client}", submission,
               message=message)


# The signup limits of one network live in one item per window: its count (SIGNUP), its
# count per e-mail address (SIGNUP_EMAIL) and the submissions counted.
SIGNUPS = "signups"
# A submission counted in a window begun less than this long ago may have been counted in
# the window before (which ``check_signup``'s one write does not see): not a proven first.
FIRST_MARGIN_SECONDS = 60


def _digest(text: str, size: int = 16) -> str:
    return hmac.new(_key(), text.encode(),
                    hashlib.sha256).hexdigest()[:size]


def _signup_limits(email: str | None) -> list[tuple[str, Rate, str]]:
    """The signup's limits that are on: (limit, rate, counter prefix)."""
    limits = [(SIGNUP, _rate(SIGNUP), "n")]
    if email is not None:
        person = _digest(f"{validation.normalize_email(email)}")
        limits.append((SIGNUP_EMAIL, _rate(SIGNUP_EMAIL), f"e{person}"))
    return [(limit, rate, name) for limit, rate, name in limits if rate is not None]


def _signup_marks(submission: str) -> dict[str, str]:
    return {"n": _digest(f"n|{submission}"), "e": _digest(f"e|{submission}")}


def check_signup(client: str, submission: str, *, email: str | None = None,
                 message: str | None = None, email_message: str | None = None,
                 now=None, event=None, clear_before: int | None = None) -> bool | None:
    """A signup's limits in one write: the network's (``SIGNUP``) and, once the form is
    valid, the e-mail address's from that network (``SIGNUP_EMAIL``), each counted once per
    submission, decided and counted in one conditional UpdateItem on the network's item
    (``RateCounters.hit_all``). Another network's requests about an address never spend
    its owner's allowance; a resubmission (a double click, the 202 page's re-check, the
    same Idempotency-Key) spends nothing; a form first sent invalid and then corrected
    with the same token counts the network once and the address once (a second write,
    only then). ``RateLimited`` with ``message`` (the network's) or ``email_message``.

    Answers whether the submission was asked before (True), is asked now for the first
    time (False: counted now, in a window older than ``FIRST_MARGIN_SECONDS``, which the
    service reads as "a first asking": ``BookingService.book``'s ``again``), or None when
    that cannot be told (no limit on, the store unavailable, a window just begun).

    ``clear_before``: the start of a window whose item and the one before it were read
    and held no asking of this submission (``SignupAdmission``): counted in that window,
    its margin is covered, a first asking."""
    now = time.time() if now is None else now
    limits = _signup_limits(email)
    if not limits:
        return None
    longest = max(rate.seconds for _, rate, _ in limits)
    item_start = int(now // longest) * longest
    counters, which = {}, {}
    for limit, rate, name in limits:
        start, retry_after = _window(rate, now)
        counters[f"{name}{start}"] = rate.limit
        which[f"{name}{start}"] = (limit, retry_after)
    marks = _signup_marks(submission)
    bucket = f"{SIGNUPS}:{_digest(client, 32)}"
    counter_table = wiring.rate_counters()

    def count(chosen, once, unless=()):
        try:
            return counter_table.hit_all(
                bucket, window_start=item_start, window_seconds=longest, once=once,
                counters=chosen, unless=unless, now=now)
        except (BookingError, StoreError):
            logger.warning("Signup limits not counted: the store is unavailable",
                           exc_info=True)
            return "unknown", None

    if email is None:
        state, detail = count(counters, marks["n"])
    else:
        state, detail = count(counters, marks["e"], unless=(marks["n"],))
        if state == "seen":  # the network counted this submission already (an invalid form)
            only = {c: n for c, n in counters.items() if which[c][0] == SIGNUP_EMAIL}
            state, detail = count(only, marks["e"]) if only else ("unknown", None)
    if state == "full":
        limit, retry_after = which[detail]
        raise _refused(limit, client, email_message if limit == SIGNUP_EMAIL else message,
                       retry_after, event)
    if state == "again":
        return True
    if state == "counted" and (now - item_start >= FIRST_MARGIN_SECONDS
                               or clear_before == item_start):
        return False
    return None


class SignupAdmission:
    """A keyed signup's limits (``check_signup``), run by the service inside the booking
    (``BookingService.book``'s ``admission``), so that whether this submission was asked
    before can be read in the same consistent batch as the booking's own first read:
    ``reads`` (the network's item, this window and the one before), ``found`` (the items
    that batch read), ``asked`` (from them, else one read of its own, writing nothing) and
    ``count`` (``check_signup``'s one write: ``RateLimited`` over a limit)."""

    def __init__(self, client: str, submission: str, *, email: str,
                 message: str | None = None, email_message: str | None = None, now=None):
        self.client, self.submission, self.email = client, submission, email
        self.message, self.email_message = message, email_message
        self._found: list | None = None
        self._clear = False  # ``asked`` read this window and the one before: neither had it
        # The network's item, this window and the one before (None: no limit is on).
        limits, now = _signup_limits(email), time.time() if now is None else now
        longest = max((rate.seconds for _, rate, _ in limits), default=0)
        start = int(now // longest) * longest if limits else 0
        self._windows = (f"{SIGNUPS}:{_digest(client, 32)}", [start, start - longest]) \
            if limits else None

    def reads(self) -> list:
        return wiring.rate_counters().asked_keys(*self._windows) if self._windows else []

    def found(self, rows: list) -> None:
        self._found = rows

    def asked(self) -> tuple[bool | None, float | None]:
        """(True, first asked at) when counted before, (False, None) when not, (None, None)
        when no limit is on or the store could not be read."""
        windows = self._windows
        if windows is None:
            return None, None
        counters, once = wiring.rate_counters(), _signup_marks(self.submission)["e"]
        if self._found is not None:
            asked, asked_at = counters.asked_in(self._found, once=once)
        else:
            try:
                asked, asked_at = counters.asked(windows[0], window_starts=windows[1],
                                                 once=once)
            except (BookingError, StoreError):
                logger.warning("Signup limits not read: the store is unavailable",
                               exc_info=True)
                return None, None
        self._clear = asked is False
        return asked, asked_at

    def count(self) -> bool | None:
        """Count this submission (``check_signup``): True asked before, False a first
        asking, None when that cannot be told. Once ``asked`` found it in neither window
        read, a count in the first of them is a first asking even in its first minute (the
        window before was read); a window begun since was not, and keeps its margin."""
        clear_before = self._windows[1][0] if self._clear and self._windows else None
        return check_signup(self.client, self.submission, email=self.email,
                            message=self.message, email_message=self.email_message,
                            clear_before=clear_before)


@contextmanager
def attempt(limit: str, clients: list[str], *, message: str | None = None, now=None):
    """Reserve one attempt for every client before the work the limit bounds (a password
    check), atomically: once a client's attempts are taken, ``RateLimited`` and no work.
    The block calls the yielded ``succeeded()`` when the attempt should not count (a right
    password): its places are given back."""
    rate = _rate(limit)
    if rate is None:
        yield lambda: None
        return
    start, retry_after = _window(rate, time.time() if now is None else now)
    counters = wiring.rate_counters()
    taken: list[str] = []
    for bucket in (_bucket(limit, client) for client in clients):
        if not _counted(limit, lambda: counters.reserve(
                bucket, window_start=start, window_seconds=rate.seconds, limit=rate.limit)):
            _release(limit, counters, taken, start)
            raise _refused(limit, clients[0], message, retry_after)
        taken.append(bucket)
    yield lambda: _release(limit, counters, taken, start)


def _release(limit: str, counters, buckets: list[str], start: int) -> None:
    for bucket in buckets:
        _counted(limit, lambda: counters.release(bucket, window_start=start))


def allows(limit: str, client: str) -> bool:
    """``check`` as a yes/no, for work that is skipped quietly past its limit."""
    try:
        check(limit, client)
    except RateLimited:
        return False
    return True


@contextmanager
def code_attempt(client: str, access_code, *, message: str | None = None):
    """Around a booking with ``access_code``: one attempt of ``client`` reserved first
    (past the limit: ``RateLimited``, nothing booked), given back unless the booking says
    the code is wrong (``InvalidAccessCode``). Without a code: nothing counted."""
    if access_code in (None, ""):
        yield
        return
    with attempt(ACCESS_CODE, [client], message=message) as succeeded:
        try:
            yield
        except InvalidAccessCode:
            raise
        except BaseException:
            succeeded()
            raise
        succeeded()



def code_check(client: str, check, *, message: str | None = None):
    """A code checked outside a booking (a ``?code=...`` link): one attempt of ``client``
    reserved first, in the same limit as a booking's wrong codes (past it: ``RateLimited``,
    nothing checked), given back when ``check()`` finds the code valid (not None). Its
    answer: ``check()``'s."""
    with attempt(ACCESS_CODE, [client], message=message) as succeeded:
        found = check()
        if found is not None:
            succeeded()
    return found
