"""Time-limited leases for maintenance jobs (a lock released by time).

``acquire`` is one conditional put: it succeeds if nobody holds the lease or the holder's
lease has expired (``attribute_not_exists(lease_id) OR expires_at < :now``), so a crashed
holder blocks others only until ``expires_at``. The ``ttl`` attribute lets DynamoDB clean
old items up eventually; it never decides anything, because TTL deletion runs late (up to
48 hours). ``release`` is a conditional delete on the holder's random token, so a holder
whose lease lapsed and was taken over cannot release the new holder's lease.

Clocks: ``expires_at`` is this host's wall clock; hosts sharing leases need synchronized
clocks (NTP), and a lease should last much longer than the expected clock skew.
"""
import os
import socket
import time
import uuid
from dataclasses import dataclass
from decimal import Decimal

from booking.dynamo.access import ConditionFailed, Store, StoreError
from booking.dynamo.expressions import attr
from booking.dynamo.tables import LEASES
from booking.errors import LeaseHeld

class LeaseTaken(StoreError, LeaseHeld):
    """Someone else holds the lease (``holder``) until ``expires_at`` (epoch seconds)."""

    def __init__(self, message: str, *, holder: str | None = None,
                 expires_at: float | Decimal | None = None) -> None:
        LeaseHeld.__init__(self, message, holder=holder, expires_at=expires_at)


# How long after expiry DynamoDB's TTL may delete the item (clean-up only).
TTL_GRACE_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Lease:
    lease_id: str
    token: str
    holder: str
    expires_at: float


def _holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class Leases:
    """The leases table of one store."""

    def __init__(self, store: Store):
        self.table = store.table(LEASES)

    def acquire(self, lease_id: str, *, seconds: float, now: float | None = None) -> Lease:
        """Take the lease for ``seconds``; raise ``LeaseTaken`` while someone else holds it."""
        now = time.time() if now is None else now
        lease = Lease(lease_id, uuid.uuid4().hex, _holder(), now + seconds)
        item = {"lease_id": lease_id, "token": lease.token, "holder": lease.holder,
                "acquired_at": _seconds(now), "expires_at": _seconds(lease.expires_at),
                "ttl": int(lease.expires_at) + TTL_GRACE_SECONDS}
        try:
            self.table.put(item, condition=attr("lease_id").not_exists()
                           | attr("expires_at").lt(_seconds(now)))
        except ConditionFailed as refused:
            held = refused.old_item or {}
            until = held.get("expires_at")
            raise LeaseTaken(
                f"Another run ({held.get('holder', 'unknown')}) holds the lease '{lease_id}' until "
                f"{_clock(until)}. Try again after it finishes; a crashed run's lease lapses then.",
                holder=held.get("holder"), expires_at=until) from None
        return lease


    def release(self, lease: Lease) -> bool:
        """Give the lease back; False if it was no longer ours (it lapsed and was taken)."""
        try:
            self.table.delete({"lease_id": lease.lease_id},
                              condition=attr("token").eq(lease.token))
        except ConditionFailed:
            return False
        return True


    def current(self, lease_id: str) -> dict | None:
        """The stored lease item (possibly expired), or None."""
        return self.table.get({"lease_id": lease_id})


def _seconds(epoch: float) -> Decimal:
    return Decimal(f"{epoch:.3f}")  # DynamoDB numbers: boto3 takes Decimal, not float


def _clock(epoch: float | Decimal | None) -> str:
    if epoch is None:
        return "an unknown time"
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(float(epoch)))
