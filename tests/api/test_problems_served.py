"""The attack run's API steps (``harness/attack_api.py``) against the production serving
(nginx in front of gunicorn, DEBUG=false): shared Idempotency-Keys and API failures,
also a body nginx refuses itself, each reported defended."""
import pytest

from booking.dynamo.provision import ensure_tables
from harness import attack_api
from harness.attack import AttackRun
from harness.controls import local_store
from harness.serving import ProductionSite, nginx_available

pytestmark = [pytest.mark.concurrency,
              pytest.mark.skipif(not nginx_available(), reason="needs Debian's nginx "
                                 "(scripts/ensure_nginx.sh, run by make test as root)")]


@pytest.fixture
def site(local_server, tmp_path):
    served = ProductionSite(local_server.url, workdir=tmp_path, client_timeout=10, threads=4,
                            BOOKING_SIGNUP_RATE="200/10m")
    ensure_tables(local_store(local_server.url, table_prefix=served.table_prefix))
    try:
        started = served.start(pages=False, tables=False)
        # The attack run's events belong to its organizer alpha (harness/attack.py).
        started.manage("migrate", "--noinput")
        started.manage("create_organizer", "alpha")
        yield started
    finally:
        served.stop()


def test_served__api_steps_of_the_attack_run__all_defended(site, capsys):
    run = AttackRun(site, slow_seconds=10)

    for step in attack_api.steps(run):
        step()

    reported = capsys.readouterr().out
    assert run.found == [], reported
    assert reported.count("defended") == 2, reported
