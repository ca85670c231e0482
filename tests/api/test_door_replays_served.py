"""The attack run's replays of the door's fourth-round findings (``harness/attack_checkin.py``)
against the production serving (nginx in front of gunicorn, DEBUG=false): each reported
defended (F2 a queue over the body limits, F3 counts' cost, F5 a read token's scan, F6 a
client's time online, F8 lax input, F12 a pass from before a key rotation)."""
import pytest

from booking.dynamo.provision import ensure_tables
from harness import attack_checkin
from harness.attack import AttackRun
from harness.controls import local_store
from harness.serving import ProductionSite, nginx_available

pytestmark = [pytest.mark.concurrency,
              pytest.mark.skipif(not nginx_available(), reason="needs Debian's nginx "
                                 "(scripts/ensure_nginx.sh, run by make test as root)")]

MAKE_ADMIN = ("from django.contrib.auth.models import User; "
              "User.objects.create_user('beta-admin', password='pw-door-1', is_staff=True)")


@pytest.fixture
def site(local_server, tmp_path):
    served = ProductionSite(local_server.url, workdir=tmp_path, client_timeout=10, threads=4)
    ensure_tables(local_store(local_server.url, table_prefix=served.table_prefix))
    try:
        yield served.start(pages=False, tables=False)
    finally:
        served.stop()


def test_served__door_replays_of_the_attack_run__all_defended(site, capsys):
    printed = site.manage_all([
        ["migrate", "--noinput", "--verbosity", "0"], ["shell", "-c", MAKE_ADMIN],
        ["create_organizer", "beta", "--member", "beta-admin:admin"],
        *[["create_api_token", "--organizer", "beta", "--user", "beta-admin",
           "--name", f"admin {scope}", "--scope", scope] for scope in ("read", "write")]])
    read, write = printed.strip().splitlines()[-2:]
    run = AttackRun(site, slow_seconds=10)
    run.tokens = {"beta-admin-read": read.strip(), "beta-admin-write": write.strip()}
    capsys.readouterr()

    for step in attack_checkin.fourth_round(run):
        step()

    reported = capsys.readouterr().out
    assert run.found == [], reported
    assert reported.count("defended") == 6, reported
