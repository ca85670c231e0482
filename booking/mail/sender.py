"""Send the outbox's e-mails exactly once (an immutable execution history + atomic counter).

An outbox row (``booking/exactly_once/outbox.py``) is written in the booking's or cancellation's own
transaction; the web process does nothing more (its CPU is the booking's own). Sending it
is work delivered at least once: by ``manage.py booking_worker``, which looks at the
outbox every ``BOOKING_OUTBOX_INTERVAL`` seconds (``send_owed``), by more than one worker
at once, and by ``replay_failed`` after a failed send. Two senders may see the same row at
the same instant, so each send is guarded by the request history table
(``booking/dynamo/history.py``), keyed by the message id:

1. ``ADD atomic_counter 1`` on the message's start row: only the sender reading 1 (or
   its own resent update) sends. Another sender reads the rows: ``succeeded`` means sent
   (done), a fresh ``started`` means someone is sending (leave it), ``failed`` is left to
   ``replay_failed``, a stale ``started`` (its sender crashed) is claimed in the next
   generation by the same counter.
2. Send through Django's mail backend; record ``succeeded`` or ``failed`` (immutable
   rows); on success delete the outbox row.

A sender that crashes after sending and before recording leaves a ``started`` row that
goes stale, and the e-mail may then go out twice: the one gap at-least-once delivery to
an outside system cannot close (SMTP takes no idempotency key).
"""
import logging
import time
import uuid
from dataclasses import replace
from datetime import datetime
from datetime import timezone as dt_timezone

from django.core.mail import get_connection
from django.template.loader import render_to_string

from booking import calendar, links, pass_images, validation
from booking.background import Background
from booking.dynamo import history, items
from booking.dynamo.history import RequestHistory
from booking.errors import BookingContention, EventNotFound, StoreUnavailable
from booking.exactly_once.outbox import Outbox, message_id
from booking.mail.inline import EmailWithInlineImages, InlineImage
from booking.questions.service import answer_rows, pass_holders
from booking.models import (CANCELLATION, CONFIRMATION, CONFIRMED, OFFER, REJECTION, WAITLIST_JOIN,
                            WAITLIST_REMOVED)

logger = logging.getLogger(__name__)
SENT, ALREADY_SENT, IN_PROGRESS, FAILED = "sent", "already_sent", "in_progress", "failed"
RESEND = "resend-"  # an e-mail sent again on request: no change, no webhook
RECORD_ATTEMPTS = 3  # each is botocore's full set of attempts
TEMPLATES = {CONFIRMATION: "booking/email/confirmation", CANCELLATION:
             "booking/email/cancellation", OFFER: "booking/email/offer",
             # The streams strategy's decider: no seat for a provisional booking.
             REJECTION: "booking/email/rejection",
             # The waiting list: the answer to a request to join, and an organizer's removal.
             WAITLIST_JOIN: "booking/email/waitlist_join",
             WAITLIST_REMOVED: "booking/email/waitlist_removed"}


class MailSender:
    """Claims and sends outbox messages; ``events`` is a callable event_id -> Event.

    ``retention_seconds``: how long history rows live; ``stale_seconds``: a send
    ``started`` longer ago without an outcome is taken as crashed; ``email_backend``: the
    dotted path of the Django mail backend that sends; ``site_url``: the site's address,
    on which every link in an e-mail is built (``booking.wiring`` reads them all from
    settings; harnesses pass a backend of their own). ``fanout(message, event)``, when
    given, owes the message's webhook deliveries before anything else
    (``booking/webhooks/fanout.py``): a row is never released before they exist.
    ``passes(registration)``, when given, lists the booking's passes: a confirmation shows
    each pass's QR code (an inline PNG, ``cid:``) and its code as text.
    ``answers`` (an ``AnswerStore``), when given: a confirmation shows the order's answers,
    and a rejection (a ``streams`` request the decider refused) deletes the answers its
    request stored at acceptance before anything else, so they never outlive it.
    """

    def __init__(self, *, events, outbox: Outbox, history: RequestHistory,
                 email_backend: str, site_url: str, retention_seconds: float = 7 * 86400,
                 stale_seconds: float = 30.0, fanout=None, passes=None, answers=None):
        self.events = events
        self.passes = passes
        self.answers = answers
        self.fanout = fanout
        self.site_url = site_url
        self.outbox = outbox
        self.history = history
        self.email_backend = email_backend
        self.retention_seconds = retention_seconds
        self.stale_seconds = stale_seconds

    def send(self, message: dict, *, event=None, retry_failed: bool = False) -> str:
        """Send one outbox message unless another sender has or is; return the outcome."""
        key = message["message_id"]
        if message["kind"] == REJECTION and self.answers is not None:
            self.answers.delete(message["event_id"], message["registration_id"])
        if self.fanout is not None and not key.startswith(RESEND):
            self.fanout(message, lambda: event or self.events(message["event_id"]))
        # The answers and passes a confirmation shows, read before the send is claimed: a
        # store that fails here leaves the row owed for the next pass, never a failed e-mail.
        shown = None
        if message["kind"] == CONFIRMATION and self.answers is not None:
            try:
                event = event or self.events(message["event_id"])
            except EventNotFound:
                pass  # the delivery fails below, as it always did
            else:
                if event.questions_version:
                    shown = self.answers.read(message["event_id"], message["registration_id"])
        passes = self._passes(message)
        now, runner = time.time(), uuid.uuid4().hex
        fields = {"operation": message["kind"], "event_id": message["event_id"],
                  "email": message["email"], "registration_id": message["registration_id"],
                  "runner": runner}
        row = self.history.start(key, 0, fields, now=now, ttl=self._ttl(now))
        if not _won(row, runner):
            decided = _decide(self.history, key, now, retry_failed, self.stale_seconds)
            if isinstance(decided, str):
                if decided == ALREADY_SENT:
                    self.outbox.done(key)  # its sender may have died before this
                return decided
            row = self.history.start(key, decided, fields, now=now, ttl=self._ttl(now))
            if not _won(row, runner):
                return IN_PROGRESS
        outcome_seq = history.start_seq(history.generation_of(row["seq"])) + 1
        try:
            self._deliver(message, event or self.events(message["event_id"]), passes,
                          answers=shown)
        except Exception as error:  # noqa: BLE001 - any backend failure: SMTP, timeouts
            logger.exception("Could not send the %s e-mail %s", message["kind"], key)
            self._record(key, outcome_seq, history.FAILED,
                         {**fields, "reason_code": "mail_failed", "reason": type(error).__name__})
            return FAILED
        self._record(key, outcome_seq, history.SUCCEEDED, fields)
        self.outbox.done(key)
        return SENT

    def _ttl(self, now: float) -> int:
        return int(now + self.retention_seconds)

    def _record(self, key: str, seq: int, status: str, fields: dict) -> None:
        """Write the outcome row, retrying a briefly unavailable store: once an e-mail went
        out, only this row keeps a later sender from sending it again."""
        for attempt in range(RECORD_ATTEMPTS):
            now = time.time()
            try:
                self.history.record(key, seq, status, fields, now=now, ttl=self._ttl(now))
                return
            except (StoreUnavailable, BookingContention):
                if attempt + 1 == RECORD_ATTEMPTS:
                    raise
                time.sleep(0.05 * 2**attempt)

    def _context(self, message: dict, event, answers=None) -> dict:
        """What the e-mail's templates show: the registration and its links."""
        registration, site_url = items.registration_from_item(message), self.site_url
        dated = event.starts_at is not None
        context = {"event": event, "registration": registration,
                   "cancel_url": links.cancel_url(registration, site_url=site_url),
                   "booking_url": links.booking_url(registration, site_url=site_url),
                   "event_url": links.event_url(event.id, site_url=site_url),
                   "ics_url": calendar.ics_url(event, site_url=site_url) if dated else "",
                   "google_url": calendar.google_url(event, site_url=site_url) if dated else ""}
        if answers is not None:  # a confirmation's answers, read before it was claimed
            order, passes = answer_rows(event.questions, answers)
            context.update(answer_rows=order, pass_rows=passes)
        if message["kind"] == OFFER:  # a waiting-list offer: its accept link and deadline
            context.update(offer_context(message, site_url=site_url))
        if message["kind"] == WAITLIST_JOIN:
            context.update(join_context(message, site_url=site_url))
        return context

    def _passes(self, message: dict) -> list:
        """A confirmation's passes not cancelled (one read of the order's state at the
        door); none for other e-mails."""
        if message["kind"] != CONFIRMATION or self.passes is None:
            return []
        return [p for p in self.passes(items.registration_from_item(message)) if p.is_valid]

    def _pass_images(self, shown: list, context: dict, event, answers) -> list[InlineImage]:
        """Each pass's QR code as an inline image: ``context["passes"]`` holds (pass,
        content id) pairs for the templates, ``context["pass_holders"]`` whose each is."""
        context["passes"] = [(p, f"pass-{p.pass_id}@booking") for p in shown]
        context["pass_holders"] = pass_holders(event.questions, answers, shown,
                                               default=context["registration"].name)
        return [InlineImage(cid, pass_images.png(p.code), f"pass-{n}.png")
                for n, (p, cid) in enumerate(context["passes"], start=1)]

    def _deliver(self, message: dict, event, passes: list, answers=None) -> None:
        context = self._context(message, event, answers)
        images = self._pass_images(passes, context, event, answers)
        registration = context["registration"]
        if validation.is_placeholder_email(registration.contact or registration.email):
            logger.info("Not mailed: %s was added without an e-mail address", message["kind"])
            return  # an attendee added by hand without an address: nobody to tell
        template = TEMPLATES[message["kind"]]
        subject = render_to_string(f"{template}_subject.txt", context)
        # The header names the message, so a receiver (and the torture run) can tell a
        # duplicate from a second e-mail.
        # To the address as the person typed it; the e-mail key is what identifies them.
        email = EmailWithInlineImages(
            " ".join(subject.split()), render_to_string(f"{template}.txt", context), None,
            [registration.contact or registration.email],
            headers={"X-Booking-Message": message["message_id"]},
            connection=get_connection(self.email_backend), inline_images=images)
        email.attach_alternative(render_to_string(f"{template}.html", context), "text/html")
        if message["kind"] == CONFIRMATION and event.starts_at:
            email.attach(f"event-{event.id}.ics", calendar.ics(event, site_url=self.site_url,
                                                                registration=registration),
                         "text/calendar")
        email.send()


def _won(row: dict, runner: str) -> bool:
    return row["atomic_counter"] == 1 or row.get("runner") == runner


def _decide(rows: RequestHistory, key: str, now: float, retry_failed: bool,
            stale_seconds: float):
    """An outcome to report, or the generation this sender should try to start."""
    newest_seq = None
    for row in rows.newest_first(key):
        newest_seq = row["seq"] if newest_seq is None else newest_seq
        if row["ttl"] <= now:
            continue
        if row["exec_status"] == history.SUCCEEDED:
            return ALREADY_SENT
        if row["exec_status"] == history.STARTED and row["created_at"] > now - stale_seconds:
            return IN_PROGRESS
        if row["exec_status"] == history.FAILED and not retry_failed:
            return FAILED
        break
    return 0 if newest_seq is None else history.generation_of(newest_seq) + 1


def newest_live_row(rows: RequestHistory, key: str, *,
                    now: float | None = None) -> dict | None:
    """The message's newest history row within retention, or None."""
    now = time.time() if now is None else now
    return next((r for r in rows.newest_first(key) if r["ttl"] > now), None)


def offer_context(message: dict, *, site_url: str) -> dict:
    """What the offer e-mail shows beyond the registration-shaped message."""
    expires = datetime.fromtimestamp(message["offer_expires_at"] / 1000, dt_timezone.utc)
    offered = datetime.fromisoformat(message["registered_at"])  # when the offer was made
    return {"offer_url": links.offer_url(message["event_id"], message["email"],
                                         message["registration_id"], site_url=site_url),
            "offer_expires_at": expires,
            "offer_seconds": round((expires - offered).total_seconds())}


def join_context(message: dict, *, site_url: str) -> dict:
    """What the answer to a request to join shows: the link that joins (when the address
    is not in line or booked yet), the person's own place page, how long offers last."""
    context = {"join_state": message["join_state"], "offer_seconds": message["offer_seconds"],
               "place_url": links.place_url(message["event_id"], message["email"],
                                            site_url=site_url)}
    if message["join_state"] == "confirm":
        context["confirm_url"] = links.join_url(links.JoinRef(
            event_id=message["event_id"], email=message["email"], name=message["name"],
            contact=message.get("contact"), request_id=message["request_id"],
            issued_at=float(message["created_at"]),
            tickets=items.registration_from_item(message).ticket_counts), site_url=site_url)
    return context


def message_for(kind: str, registration) -> dict:
    """The outbox row a booking (or cancellation) of ``registration`` wrote."""
    return {"message_id": message_id(kind, registration.registration_id,
                                     registration.part_request_id), "kind": kind,
            **items.registration_item(registration)}


# --- off the calling thread: a small pool of background threads per process ------------
# The web process uses it only for a resend (rare, limited per network and booking); the
# worker's stream decider for the e-mail a decision owes, at once.
_mail = Background("booking-mail")


def send_soon(sender: MailSender, kind: str, registration, *, event=None) -> None:
    """Send the e-mail just owed for ``registration`` off the calling thread (the worker's
    decider: the outbox pass is the safety net)."""
    _submit(sender, message_for(kind, registration), event)


def decision_mailer(sender: MailSender):
    """The stream decider's ``on_decided``: the e-mail a decision owes (a confirmation, a
    rejection), sent at once off the decider's thread (the outbox pass is the safety net)."""
    def send_decision(outcome: str, registration) -> None:
        send_soon(sender, CONFIRMATION if outcome == CONFIRMED else REJECTION,
                  replace(registration, status=outcome))
    return send_decision


def resend_when_registered(sender: MailSender, find, *, event, allowed) -> None:
    """Off the request's thread: ``find()`` the registration and, if it is confirmed and
    ``allowed(registration)``, resend its confirmation. The request hands over the same
    work whether or not anyone is registered (the resend form's answer and timing tell
    nothing)."""
    _mail.submit(_resend_found, sender, find, event, allowed)


def _resend_found(sender, find, event, allowed):
    try:
        registration = find()
        if registration is None or not registration.is_confirmed:  # a decision mails itself
            return None
        if not allowed(registration):
            return None
    except Exception:  # noqa: BLE001 - the person may ask again
        logger.exception("Resending a confirmation for event %s failed", event.id)
        return FAILED
    # A new message, so the history of the first one (sent once) is untouched.
    message = {**message_for(CONFIRMATION, registration),
               "message_id": f"{RESEND}{registration.registration_id}-{uuid.uuid4().hex}"}
    return _send_logged(sender, message, event)


def _submit(sender, message, event) -> None:
    _mail.submit(_send_logged, sender, message, event)


def _send_logged(sender, message, event):
    try:
        return sender.send(message, event=event)
    except Exception:  # noqa: BLE001 - the worker sends it later
        logger.exception("Sending %s left to the booking worker", message["message_id"])
        return FAILED


def flush(timeout: float = 30.0) -> None:
    """Wait for the e-mails this process is sending off its threads right now (tests,
    shutdown)."""
    _mail.flush(timeout)


__all__ = ["CANCELLATION", "CONFIRMATION", "MailSender", "flush", "send_soon"]


def send_owed(sender: MailSender, *, min_age: float = 0.0, now: float | None = None) -> dict:
    """One pass over the outbox: send every message owed for ``min_age`` seconds or more
    (the worker: 0, everything owed). Returns the count of each outcome. Failed sends are
    left to ``replay_failed``.
    """
    now = time.time() if now is None else now
    outcomes: dict[str, int] = {}
    events: dict = {}  # one read per event and pass, not per e-mail
    for message in sender.outbox.pending():
        if message.get("created_at", 0) > now - min_age:
            continue
        try:
            event_id = message["event_id"]
            if event_id not in events:
                events[event_id] = sender.events(event_id)
            outcome = sender.send(message, event=events[event_id])
        except EventNotFound:  # deleted with everything stored for it: nothing to tell
            sender.outbox.done(message["message_id"])
            outcome = "event_deleted"
        except Exception:  # noqa: BLE001 - the next pass tries again
            logger.exception("Could not send %s; the next pass tries again",
                             message["message_id"])
            outcome = "error"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes
