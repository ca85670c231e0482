"""A live API: the site served over HTTP on 127.0.0.1 by a threaded server in this
process, on DynamoDB Local (``server_store``), for the races and schemathesis."""
import threading

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

from booking.mail import sender as booking_mail


class QuietHandler(WSGIRequestHandler):
    # Headers and body are two writes: with Nagle's algorithm a kept-alive client (the
    # schemathesis session) waits 40 ms per answer for its own delayed ACK.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass


@pytest.fixture
def live_api(server_store, settings):
    """A threaded HTTP server on 127.0.0.1 serving the site (this process's service)."""
    settings.BOOKING_SIGNUP_RATE = settings.BOOKING_SIGNUP_EMAIL_RATE = "off"
    server = ThreadedWSGIServer(("127.0.0.1", 0), QuietHandler, allow_reuse_address=False)
    server.daemon_threads = True
    server.set_app(WSGIHandler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    booking_mail.flush()
