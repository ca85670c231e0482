"""What ``check_capacity`` checks of an event's waiting list (beside the strategy's own
``confirmed + held <= capacity``): nobody is both registered and in line, offers went in
join order, and every unexpired hold belongs to the open offer it was made for."""
from typing import Any

from booking.exactly_once.access_codes import RESERVED_PREFIX
from booking.strategies.audit import Violation
from booking.models import OFFERED, WAITING, Event
from booking.waitlist.engine import now_ms

REGISTERED_AND_WAITING = "not_registered_and_waiting"
OFFERS_IN_ORDER = "offers_in_join_order"
HOLD_MATCHES_OFFER = "hold_matches_open_offer"


def audit_event(service: Any, event: Event, *, now: float | None = None) -> list[Violation]:
    now = now_ms() if now is None else now
    entries = service.engine.entries(event.id)
    if not entries:
        return []
    strategy = service.strategies[event.strategy]
    registered = {r.email for r in strategy.registrations(event.id) if r.is_confirmed}
    found = [Violation(event.id, REGISTERED_AND_WAITING, "registered or waiting", "both",
                       entry.email)
             for entry in entries if entry.is_active and entry.email in registered]
    offered = [e.position for e in entries if e.offer_id is not None]
    for entry in entries:
        if entry.status == WAITING and offered and entry.position < max(offered):
            found.append(Violation(event.id, OFFERS_IN_ORDER, f"offer to {entry.email} first",
                                   f"a later entry (position {max(offered)}) was offered",
                                   f"position {entry.position}"))
    open_offers = {e.email: round(e.offer_expires_at.timestamp() * 1000) for e in entries
                   if e.status == OFFERED}
    for email, until in strategy.holds(event.id).items():
        if email.startswith(RESERVED_PREFIX):  # a seat an access code reserves, no offer
            continue
        if until > now and open_offers.get(email) != until:
            found.append(Violation(event.id, HOLD_MATCHES_OFFER, "an open offer",
                                   "no open offer", f"seat held for {email} until {until}"))
    return found
