"""Who may do what, on which organizers and events: the one place every entry point asks.

A user's rights come from the teams they are a member of (``models.Team``): each team
grants its role on all of its organizer's events or on the listed ones. A superuser may
do everything everywhere. An inactive user, and one without staff status, may do nothing
(the admin needs staff status; so do their API tokens). An API token is exactly its
user's rights on the token's organizer, read now, narrowed by its scope (read: ``VIEW``
only, no secrets). Nothing here is cached across requests: a removed membership counts
at once.

An event the asker knows nothing about answers exactly as a missing one (404); an event
the asker holds some role on, without the right asked for, answers 403.
"""
from dataclasses import dataclass, field

from booking.organizers.models import ADMIN, CHECKIN, EDITOR, VIEWER, Organizer, Team, event_ids

VIEW = "view"  # see events' admin data, registrations, exports, waiting lists
CHANGE = "change"  # edit events, cancel registrations, remove people from waiting lists
DELETE = "delete"  # delete events
CREATE = "create"  # create events in the organizer (a team on all of its events)
SECRETS = "secrets"  # see registrations' cancellation secrets (write tokens, editors)
MANAGE = "manage"  # change the organizer's webhooks, API tokens and teams
SEE_WEBHOOKS = "see-webhooks"  # list webhook endpoints and their deliveries
SCAN = "scan"  # scan passes at the door (a write: read tokens never hold it)
SEE_DOOR = "see-door"  # list an event's check-in lists and their counts
ACTIONS = (VIEW, CHANGE, DELETE, CREATE, SECRETS, MANAGE, SEE_WEBHOOKS, SCAN, SEE_DOOR)

GRANTS = {
    ADMIN: frozenset(ACTIONS),
    EDITOR: frozenset({VIEW, CHANGE, DELETE, CREATE, SECRETS, SCAN, SEE_DOOR}),
    VIEWER: frozenset({VIEW}),
    CHECKIN: frozenset({SCAN, SEE_DOOR}),
}
# A read token views (a checkin member's: the door's lists and counts); scanning is a
# write, so only a write token scans.
READ_ONLY = frozenset({VIEW, SEE_WEBHOOKS, SEE_DOOR})
# Organizer-wide actions need a team on all of the organizer's events.
ORGANIZER_WIDE = frozenset({CREATE, MANAGE, SEE_WEBHOOKS})
ALL = None  # an event set meaning "every event of the organizer"


@dataclass(frozen=True)
class Grant:
    """What one team gives: ``actions`` on the organizer's ``events`` (ALL or ids)."""

    organizer: str
    actions: frozenset
    events: frozenset | None

    def covers(self, organizer: str, event_id: str | None) -> bool:
        if organizer != self.organizer:
            return False
        return self.events is ALL or (event_id is not None and event_id in self.events)


@dataclass(frozen=True)
class Rights:
    """The asker's rights. ``everything``: a superuser's (in the admin)."""

    grants: tuple = ()
    everything: bool = False

    @property
    def is_empty(self) -> bool:
        return not self.everything and not self.grants
    allowed: frozenset = field(default=frozenset(ACTIONS))  # a read token: READ_ONLY

    # --- events ----------------------------------------------------------------
    def knows(self, organizer: str, event_id: str | None = None) -> bool:
        """Any role on the event (or, without an id, on all the organizer's events)."""
        return self.everything or any(g.covers(organizer, event_id) for g in self.grants)

    def may(self, action: str, organizer: str, event_id: str | None = None) -> bool:
        if action not in self.allowed:
            return False
        if self.everything:
            return True
        return any(action in g.actions and g.covers(organizer, event_id)
                   and (action not in ORGANIZER_WIDE or g.events is ALL)
                   for g in self.grants)

    def knows_event(self, event) -> bool:
        return self.knows(event.organizer, event.id)

    def may_event(self, action: str, event) -> bool:
        return self.may(action, event.organizer, event.id)

    def scope(self, action: str = VIEW) -> "Scope":
        """Which events ``action`` reaches: for listing and searching."""
        if action not in self.allowed:
            return Scope(organizers=frozenset(), event_ids=frozenset())
        if self.everything:
            return Scope(organizers=ALL, event_ids=frozenset())
        wanted = [g for g in self.grants if action in g.actions]
        return Scope(organizers=frozenset(g.organizer for g in wanted if g.events is ALL),
                     event_ids=frozenset(e for g in wanted if g.events is not ALL
                                         for e in g.events))

    # --- organizers ---------------------------------------------------------------
    def organizers(self, action: str) -> frozenset | None:
        """The slugs of the organizers where ``action`` is allowed on every event (ALL:
        any organizer, a superuser's)."""
        if action not in self.allowed:
            return frozenset()
        if self.everything:
            return ALL
        return frozenset(g.organizer for g in self.grants
                         if action in g.actions and g.events is ALL)

    def may_organizer(self, action: str, organizer: str) -> bool:
        return self.may(action, organizer, None)


@dataclass(frozen=True)
class Scope:
    """Events of ``organizers`` (ALL: every organizer) plus the listed ``event_ids``."""

    organizers: frozenset | None
    event_ids: frozenset

    @property
    def is_everything(self) -> bool:
        return self.organizers is ALL

    @property
    def is_empty(self) -> bool:
        return self.organizers is not ALL and not self.organizers and not self.event_ids

    def holds(self, event) -> bool:
        return (self.organizers is ALL or event.organizer in self.organizers
                or event.id in self.event_ids)


NOTHING = Rights()


def may_use(user) -> bool:
    """Whether ``user`` may act as an organizer at all (active, and staff or superuser)."""
    return bool(user is not None and user.is_active and (user.is_staff or user.is_superuser))


def for_user(user, *, organizer: str | None = None) -> Rights:
    """``user``'s rights now (only on ``organizer`` when given: a token's)."""
    if not may_use(user):
        return NOTHING
    if user.is_superuser:
        if organizer is None:
            return Rights(everything=True)
        if not Organizer.objects.filter(slug=organizer).exists():
            return NOTHING
        return Rights(grants=(Grant(organizer, frozenset(ACTIONS), ALL),))
    teams = Team.objects.filter(members=user).select_related("organizer")
    if organizer is not None:
        teams = teams.filter(organizer__slug=organizer)
    return Rights(grants=tuple(
        Grant(team.organizer.slug, GRANTS[team.role],
              ALL if team.all_events else event_ids(team.limit_events))
        for team in teams))


def for_token(token) -> Rights:
    """An API token's rights now: its user's on its organizer, read scope: ``VIEW`` only.
    A revoked token has none."""
    if token.revoked_at is not None or token.organizer_id is None:
        return NOTHING
    rights = for_user(token.user, organizer=token.organizer.slug)
    if not token.writes:
        rights = Rights(grants=rights.grants, everything=rights.everything, allowed=READ_ONLY)
    return rights


def may_mint_token(user, organizer: str) -> bool:
    """A user may create API tokens for an organizer they administer."""
    return for_user(user).may_organizer(MANAGE, organizer)


def organizer_exists(slug: str) -> bool:
    return Organizer.objects.filter(slug=slug).exists()
