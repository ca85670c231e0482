"""manage.py create_access_codes."""
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError


def run(*args):
    out = StringIO()
    call_command("create_access_codes", *args, stdout=out, stderr=StringIO())
    return out.getvalue().split()


def test_count__prints_the_generated_codes_one_a_line(service):
    event = service.create_event(name="Summit", capacity=10, ticket_types={"day": [],
                                                                           "vip": []})

    printed = run(event.id, "--count", "3", "--max-uses", "2", "--ticket-type", "vip",
                  "--valid-until", "2099-01-01T00:00")

    stored = {c.code: c for c in service.access_codes(event.id)}
    assert sorted(printed) == sorted(stored) and len(printed) == 3
    assert all(c.max_uses == 2 and c.ticket_types == ("vip",) for c in stored.values())
    assert all(c.valid_until.year == 2099 for c in stored.values())


def test_bad_input__command_error_nothing_stored(service):
    event = service.create_event(name="Summit", capacity=10)
    with pytest.raises(CommandError, match="ticket type"):
        run(event.id, "--ticket-type", "nope")
    with pytest.raises(CommandError):
        run("0" * 32)
    assert service.access_codes(event.id) == []
