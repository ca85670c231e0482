"""``check_capacity`` at the door: a pass admitted twice on a list without re-entry, a list
over its limit, a room counter that is not the passes inside. The bad states are written
as a careless scanner would leave them (straight to the table), then the audit names them."""
import json
import uuid
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from booking.checkin.door import list_key, pass_key
from booking.dynamo.tables import CHECKINS


def test_a_clean_door_passes_and_careless_states_are_named(service):
    event = service.create_event(name="Audited", capacity=10)
    codes = [service.passes(service.book(event.id, name=f"P{i}",
                                         email=f"p{i}@example.com"))[0] for i in range(4)]
    strict = service.create_checkin_list(event.id, name="Strict")
    room = service.create_checkin_list(event.id, name="Room", occupancy_limit=2,
                                       allow_reentry=True)
    for p in codes[:2]:
        assert service.scan(room.id, p.code, nonce=uuid.uuid4().hex).status == "admitted"
    assert service.scan(strict.id, codes[0].code, nonce=uuid.uuid4().hex).status == "admitted"
    call_command("check_capacity", event.id, stdout=StringIO())  # all hold: exit 0

    table = service.store.table(CHECKINS)
    table.update(pass_key(strict.id, codes[0].pass_id), "ADD entries :one", values={":one": 1})
    table.put({**pass_key(room.id, codes[2].pass_id), "state": "inside", "entries": 1})
    table.update(list_key(room.id), "ADD inside :one", values={":one": 1})
    table.put({**pass_key(room.id, codes[3].pass_id), "state": "inside", "entries": 1})

    out = StringIO()
    with pytest.raises(CommandError):
        call_command("check_capacity", event.id, "--json", stdout=out)
    found = {v["invariant"] for v in json.loads(out.getvalue())["violations"]}
    # the passes written straight to the table were not counted either
    assert found == {"checkin_admitted_once", "checkin_room_limit", "checkin_room_counter",
                     "checkin_counts"}
