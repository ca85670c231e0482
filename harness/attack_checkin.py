"""The attack run's replays of the fourth round at the door (``harness/attack.py``;
docs/security-fourth-round.md, "Fourth round: the door"): F2 a queue over the body
limit, F3 what counts cost, F5 a read token's scan, F6 a client's ``scanned_at`` on an
online scan, F8 lax check-in input, F12 a pass issued before a ``SECRET_KEY`` rotation.

All on one event of beta's with one list and six booked passes, made in one management
shell; each replay a few requests (F3 and F12 one shell each)."""
import json
import secrets
import time
from datetime import datetime, timezone

from harness.attack_api import PROBLEM_JSON, call

SETUP = """
import json
from booking.wiring import get_booking_service
svc = get_booking_service()
door = svc.create_checkin_list({event_id!r}, name="Door")
codes = [svc.passes(svc.book({event_id!r}, name=f"Guest {{n}}",
                             email=f"guest{{n}}@door.example.com"))[0].code for n in range(6)]
print(json.dumps({{"list": door.id, "codes": codes}}))
"""

# F3: the DynamoDB requests (and items they read) of one read of the list's counts, with
# 6 booked, then with 36: the same, however many are booked.
COUNTS_COST = """
import json
from booking.wiring import get_booking_service
svc = get_booking_service()

def cost():
    seen = []
    def count(parsed, **_):
        seen.append(parsed.get("Count", 1 if "Item" in parsed else 0)
                    + sum(len(i) for i in parsed.get("Responses", {{}}).values()))
    events = svc.store.client.meta.events
    events.register("after-call.dynamodb", count)
    try:
        svc.checkin_list({list_id!r})
    finally:
        events.unregister("after-call.dynamodb", count)
    return [len(seen), sum(seen)]

cost()  # the first read of the process warms what every later one shares
few = cost()
for n in range(30):
    svc.book({event_id!r}, name=f"More {{n}}", email=f"more{{n}}@door.example.com")
print(json.dumps({{"few": few, "many": cost()}}))
"""

# F12: the site's key rotated (a new SECRET_KEY, the old one in SECRET_KEY_FALLBACKS):
# a pass the site issued before still scans.
ROTATED = """
import json, uuid
from booking.wiring import get_booking_service
answer = get_booking_service().scan({list_id!r}, {code!r}, nonce=uuid.uuid4().hex)
print(json.dumps({{"status": answer.status}}))
"""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


class DoorReplays:
    def __init__(self, run):
        self.run, self.port, self.ready = run, run.site.port, None

    def _door(self) -> dict:
        """{"event", "list", "codes"}: made once, by the first replay that needs it."""
        if self.ready is None:
            event_id = self.run.event("Door replays", organizer="beta")
            made = json.loads(self.run.site.manage(
                "shell", "-c", SETUP.format(event_id=event_id)).strip().splitlines()[-1])
            self.ready = {"event": event_id, **made}
        return self.ready

    def _headers(self, token: str, **extra) -> dict:
        return {"Authorization": f"Bearer {self.run.tokens[token]}",
                "Content-Type": "application/json", **extra}

    def _post(self, path: str, body, token: str = "beta-admin-write", **extra):
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        return call(self.port, "POST", path, raw, self._headers(token, **extra))

    def _counts(self) -> dict:
        door = self._door()
        return call(self.port, "GET", f"/api/v1/checkin-lists/{door['list']}/",
                    headers=self._headers("beta-admin-read"))[2] or {}

    def steps(self) -> list:
        return [self.read_token_scans, self.client_time, self.strict_input,
                self.large_queue, self.counts_cost, self.rotated_key]

    def read_token_scans(self):
        """F5: a read token's scan answers 403 and admits nobody."""
        door = self._door()
        answer = self._post(f"/api/v1/checkin-lists/{door['list']}/scans/",
                            {"code": door["codes"][0], "nonce": secrets.token_hex(8)},
                            token="beta-admin-read")
        admitted = self._counts().get("admitted")
        self.run.report("F5 read-scope tokens post scans",
                        answer[:2] == (403, PROBLEM_JSON) and admitted == 0,
                        f"a read token's scan {answer[0]} {answer[1]}; admitted {admitted}")

    def client_time(self):
        """F6: an online scan naming its own ``scanned_at`` is refused; one without is
        stamped with the server's time."""
        door = self._door()
        path = f"/api/v1/checkin-lists/{door['list']}/scans/"
        dated = self._post(path, {"code": door["codes"][0], "nonce": secrets.token_hex(8),
                                  "scanned_at": "2020-01-01T00:00:00+00:00"})
        plain = self._post(path, {"code": door["codes"][0], "nonce": secrets.token_hex(8)})
        stamped = (plain[2] or {}).get("scanned_at") or ""
        self.run.report("F6 an online scan's scanned_at trusted",
                        dated[:2] == (400, PROBLEM_JSON) and plain[0] == 200
                        and (plain[2] or {}).get("status") == "admitted"
                        and stamped[:10] == _now()[:10],
                        f"dated 2020: {dated[0]} {dated[1]}; undated {plain[0]} "
                        f"{(plain[2] or {}).get('status')} at {stamped[:19] or '?'}")

    def strict_input(self):
        """F8: "3", 3.0, "yes" and unknown fields refused on lists and scans, nothing
        stored."""
        door = self._door()
        lists = f"/api/v1/events/{door['event']}/checkin-lists/"
        bad_lists = [{"occupancy_limit": "3"}, {"occupancy_limit": 3.0},
                     {"allow_reentry": "yes"}, {"allow_reentry": 1}, {"colour": "red"}]
        answers = [self._post(lists, {"name": "Lax", **bad},
                              **{"Idempotency-Key": secrets.token_hex(8)})
                   for bad in bad_lists]
        scan = self._post(f"/api/v1/checkin-lists/{door['list']}/scans/",
                          {"code": door["codes"][1], "nonce": secrets.token_hex(8),
                           "colour": "red"})
        deep = self._post(lists, b"[" * 3000 + b"]" * 3000,
                          **{"Idempotency-Key": secrets.token_hex(8)})
        listed = call(self.port, "GET", lists, headers=self._headers("beta-admin-read"))[2]
        stored = len((listed or {}).get("results", []))
        wrong = [a[0] for a in (*answers, scan, deep) if a[:2] != (400, PROBLEM_JSON)]
        self.run.report("F8 lax check-in input", not wrong and stored == 1,
                        f"{len(answers) + 2 - len(wrong)} of {len(answers) + 2} refused "
                        f"with 400 problem+json" + (f", wrong: {wrong}" if wrong else "")
                        + f"; lists stored {stored}")

    def large_queue(self):
        """F2: the batch's true limits: a body over 64 KB and one over nginx's 128 KB
        answer 413 problem+json and apply nothing; 20 real scans (a part the page sends
        after splitting) answer 200 with 20 answers."""
        door = self._door()
        path = f"/api/v1/checkin-lists/{door['list']}/scans/batch/"

        def queue(n, code):
            return {"scans": [{"code": code, "direction": "entry", "nonce": secrets.token_hex(8),
                               "scanned_at": _now(), "gate": "Replay gate"} for _ in range(n)]}

        over_app = self._post(path, queue(300, door["codes"][2]))
        over_nginx = self._post(path, queue(600, door["codes"][2]))
        part = queue(20, door["codes"][3])
        for _ in range(5):  # as the page does: a busy answer (503) is sent again, same nonces
            fits = self._post(path, part)
            if fits[0] != 503:
                break
            time.sleep(1)
        answers = (fits[2] or {}).get("results", [])
        admitted = self._counts().get("admitted")
        self.run.report(
            "F2 a large offline queue never uploads",
            over_app[:2] == over_nginx[:2] == (413, PROBLEM_JSON) and fits[0] == 200
            and len(answers) == 20 and [a.get("status") for a in answers[:2]]
            == ["admitted", "already_admitted"] and admitted == 2,
            f"300 scans {over_app[0]} {over_app[1]}, 600 {over_nginx[0]} {over_nginx[1]}, "
            f"20 {fits[0]} with {len(answers)} answers; admitted after {admitted} "
            f"(one by F6, one by the 20)")

    def counts_cost(self):
        """F3: reading a list's counts costs the same with 6 booked and with 36."""
        door = self._door()
        out = self.run.site.manage("shell", "-c", COUNTS_COST.format(
            event_id=door["event"], list_id=door["list"]))
        cost = json.loads(out.strip().splitlines()[-1])
        self.run.report("F3 check-in counts cost one read per attendee",
                        cost["few"] == cost["many"] and cost["many"][0] <= 4,
                        f"(requests, items read) with 6 booked {tuple(cost['few'])}, "
                        f"with 36 {tuple(cost['many'])}")

    def rotated_key(self):
        """F12: with a new SECRET_KEY and the site's in SECRET_KEY_FALLBACKS, a pass the
        site issued before the rotation scans as admitted, not unknown_code."""
        door = self._door()
        out = self.run.site.manage_all(
            [["shell", "-c", ROTATED.format(list_id=door["list"], code=door["codes"][4])]],
            SECRET_KEY=secrets.token_urlsafe(50),
            SECRET_KEY_FALLBACKS=self.run.site.env["SECRET_KEY"])
        status = json.loads(out.strip().splitlines()[-1])["status"]
        self.run.report("F12 passes end with a SECRET_KEY rotation", status == "admitted",
                        f"a pass issued before the rotation scans as {status}")


def fourth_round(run) -> list:
    """The door's fourth-round replays ``AttackRun.run`` calls (after the organizers step)."""
    return DoorReplays(run).steps()
