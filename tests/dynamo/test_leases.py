"""Time-limited leases: conditional put on expiry, release by owner token only."""
import time

import pytest

from booking.wiring import leases as service_leases
from booking.dynamo.leases import LeaseTaken


def test_acquire__free__stores_token_expiry_and_ttl(dynamo):
    lease = service_leases().acquire("job", seconds=30, now=1000.0)

    stored = service_leases().current("job")
    assert stored["token"] == lease.token and stored["expires_at"] == 1030
    assert stored["ttl"] >= stored["expires_at"]  # TTL only cleans up, later


def test_acquire__held__raises_lease_taken_naming_holder(dynamo):
    first = service_leases().acquire("job", seconds=30, now=1000.0)

    with pytest.raises(LeaseTaken) as refused:
        service_leases().acquire("job", seconds=30, now=1029.0)

    assert refused.value.holder == first.holder
    assert refused.value.expires_at == 1030
    assert "holds the lease 'job'" in refused.value.message
    assert service_leases().current("job")["token"] == first.token


def test_acquire__holder_crashed_and_lease_lapsed__taken_over(dynamo):
    crashed = service_leases().acquire("job", seconds=30, now=1000.0)

    successor = service_leases().acquire("job", seconds=30, now=1030.5)

    assert successor.token != crashed.token
    assert service_leases().current("job")["token"] == successor.token


def test_release__foreign_token__refused_and_lease_kept(dynamo):
    crashed = service_leases().acquire("job", seconds=30, now=1000.0)
    successor = service_leases().acquire("job", seconds=30, now=1031.0)

    assert service_leases().release(crashed) is False
    assert service_leases().current("job")["token"] == successor.token
    assert service_leases().release(successor) is True
    assert service_leases().current("job") is None


def test_acquire__released__free_again_at_once(dynamo):
    service_leases().release(service_leases().acquire("job", seconds=300))

    assert service_leases().acquire("job", seconds=300)


def test_acquire__real_clock_short_lease__lapses_after_duration(dynamo):
    service_leases().acquire("job", seconds=0.05)
    time.sleep(0.1)

    assert service_leases().acquire("job", seconds=30)
