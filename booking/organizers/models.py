"""An organizer owns events (``Event.organizer`` is its slug); a team of an organizer
grants its members one role on all of the organizer's events or on some of them."""
import logging
import re

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models

logger = logging.getLogger(__name__)

ADMIN, EDITOR, VIEWER, CHECKIN = "admin", "editor", "viewer", "checkin"
ROLES = (ADMIN, EDITOR, VIEWER, CHECKIN)
ROLE_CHOICES = [
    (ADMIN, "admin: everything of the organizer, with teams, tokens and webhooks"),
    (EDITOR, "editor: create and change events, see and cancel registrations"),
    (VIEWER, "viewer: read only"),
    (CHECKIN, "check-in: the door only"),
]
SLUG_RULE = RegexValidator(r"^[a-z0-9][a-z0-9-]{0,49}$",
                           "Use 1 to 50 lower-case letters, digits and hyphens.")


class Organizer(models.Model):
    slug = models.CharField(max_length=50, unique=True, validators=[SLUG_RULE],
                            help_text="Stored on each of its events; never changes.")
    name = models.CharField(max_length=200)

    class Meta:
        ordering = ("slug",)

    def __str__(self):
        return self.name or self.slug


EVENT_ID = re.compile(r"[0-9a-f]{32}")  # as booking/validation.py's EVENT_ID_PATTERN
MAX_LIMIT_EVENTS = 1000


def check_event_ids(value) -> None:
    """A team's ``limit_events``: a list of event ids (at most 1,000), nothing else."""
    if not isinstance(value, list) or len(value) > MAX_LIMIT_EVENTS or not all(
            isinstance(item, str) and EVENT_ID.fullmatch(item) for item in value):
        raise ValidationError(
            f"Give a list of event ids, like [\"0123456789abcdef0123456789abcdef\"] (at "
            f"most {MAX_LIMIT_EVENTS:,}), or [] with every event.", code="event_ids")


def event_ids(value) -> frozenset[str]:
    """The event ids a stored ``limit_events`` names; a value saved before it was checked
    that is not a list of ids grants no event (logged), never an error."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return frozenset(value)
    logger.warning("A team's limit_events is not a list of event ids: it grants no event")
    return frozenset(item for item in value if isinstance(item, str)) \
        if isinstance(value, list) else frozenset()


class Team(models.Model):
    organizer = models.ForeignKey(Organizer, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=100)
    role = models.CharField(max_length=10, choices=ROLE_CHOICES)
    members = models.ManyToManyField("auth.User", related_name="organizer_teams", blank=True)
    all_events = models.BooleanField(
        default=True, help_text="Every event of the organizer, now and later; else only "
                                "the event ids listed below.")
    limit_events = models.JSONField(default=list, blank=True, validators=[check_event_ids],
                                    help_text="Event ids, when not all events: a list "
                                              "like [\"0123...\"].")

    class Meta:
        ordering = ("organizer__slug", "name")
        constraints = [models.UniqueConstraint(fields=("organizer", "name"),
                                               name="one_team_name_per_organizer")]

    def __str__(self):
        return f"{self.organizer.slug}: {self.name} ({self.role})"


class LimitHit(models.Model):
    """Requests an abuse limit refused (booking/entry/limits.py), for the admin: one row
    per limit, event, client network and hour, counting the refusals in it. Written only
    when a request is refused (rare), so it costs nothing on the paths people use; rows
    older than ``limit_hits.KEPT_DAYS`` are deleted as new ones come, so the table stays
    small even under a flood (one network makes one row an hour per limit and event).
    The network is a keyed hash (the same network, the same label), never its address."""

    limit = models.CharField(max_length=40)
    event_id = models.CharField(max_length=64, blank=True)
    event_name = models.CharField(max_length=200, blank=True)
    organizer = models.CharField(max_length=50, blank=True, db_index=True,
                                 help_text="The event's organizer; blank for limits not "
                                           "about an event (admin logins, API tokens).")
    network = models.CharField(max_length=16)
    hour = models.DateTimeField()
    refused = models.PositiveIntegerField(default=0)
    last_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ("-last_at",)
        verbose_name = "limit hit"
        constraints = [models.UniqueConstraint(
            fields=("limit", "event_id", "network", "hour"), name="one_limit_hit_row_an_hour")]

    def __str__(self):
        return f"{self.limit} {self.event_name or '-'} {self.network}"
