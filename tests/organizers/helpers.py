"""Organizers, teams and tokens for tests (SQL rows; the tests need ``django_db``)."""
from django.contrib.auth.models import User

from booking.api.models import ApiToken
from booking.organizers.models import ADMIN, Organizer, Team

DEFAULT = "acme"  # the organizer of the tests' events unless they name another


def organizer(slug: str = DEFAULT) -> Organizer:
    found, _ = Organizer.objects.get_or_create(slug=slug, defaults={"name": slug.title()})
    return found


def member(user, slug: str = DEFAULT, role: str = ADMIN, events=None) -> Team:
    """Put ``user`` in ``slug``'s team for ``role`` (on all its events, or ``events``)."""
    name = f"{role}s" if events is None else f"{role}s of {','.join(sorted(events))}"
    team, _ = Team.objects.get_or_create(
        organizer=organizer(slug), name=name,
        defaults={"role": role, "all_events": events is None,
                  "limit_events": sorted(events or [])})
    team.members.add(user)
    return team


def staff(username: str, slug: str = DEFAULT, role: str = ADMIN, **extra) -> User:
    user, _ = User.objects.get_or_create(username=username,
                                         defaults={"is_staff": True, **extra})
    if role:
        member(user, slug, role)
    return user


def token_for(user, scope: str, slug: str = DEFAULT, name: str = "ci"):
    """(token row, request headers) of a new token of ``user`` on ``slug``."""
    token = ApiToken(user=user, organizer=organizer(slug), name=name, scope=scope)
    secret = token.issue()
    token.save()
    return token, {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def issue(scope: str, username: str = "org", slug: str = DEFAULT, role: str = ADMIN):
    """A token of a staff user with ``role`` on ``slug`` (default: an admin of acme)."""
    return token_for(staff(username, slug, role), scope, slug)
