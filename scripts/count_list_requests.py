"""Count the DynamoDB requests of GET / with 1 and 12 events per strategy (in-process moto).

Run from a checkout: .venv/bin/python scripts/count_list_requests.py
"""
import os, sys, uuid
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                  DYNAMODB_ENDPOINT_URL="", DYNAMODB_TABLE_PREFIX=f"m{uuid.uuid4().hex[:6]}-",
                  DATABASE_URL="sqlite://:memory:", ALLOWED_HOSTS="testserver")
sys.path.insert(0, os.getcwd())
import django; django.setup()
from moto import mock_aws
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
with mock_aws():
    from booking.dynamo.provision import ensure_tables
    from booking.dynamo.metrics import RequestMeter
    try:
        from booking.wiring import get_booking_service
    except ImportError:
        from booking.service import get_booking_service
    ensure_tables(wait=False)
    svc = get_booking_service()
    for n in (1, 12):
        for strategy in ("aggregate", "lock_table", "slots"):
            while sum(1 for e in svc.list_events() if e.strategy == strategy) < n:
                svc.create_event(name=f"{strategy}", capacity=5, strategy=strategy)
        meter = RequestMeter().install()
        with meter.track() as t:
            r = Client().get("/")
        meter.uninstall()
        print(f"{n:>2} events per strategy ({3*n} events): GET / -> {r.status_code}, {t.requests} DynamoDB requests")
