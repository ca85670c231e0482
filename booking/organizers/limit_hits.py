"""Refusals of the abuse limits, kept a few days for the admin's "Limit hits" page.

``record`` is called only when a limit refuses a request: one upsert of the hour's row for
(limit, event, network), and a delete of rows past ``KEPT_DAYS``. A database that cannot
be written (or reached from this thread) is logged and ignored: the refusal itself never depends on it."""
import logging
from datetime import timedelta

from django.db import DatabaseError, transaction
from django.db.models import F
from django.utils import timezone

from booking.organizers.models import LimitHit

logger = logging.getLogger(__name__)
KEPT_DAYS = 7


def record(*, limit: str, network: str, event=None) -> None:
    """Count one refusal of ``limit`` for ``network`` (a keyed hash), on ``event`` if any."""
    now = timezone.now()
    hour = now.replace(minute=0, second=0, microsecond=0)
    key = {"limit": limit, "event_id": getattr(event, "id", "") or "", "network": network,
           "hour": hour}
    try:
        with transaction.atomic():
            row, created = LimitHit.objects.get_or_create(**key, defaults={
                "event_name": getattr(event, "name", "")[:200],
                "organizer": getattr(event, "organizer", "") or "", "refused": 1,
                "last_at": now})
            if not created:
                LimitHit.objects.filter(pk=row.pk).update(refused=F("refused") + 1,
                                                          last_at=now)
        LimitHit.objects.filter(last_at__lt=now - timedelta(days=KEPT_DAYS)).delete()
    except (DatabaseError, RuntimeError):  # e.g. no database on this thread
        logger.warning("Limit hit of %s not recorded", limit, exc_info=True)
