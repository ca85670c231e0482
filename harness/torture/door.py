"""The torture run at the door: scans (entries, exits, repeated nonces, answers lost by the
fault proxy) from every process while the bookings run, and the checks of their history.

The runner books a door event (``PASSES`` one-seat passes) and makes two lists: ``strict``
(no re-entry: each pass admitted at most once) and ``room`` (re-entry, an occupancy limit
of ``ROOM_LIMIT``). Each process runs ``SCANNERS`` scanner threads next to its booking
threads; each scan is a record (``operation`` "scan"). The checks:

- ``door_answer_changed``: one nonce answered two different ways;
- ``door_admitted_twice``: a pass admitted by two nonces on ``strict`` (answers or the
  stored pass: ``entries``);
- ``door_over_limit``: more passes certainly inside ``room`` at one instant than its limit
  (from an admission's answer to its next exit's sending), or stored inside at the end;
  ``door_counter``: the room's counter is not the passes stored inside;
- ``door_false_answer``: an ``already_admitted`` on ``strict`` before any admission of that
  pass could have happened, or an answer that its stored scan row contradicts.

With ``careless`` the lists are scanned by ``harness/checkin_controls.ReadThenWriteDoor``
(read, then write): the checks must find it.
"""
import random
import threading
import time
import uuid

PASSES = 6
ROOM_LIMIT = 3
SCANNERS = 3  # scanner threads per process
REPEAT = 0.2  # how often a scanner sends one of its recent scans again (same nonce)
EXIT = 0.4
OK, UNKNOWN = "ok", "unknown"


def set_up(service, *, careless: bool, patiently) -> dict:
    """The door event, its passes' codes and the two lists (names of the careless control
    when ``careless``)."""
    from harness.checkin_controls import CARELESS

    prefix = f"{CARELESS} " if careless else ""
    event = patiently(lambda: service.create_event(name="Torture door", capacity=PASSES,
                                                   strategy="lock_table"))
    codes = []
    for n in range(PASSES):
        booked = patiently(lambda n=n: service.book(
            event.id, name=f"Guest {n}", email=f"guest{n}@example.com",
            request_id=f"door-{event.id}-{n}"))
        codes.append(service.issued_passes(booked)[0].code)
    strict = patiently(lambda: service.create_checkin_list(
        event.id, name=f"{prefix}strict", request_id=f"door-strict-{event.id}"))
    room = patiently(lambda: service.create_checkin_list(
        event.id, name=f"{prefix}room", allow_reentry=True, occupancy_limit=ROOM_LIMIT,
        request_id=f"door-room-{event.id}"))
    return {"event_id": event.id, "codes": codes, "careless": careless,
            "lists": {"strict": {"id": strict.id, "limit": None, "reentry": False},
                      "room": {"id": room.id, "limit": ROOM_LIMIT, "reentry": True}}}


def scan_until(service, door: dict, process: int, scanner: int, seed: int,
               stop: threading.Event) -> list[dict]:
    """One scanner thread: random scans until ``stop``; a record per invocation."""
    from booking.errors import BookingError

    rng = random.Random(f"{seed}-door-{process}-{scanner}")
    recent: list[tuple] = []
    records = []
    while not stop.is_set():
        if recent and rng.random() < REPEAT:
            scan = rng.choice(recent)
        else:
            scan = (rng.choice(sorted(door["lists"])), rng.randrange(PASSES),
                    "exit" if rng.random() < EXIT else "entry", uuid.uuid4().hex)
            recent = (recent + [scan])[-20:]
        name, seat, direction, nonce = scan
        invoked, answer, code = time.time(), None, None
        try:
            answer = service.scan(door["lists"][name]["id"], door["codes"][seat],
                                  direction=direction, nonce=nonce, gate=f"p{process}s{scanner}")
        except BookingError as error:
            code = error.code
        except Exception as error:  # noqa: BLE001 - the history must hold every outcome
            code = f"error:{type(error).__name__}"
        records.append({"operation": "scan", "step": "scan", "list": name, "seat": seat,
                        "direction": direction, "nonce": nonce, "invoked": invoked,
                        "completed": time.time(), "process": process,
                        "outcome": OK if answer is not None else UNKNOWN, "code": code,
                        "status": answer.status if answer else None,
                        "first_gate": answer.first_gate if answer else None})
    return records


def final_state(service, door: dict, patiently) -> dict:
    """Per list: each pass's stored state and entries, the room counter, each scan row."""
    found = {}
    for name, lst in door["lists"].items():
        items = patiently(lambda lst=lst: service.checkin.door.pass_items(lst["id"]))
        rows = patiently(lambda lst=lst: service.checkin.door.scans(lst["id"]))
        found[name] = {
            "passes": {item["sk"][len("pass#"):]: {"state": item.get("state"),
                                                   "entries": int(item.get("entries", 0))}
                       for item in items},
            "counter": patiently(lambda lst=lst: service.checkin.door.room_counter(lst["id"])),
            "scans": {row.nonce: row.status for row in rows}}
    return found


def check(result, door: dict, records: list[dict], final: dict) -> None:
    """Add the door's anomalies to ``result`` (``checker.CheckResult``)."""
    event_id = door["event_id"]
    answered: dict[tuple, set] = {}
    for record in records:
        if record["outcome"] == OK:
            answered.setdefault((record["list"], record["nonce"]), set()).add(record["status"])
    for (name, nonce), statuses in answered.items():
        if len(statuses) > 1:
            result.add("door_answer_changed", event_id,
                       f"{name}: nonce {nonce} answered {sorted(statuses)}")
        stored = final[name]["scans"].get(nonce)
        if stored not in statuses:
            result.add("door_false_answer", event_id,
                       f"{name}: nonce {nonce} answered {sorted(statuses)}, stored {stored}")
    _check_strict(result, event_id, records, final["strict"])
    limit = door["lists"]["room"]["limit"]
    _check_room(result, event_id, records, final["room"], limit)


def _check_strict(result, event_id, records, final) -> None:
    mine = [r for r in records if r["list"] == "strict"]
    for seat in range(PASSES):
        seat_records = [r for r in mine if r["seat"] == seat and r["direction"] == "entry"]
        admitted = {r["nonce"] for r in seat_records if r["status"] == "admitted"}
        if len(admitted) > 1:
            result.add("door_admitted_twice", event_id,
                       f"strict: pass {seat} admitted by {len(admitted)} scans")
        possible = [r["invoked"] for r in seat_records
                    if r["status"] == "admitted" or r["outcome"] == UNKNOWN]
        for record in seat_records:
            if record["status"] == "already_admitted" and not any(
                    at < record["completed"] for at in possible):
                result.add("door_false_answer", event_id,
                           f"strict: pass {seat} already_admitted before any admission")
    for pass_id, state in final["passes"].items():
        if state["entries"] > 1:
            result.add("door_admitted_twice", event_id,
                       f"strict: pass {pass_id} stored with {state['entries']} entries")


def _check_room(result, event_id, records, final, limit: int) -> None:
    """Passes certainly inside at once. An admission (first answered at ``completed``)
    certainly holds its pass inside from then until the first sending of any exit of that
    pass that may have taken effect after it (answered after the admission was sent, or
    never answered); a pass's intervals are merged, so one person counts once."""
    scans: dict[str, dict] = {}  # per nonce: its first answer, its first sending
    for record in (r for r in records if r["list"] == "room"):
        scan = scans.setdefault(record["nonce"], {
            "seat": record["seat"], "direction": record["direction"], "status": None,
            "invoked": record["invoked"], "completed": float("inf")})
        scan["invoked"] = min(scan["invoked"], record["invoked"])
        if record["outcome"] == OK and record["completed"] < scan["completed"]:
            scan["status"], scan["completed"] = record["status"], record["completed"]
    end_of_run = max((r["completed"] for r in records), default=0.0) + 1.0
    points = []
    for seat in range(PASSES):
        mine = [s for s in scans.values() if s["seat"] == seat]
        exits = [s for s in mine if s["direction"] == "exit"
                 and s["status"] in ("exited", None)]
        intervals = []
        for admission in (s for s in mine if s["status"] == "admitted"):
            until = min((e["invoked"] for e in exits if e["completed"] > admission["invoked"]),
                        default=end_of_run)
            if until > admission["completed"]:
                intervals.append((admission["completed"], until))
        merged: list[list[float]] = []
        for begin, until in sorted(intervals):
            if merged and begin <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], until)
            else:
                merged.append([begin, until])
        for begin, until in merged:
            points += [(begin, 1), (until, -1)]
    inside = peak = 0
    for _, change in sorted(points, key=lambda p: (p[0], p[1])):
        inside += change
        peak = max(peak, inside)
    if peak > limit:
        result.add("door_over_limit", event_id,
                   f"room: {peak} certainly inside at once, limit {limit}")
    stored_inside = sum(1 for state in final["passes"].values() if state["state"] == "inside")
    if stored_inside > limit:
        result.add("door_over_limit", event_id,
                   f"room: {stored_inside} stored inside at the end, limit {limit}")
    if final["counter"] != stored_inside:
        result.add("door_counter", event_id,
                   f"room: counter {final['counter']}, {stored_inside} stored inside")
