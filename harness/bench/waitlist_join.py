"""Time the answer to a request to join the waiting list by what the address is: new, in
line, or booked. The answers must not tell them apart (docs/waiting-list.md, "no
disclosure"): the same page, the same store requests, the same time within noise.

    DEBUG=true .venv/bin/python -m harness.bench.waitlist_join [--rounds 300]

Starts its own DynamoDB Local (in memory), posts the event page's waiting-list form
through Django's whole request stack (middleware, CSRF off as in tests, rate limits off),
in rounds over the three kinds of address (in a shuffled order each round, so that no
kind always comes first), each with a fresh form token, and prints
each kind's median, p10 and p90 in milliseconds. Nothing is asserted: figures go to
docs/benchmarks.md with this command.
"""
import argparse
import os
import random
import statistics
import time
import uuid
from urllib.parse import urlencode

KINDS = {"new": "new{n}@example.com", "in line": "cy@example.com", "booked": "ada@example.com"}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    rounds = parser.parse_args(argv).rounds
    os.environ.update(DJANGO_SETTINGS_MODULE="config.settings", BOOKING_SIGNUP_RATE="off",
                      BOOKING_SIGNUP_EMAIL_RATE="off",
                      EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend")
    import django

    django.setup()
    from django.test import Client
    from django.urls import reverse

    from booking import wiring
    from booking.dynamo.provision import ensure_tables
    from booking.mail import sender as booking_mail
    from booking.web import tokens
    from harness.controls import control_service, local_store
    from localdynamo import process as server_process

    server = server_process.start()
    try:
        store = local_store(server.url, table_prefix=f"bench{uuid.uuid4().hex[:8]}-")
        ensure_tables(store)
        service = control_service(store=store)
        wiring.install(service)
        event = service.create_event(name="Timing", capacity=1, strategy="lock_table")
        service.book(event.id, name="Ada", email="ada@example.com")
        service.join_waiting_list(event.id, name="Cy", email="cy@example.com")
        client, path = Client(HTTP_HOST="127.0.0.1"), reverse("booking:waitlist_join", args=[event.id])
        times = {kind: [] for kind in KINDS}
        for n in range(rounds + 10):  # the first 10 rounds warm up
            for kind, address in random.sample(list(KINDS.items()), len(KINDS)):
                body = urlencode({"name": "Mallory", "email": address.format(n=n),
                                  "token": tokens.new_form_token(event.id)})
                started = time.perf_counter()
                response = client.post(path, body,
                                       content_type="application/x-www-form-urlencoded")
                elapsed = (time.perf_counter() - started) * 1000
                assert response.status_code == 200, response.content.decode()[-1500:]
                booking_mail.flush()  # the e-mail goes after the answer: not timed
                if n >= 10:
                    times[kind].append(elapsed)
        print(f"{'ADDRESS':<10}{'N':>6}{'P10ms':>9}{'P50ms':>9}{'P90ms':>9}")
        for kind, found in times.items():
            deciles = statistics.quantiles(found, n=10)
            print(f"{kind:<10}{len(found):>6}{deciles[0]:>9.2f}{statistics.median(found):>9.2f}"
                  f"{deciles[-1]:>9.2f}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
