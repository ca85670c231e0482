"""The site as ``config.wsgi`` serves it, with the test graph (``control_wsgi``) and a
door that scans lists named ``careless...`` by reading, then writing
(``harness/checkin_controls.py``), so one gunicorn serves both sides of the door's race."""
from tests.concurrency.control_wsgi import application  # noqa: F401 - the served app

from booking import wiring  # noqa: E402
from harness.checkin_controls import careless_door  # noqa: E402

careless_door(wiring.get_booking_service(), race_delay_ms=50)
