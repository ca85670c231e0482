"""The scanner page's scoping: every route that names a check-in list, asked with every
method, answers 404 exactly as for a missing list to anyone who may not scan for that
list's event (another organizer's member, a viewer without the checkin right, a checkin
member of other events only, anyone signed out), and nothing of that list changes.

The routes are read from the URLconf (a new one cannot escape the sweep). The control, a
careless scope check that finds the list but never asks for the right (built here, never
a setting), is caught by the same sweep.
"""
import json
import uuid
from datetime import datetime, timezone

import pytest
from django.contrib.auth.models import User
from django.urls import URLPattern

from booking.organizers.models import CHECKIN, VIEWER
from booking.web import checkin as checkin_views
from booking.web import urls as web_urls
from tests.organizers.helpers import member, staff

METHODS = ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE")
MISSING = "0" * 32
LIST_ROUTES = sorted(p.name for p in web_urls.urlpatterns
                     if isinstance(p, URLPattern) and "<str:list_id>" in str(p.pattern))


def test_every_checkin_route_is_swept():
    assert LIST_ROUTES == ["checkin_batch", "checkin_counts", "checkin_roster", "checkin_scan",
                           "checkin_scanner", "checkin_search"]


@pytest.fixture
def door(service, db):
    """Alpha's and beta's events, each with a list and a booked pass; the users."""
    alpha = service.create_event(name="Alpha night", capacity=5, organizer="alpha")
    alpha_other = service.create_event(name="Alpha matinee", capacity=5, organizer="alpha")
    beta = service.create_event(name="Beta night", capacity=5, organizer="beta")
    lists = {"alpha": service.create_checkin_list(alpha.id, name="Alpha door"),
             "beta": service.create_checkin_list(beta.id, name="Beta door")}
    codes = {name: service.passes(service.book(event.id, name="Guest Person",
                                               email=f"guest-{name}@example.com"))[0].code
             for name, event in (("alpha", alpha), ("beta", beta))}
    users = {"alpha checkin": staff("alpha-door", "alpha", CHECKIN),
             "alpha viewer": staff("alpha-viewer", "alpha", VIEWER),
             "beta checkin": staff("beta-door", "beta", CHECKIN),
             "not staff": User.objects.create_user("visitor"),
             "signed out": None}
    matinee_only = staff("matinee-door", "alpha", role=None)
    member(matinee_only, "alpha", CHECKIN, events=[alpha_other.id])
    users["alpha checkin, matinee only"] = matinee_only
    return {"lists": lists, "codes": codes, "users": users}


def ask(client, user, route: str, list_id: str, method: str, code: str):
    client.logout()
    if user is not None:
        client.force_login(user)
    path = f"/checkin/{list_id}/" + {"checkin_scanner": "", "checkin_scan": "scan/",
                                     "checkin_batch": "batch/", "checkin_search": "search/",
                                     "checkin_counts": "counts/",
                                     "checkin_roster": "roster/"}[route]
    scan = {"code": code, "direction": "entry", "nonce": uuid.uuid4().hex, "gate": "sweep",
            "scanned_at": datetime.now(timezone.utc).isoformat()}
    body = json.dumps({"scans": [scan]} if route == "checkin_batch" else scan)
    query = "?q=Guest" if method in ("GET", "HEAD") else ""
    response = client.generic(method, path + query, body, content_type="application/json")
    return response.status_code, response.content


def leaks(client, door, asking: dict[str, str]) -> list:
    """(user, route, method, status) of every answer about a list the user may not scan
    that differs from the answer about a missing list."""
    found = []
    for user_name, list_name in asking.items():
        user, target = door["users"][user_name], door["lists"][list_name]
        for route in LIST_ROUTES:
            for method in METHODS:
                code = door["codes"][list_name]
                missing = ask(client, user, route, MISSING, method, code)
                answer = ask(client, user, route, target.id, method, code)
                if answer != missing or answer[0] not in (302, 404):
                    found.append((user_name, route, method, answer[0]))
    return found


ASKING = {"alpha checkin": "beta", "beta checkin": "alpha", "alpha viewer": "alpha",
          "alpha checkin, matinee only": "alpha", "not staff": "alpha",
          "signed out": "alpha"}


def test_another_organizers_list_answers_as_a_missing_one_for_every_method(
        client, door, service):
    assert leaks(client, door, ASKING) == []
    for checkin_list in door["lists"].values():  # the sweep admitted nobody
        assert service.checkin_list(checkin_list.id).admitted == 0


def test_control__a_scope_check_that_forgets_the_right_is_caught(client, door, service,
                                                                 monkeypatch):
    def careless(request, list_id, *, counts=False):
        """Finds the list, never asks whether the user may scan for its event."""
        found = service.find_checkin_list(list_id)
        return service, found, service.get_event(found.event_id)
    monkeypatch.setattr(checkin_views, "scannable", careless)

    caught = leaks(client, door, {"alpha checkin": "beta"})

    assert ("alpha checkin", "checkin_scan", "POST", 200) in caught
    assert ("alpha checkin", "checkin_batch", "POST", 200) in caught
    assert ("alpha checkin", "checkin_search", "GET", 200) in caught
    assert service.checkin_list(door["lists"]["beta"].id).admitted == 1


def test_own_list_answers_for_a_checkin_member(client, door, service):
    own = door["lists"]["alpha"]
    status, body = ask(client, door["users"]["alpha checkin"], "checkin_scan", own.id, "POST",
                       door["codes"]["alpha"])
    assert status == 200 and json.loads(body)["status"] == "admitted"
    status, _ = ask(client, door["users"]["alpha checkin"], "checkin_scanner", own.id, "GET",
                    "")
    assert status == 200
    status, _ = ask(client, door["users"]["alpha checkin"], "checkin_scan", own.id, "PUT", "")
    assert status == 405  # a method the view does not take, once the list is the user's
