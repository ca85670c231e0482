"""What the door tells others: webhooks ``checkin.admitted`` and ``checkin.conflict`` (one
delivery per scan, none again for its nonce), metrics of scans by answer."""
import json
import uuid
from datetime import datetime, timedelta, timezone

from booking import wiring
from booking.dynamo.webhooks import WebhookDeliveries
from booking.wiring import webhook_registry

URL = "https://hooks.example.com/door"


def owed(service) -> list[dict]:
    return [json.loads(row["body"]) for row in WebhookDeliveries(service.store).table.scan()]


def test_admission_and_conflict_webhooks_once_per_scan(service):
    webhook_registry(service).register(url=URL, events=["checkin.admitted", "checkin.conflict"])
    event = service.create_event(name="Hooked", capacity=3)
    ann = service.book(event.id, name="Ann", email="ann@example.com")
    lst = service.create_checkin_list(event.id, name="Door")
    code, nonce = service.passes(ann)[0].code, uuid.uuid4().hex
    service.scan(lst.id, code, nonce=nonce, gate="a")
    service.scan(lst.id, code, nonce=nonce, gate="a")  # answered again: nothing new
    service.scan(lst.id, code, nonce=uuid.uuid4().hex, gate="b")  # refused online: no hook
    assert [(b["type"], b["data"]["gate"], b["data"]["name"]) for b in owed(service)] == [
        ("checkin.admitted", "a", "Ann")]
    when = datetime.now(timezone.utc) - timedelta(minutes=1)
    batch = [{"code": code, "nonce": uuid.uuid4().hex, "gate": "c", "scanned_at": when}]
    service.scan_batch(lst.id, batch)
    service.scan_batch(lst.id, batch)
    types = sorted(b["type"] for b in owed(service))
    assert types == ["checkin.admitted", "checkin.conflict"]
    [conflict] = [b for b in owed(service) if b["type"] == "checkin.conflict"]
    assert (conflict["data"]["first_gate"], conflict["data"]["gate"]) == ("a", "c")


def test_another_organizers_endpoint_hears_nothing(service):
    webhook_registry(service).register(url=URL, events=["checkin.admitted"])  # no organizer
    event = service.create_event(name="Theirs", capacity=3, organizer="someone-else")
    ann = service.book(event.id, name="Ann", email="ann@example.com")
    lst = service.create_checkin_list(event.id, name="Door")
    assert service.scan(lst.id, service.passes(ann)[0].code,
                        nonce=uuid.uuid4().hex).status == "admitted"
    assert owed(service) == []


def test_scans_counted_by_answer(settings, service):
    from booking.metrics import prometheus

    settings.METRICS_ENABLED = True
    wiring.observe(service)
    event = service.create_event(name="Counted", capacity=3)
    ann = service.book(event.id, name="Ann", email="ann@example.com")
    lst = service.create_checkin_list(event.id, name="Door")

    def count(status):
        return prometheus.CHECKIN_SCANS.labels(status, "entry")._value.get()

    before = (count("admitted"), count("already_admitted"), count("unknown_code"))
    for code in (service.passes(ann)[0].code, service.passes(ann)[0].code, "junk"):
        service.scan(lst.id, code, nonce=uuid.uuid4().hex)
    after = (count("admitted"), count("already_admitted"), count("unknown_code"))
    assert [b - a for a, b in zip(before, after)] == [1, 1, 1]
