"""The site as ``control_wsgi`` serves it, with the careless access codes in place of the
product's (``harness.controls.CarelessAccessCodes``: uses checked by a read, then counted
without a condition), so the access-code race can show it catches a limit overrun."""
from tests.concurrency.control_wsgi import application  # noqa: F401 - the site itself

from booking import wiring  # noqa: E402
from harness.controls import with_careless_codes  # noqa: E402

with_careless_codes(wiring.get_booking_service())
