"""Every time on the admin's pages reads one way, its zone named: an event's in the event's
zone ('1 May 2031, 18:30 JST (Asia/Tokyo)'), one of no event (a token, a refusal by a
limit) in the site's ``TIME_ZONE`` ('1 Dec 2026, 19:42 UTC'); never Django's
'Dec. 1, 2026, 7:42 p.m.' with no zone."""
import re
from datetime import datetime, timezone

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from booking.api.models import ApiToken
from booking.organizers.models import LimitHit
from tests.organizers.helpers import DEFAULT, organizer

pytestmark = pytest.mark.django_db
DJANGO_STYLE = re.compile(r"[AP]\.M\.|[ap]\.m\.|\b[A-Z][a-z]{2}\. \d")
AT = datetime(2026, 12, 1, 19, 42, tzinfo=timezone.utc)


def test_token_list__created_and_revoked_in_the_sites_zone_named(admin_client):
    token = ApiToken(organizer=organizer(), name="ci", scope="read",
                     user=User.objects.get(is_superuser=True))
    token.issue()
    token.save()
    ApiToken.objects.filter(pk=token.pk).update(created_at=AT, revoked_at=AT)
    html = admin_client.get(reverse("admin:booking_api_apitoken_changelist")).content.decode()
    assert html.count("1 Dec 2026, 19:42 UTC") == 2
    assert not DJANGO_STYLE.search(html.split("result_list", 1)[1].split("</table>", 1)[0])


def test_limit_hits__last_refusal_in_the_sites_zone_named(admin_client):
    LimitHit.objects.create(limit="signup", event_id="e1", event_name="Summit",
                            organizer=DEFAULT, network="ab12", hour=AT, last_at=AT, refused=3)
    html = admin_client.get(reverse("admin:booking_organizers_limithit_changelist")).content.decode()
    assert "1 Dec 2026, 19:42 UTC" in html
    assert not DJANGO_STYLE.search(html.split("result_list", 1)[1].split("</table>", 1)[0])
