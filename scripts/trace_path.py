"""Which of booking/'s modules a warm second booking passes (issue 47's measure).

    DEBUG=true python scripts/trace_path.py [--via service|form|api] [--strategy lock_table]

In process, on moto: an event is created and booked once (warm: imports, caches, the
catalog), then a second booking is traced with ``sys.setprofile`` on the booking's own
thread: every distinct file under ``booking/`` whose Python functions ran. Printed per
folder, with the store side (``booking/strategies/``, ``booking/dynamo/``) counted apart.
Background threads (the e-mail sender, offers) are not traced: only the request's path.
"""
import argparse
import os
import re
import sys
import threading
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path.cwd()  # the checkout to measure: run from its root
BOOKING = str(ROOT / "booking") + os.sep
STORE_SIDE = ("booking/strategies/", "booking/dynamo/")
FORM = "application/x-www-form-urlencoded"  # as a browser posts it (no multipart)


def traced(call, booking: str = BOOKING) -> set[str]:
    """The files under ``booking`` (the package's folder, ending in a separator) whose
    functions ran while ``call()`` ran on this thread, relative to the checkout."""
    seen: set[str] = set()
    me, checkout = threading.get_ident(), os.path.dirname(booking.rstrip(os.sep))

    def profile(frame, event, arg):
        if event == "call" and threading.get_ident() == me:
            name = frame.f_code.co_filename
            if name.startswith(booking):
                seen.add(os.path.relpath(name, checkout))

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen


def _setup():
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(name, "testing")
    import django
    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.test.utils import setup_test_environment
    setup_test_environment()
    settings.ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
    connection.creation.create_test_db(verbosity=0)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--via", choices=("service", "form", "api"), default="service")
    parser.add_argument("--strategy", default="lock_table")
    args = parser.parse_args(argv)
    _setup()
    from django.test import Client
    from django.urls import reverse
    from moto import mock_aws

    from booking import wiring
    from booking.dynamo.provision import ensure_tables
    from harness.controls import control_service, local_store

    with mock_aws():
        store = local_store(table_prefix="trace-")
        service = control_service(store=store)
        wiring.install(service)
        ensure_tables(store, wait=False)
        event = service.create_event(name="Trace", capacity=10, strategy=args.strategy)
        client = Client()

        def book(n: int) -> None:
            email = f"person{n}@example.com"
            if args.via == "service":
                service.book(event.id, name=f"Person {n}", email=email)
            elif args.via == "form":
                page = client.get(reverse("booking:event_detail", args=[event.id]))
                token = re.search(r'name="token" value="([^"]+)"', page.content.decode())
                response = client.post(reverse("booking:event_detail", args=[event.id]),
                                       urlencode({"name": f"Person {n}", "email": email,
                                                  "token": token.group(1) if token else ""}),
                                       content_type=FORM)
                assert response.status_code in (200, 302, 303), response.status_code
            else:
                response = client.post(f"/api/v1/events/{event.id}/registrations/",
                                       f'{{"name": "Person {n}", "email": "{email}"}}',
                                       content_type="application/json",
                                       HTTP_IDEMPOTENCY_KEY=f"trace-{n:04d}")
                assert response.status_code == 201, response.content

        book(1)  # warm
        if args.via == "form":  # the page's GET is not the booking: fetch it first
            page = client.get(reverse("booking:event_detail", args=[event.id]))
            token = re.search(r'name="token" value="([^"]+)"', page.content.decode())

            def second() -> None:
                response = client.post(reverse("booking:event_detail", args=[event.id]),
                                       urlencode({"name": "Person 2",
                                                  "email": "person2@example.com",
                                                  "token": token.group(1) if token else ""}),
                                       content_type=FORM)
                assert response.status_code in (200, 302, 303), response.status_code
            files = traced(second)
        else:
            files = traced(lambda: book(2))

    by_folder: dict[str, list[str]] = defaultdict(list)
    for name in sorted(files):
        parts = name.split(os.sep)
        by_folder["/".join(parts[:2]) if len(parts) > 2 else parts[0]].append(name)
    for folder, names in sorted(by_folder.items()):
        print(f"{len(names):3d}  {folder}: {', '.join(Path(n).stem for n in names)}")
    store_side = [n for n in files if n.replace(os.sep, "/").startswith(STORE_SIDE)]
    print(f"\n{len(files)} modules of booking/ on a second booking via {args.via} "
          f"({args.strategy}); store side (strategies, dynamo): {len(store_side)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
