"""The torture run's door checks on hand-written histories: true ones (repeats, lost
answers, re-entry) pass; each anomaly is found."""
from harness.torture import door
from harness.torture.checker import CheckResult

SETUP = {"event_id": "e" * 32, "codes": [], "careless": False,
         "lists": {"strict": {"id": "s", "limit": None, "reentry": False},
                   "room": {"id": "r", "limit": 2, "reentry": True}}}


def scan(name, seat, direction, nonce, invoked, completed, status):
    return {"operation": "scan", "step": "scan", "list": name, "seat": seat,
            "direction": direction, "nonce": nonce, "invoked": invoked,
            "completed": completed, "process": 0,
            "outcome": "ok" if status else "unknown", "code": None if status else "x",
            "status": status, "first_gate": None}


def final(records, *, inside=(), counter=None, entries=None):
    rows = {name: {r["nonce"]: r["status"] for r in records if r["list"] == name and r["status"]}
            for name in ("strict", "room")}
    return {"strict": {"passes": {f"p-{s}": {"state": "inside", "entries": n}
                                  for s, n in (entries or {}).items()},
                       "counter": 0, "scans": rows["strict"]},
            "room": {"passes": {f"p-{s}": {"state": "inside", "entries": 1} for s in inside},
                     "counter": len(inside) if counter is None else counter,
                     "scans": rows["room"]}}


def kinds(records, state):
    result = CheckResult()
    door.check(result, SETUP, records, state)
    return sorted(a.kind for a in result.anomalies)


def test_a_true_history_with_a_lost_answer_a_repeat_and_reentry_passes():
    records = [
        scan("room", 0, "entry", "a", 1.0, 1.5, None),  # lost answer: admitted meanwhile
        scan("room", 0, "exit", "b", 2.0, 2.5, "exited"),
        scan("room", 0, "entry", "a", 3.0, 3.5, "admitted"),  # the repeat: the first answer
        scan("room", 1, "entry", "c", 3.0, 3.2, "admitted"),
        scan("room", 2, "entry", "d", 3.1, 3.3, "admitted"),
        scan("room", 3, "entry", "e", 3.4, 3.6, "room_full"),
        scan("strict", 0, "entry", "f", 1.0, 1.1, "admitted"),
        scan("strict", 0, "entry", "g", 1.05, 1.2, "already_admitted"),
    ]
    assert kinds(records, final(records, inside=(1, 2), entries={0: 1})) == []


def test_over_the_limit_admitted_twice_counter_and_false_answers_found():
    records = [
        scan("room", 0, "entry", "a", 1.0, 1.1, "admitted"),
        scan("room", 1, "entry", "b", 1.0, 1.2, "admitted"),
        scan("room", 2, "entry", "c", 1.0, 1.3, "admitted"),
        scan("strict", 0, "entry", "d", 1.0, 1.1, "admitted"),
        scan("strict", 0, "entry", "e", 1.0, 1.1, "admitted"),
        scan("strict", 1, "entry", "f", 1.0, 1.1, "already_admitted"),
        scan("strict", 2, "entry", "g", 1.0, 1.1, "admitted"),
        scan("strict", 2, "entry", "g", 2.0, 2.1, "already_admitted"),
    ]
    found = kinds(records, final(records, inside=(0, 1, 2), counter=2, entries={0: 2}))
    assert found == ["door_admitted_twice", "door_admitted_twice", "door_answer_changed",
                     "door_counter", "door_false_answer", "door_over_limit",
                     "door_over_limit"]
