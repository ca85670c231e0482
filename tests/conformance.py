"""The conformance kit: which strategies each shared suite runs, read from the registry.

A strategy added to ``booking.strategies.STRATEGIES`` joins every suite below with no
test edited (docs/development/adding-a-strategy.md):

- ``AT_ONCE`` (strategies whose ``book`` answers at once; ``streams`` answers "pending"
  and has suites of its own): the contract suite (tests/strategies/test_common.py), lost
  answers (test_ambiguous_retries.py), requests per booking and per rejection
  (tests/service/test_requests.py), the races from processes and over HTTP
  (tests/concurrency/test_booking_races.py, test_http_signup_race.py), the stateful
  machine with faults (tests/service/test_stateful_booking.py), the holds
  (tests/waitlist/test_holds.py).
- ``ALL``: the order races (tests/concurrency/test_order_races.py, beside the unguarded
  control), the orders' state machine (tests/orders/test_stateful_orders.py), the
  waiting list's orders (tests/waitlist/test_waitlist_orders.py), and the torture run
  (tests/concurrency/test_torture.py: every strategy, plain and order events, with
  faults, then the audit of every event).
"""
from booking.strategies import STRATEGIES
from booking.strategies.contract import Seats

ALL = tuple(STRATEGIES)
AT_ONCE = tuple(name for name, cls in STRATEGIES.items()
                if cls.place_in_line is Seats.place_in_line)
