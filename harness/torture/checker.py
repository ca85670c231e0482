"""Judge a torture run's history against the final state (the product's five promises).

Input: every invocation's record (``worker.invoke``), the events, the final state read
after all clients stopped, and the watcher's peak counts. Registration ids are unique per
execution and every registration stores the request id that made it, so a stored or
returned registration names exactly which execution produced it.

Checks (each finding is an ``Anomaly`` of one kind), per quota on events with orders (the
capacity is the quota ``capacity``; a plain registration is one seat of it):

- ``overbooked``: more seats stored, counted or ever seen confirmed than a quota holds;
- ``registered_twice``: one person under two registrations of one event;
- ``counter_mismatch`` / ``audit``: the strategy's count (of a quota) or derived data
  disagree with the stored registrations (``BookingService.audit``);
- ``order_not_whole``: a stored order is not what its request asked minus the parts freed
  since (every partial cancellation answered ok, any of those whose outcome is unknown),
  or a booking answered ok with other tickets than it asked;
- ``partial_freed_other``: a cancellation of part of an order answered ok with other
  tickets than it asked to free;
- ``full_with_room``: a "full" answer naming a quota the order does not draw on, or one
  that had room for the order at every moment of the answer even counting every order
  that may have held seats then;
- ``lost``: a booking answered ok is gone, and no cancellation that answered ok with it,
  nor one whose outcome is unknown, can have removed it (a ``streams`` request whose
  rejection e-mail went out is replaced by the person's next request: that is not lost);
- ``cancelled_but_stored``: a registration that a cancellation answered ok with is stored;
- ``refused_but_made``: a registration (stored, or returned by a cancellation) whose
  request only ever got definite refusals (a false "full" / "already registered");
- ``unexplained``: such a registration made by no booking request of that person;
- ``executed_twice``: one request answered ok with two different registrations;
- ``answers_not_whole``: a stored order whose answers are missing or not those its request
  sent (its note, and a name per pass for at least the seats it holds), or answers left
  without their order (cancelled, or rejected with its "no seat" e-mail sent);
- ``answer_changed``: a repeat, sent after the request answered ok, got a refusal;
- ``wrong_registration``: an ok answer carrying another person's, event's or request's
  registration;
- ``reused_id_ran``: a request id that had taken effect (answered ok) was reused for
  other content and not refused (a refused request wrote nothing: its id is free);
- ``executed_twice`` also covers a repeat that made a second registration (for example
  after the first was cancelled): one request id, two registrations seen anywhere;
- ``mail_twice`` / ``mail_missing``: an e-mail (confirmation of a registration known to
  have been made, notice of a cancellation answered ok) sent more or fewer than once,
  counted through the run's test mail backend after the worker's last pass.

Unknown outcomes are resolved by the final state: an unknown booking applied when any
registration made by its request was seen (stored, returned, or cancelled); an unknown
cancellation may explain a missing registration of its person.
"""
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field

from .worker import FAIL, OK, UNKNOWN

EXCERPT_LINES = 14
CAPACITY = "capacity"  # the quota that is the event's own capacity
PLAIN = {"admission": 1}  # the tickets of a plain registration
SUBSETS_TRIED = 12  # unknown partial cancellations of one order whose subsets are tried


@dataclass(frozen=True)
class Anomaly:
    kind: str
    event_id: str
    detail: str
    email: str | None = None
    request_id: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class CheckResult:
    anomalies: list[Anomaly] = field(default_factory=list)
    unknown_applied: int = 0
    unknown_not_applied: int = 0
    removals_by_unknown_cancel: int = 0

    def add(self, kind, event_id, detail, email=None, request_id=None):
        self.anomalies.append(Anomaly(kind, event_id, detail, email, request_id))

    def counts(self) -> dict:
        return dict(Counter(a.kind for a in self.anomalies))


def check(records: list[dict], events: list[dict], final: dict, peaks: dict, *,
          mails: dict | None = None, owed: list | None = None,
          door: dict | None = None) -> CheckResult:
    """``mails``: message id -> e-mails sent (None: the run counted none, skip the check);
    ``door``: the run's scans (``harness/torture/door.py``), None for a run without."""
    result = CheckResult()
    if door is not None:
        from . import door as door_checks

        door_checks.check(result, door["setup"], door["records"], door["final"])
    history = History(records)
    for event in events:
        _check_event(result, event, final[event["id"]], peaks.get(event["id"], {}))
    stored = {s["registration_id"]: (event_id, s) for event_id, state in final.items()
              for s in state["registrations"]}
    _check_acknowledged(result, history, stored, mails)
    _check_made(result, history, stored)
    _check_requests(result, history)
    _check_one_registration_per_request(result, history, stored)
    _check_orders(result, history, stored)
    for event in events:
        _check_full_answers(result, history, event, stored)
    _resolve_unknown_books(result, history, stored)
    for event in events:
        _check_answers(result, event["id"], final[event["id"]], owed or [])
    if mails is not None:
        _check_mail(result, history, stored, mails, owed or [])
    return result


class History:
    """The records indexed by request, by (event, person) and by registration returned."""

    def __init__(self, records: list[dict]):
        self.records = sorted(records, key=lambda r: r["invoked"])
        self.by_request = defaultdict(list)
        self.by_key = defaultdict(list)
        for record in self.records:
            self.by_request[record["request_id"]].append(record)
            self.by_key[(record["event_id"], record["email"])].append(record)
        self.booked = {}  # registration id -> first ok booking answer with it
        self.cancelled = set()  # registration ids some cancellation answered ok with, whole
        self.freed = defaultdict(dict)  # registration id -> {request id: part freed (ok)}
        for record in self.records:
            if record["outcome"] == OK and record["operation"] == "book":
                self.booked.setdefault(record["registration_id"], record)
            elif record["outcome"] == OK and record.get("returned_part"):
                self.freed[record["registration_id"]][record["request_id"]] = record
            elif record["outcome"] == OK:
                self.cancelled.add(record["registration_id"])

    def excerpt(self, event_id: str, email: str | None, request_id: str | None) -> list[str]:
        """The history lines around an anomaly: its person's and its request's records."""
        chosen = {id(r): r for r in self.by_key.get((event_id, email), [])}
        chosen.update({id(r): r for r in self.by_request.get(request_id, [])})
        lines = [describe(r) for r in sorted(chosen.values(), key=lambda r: r["invoked"])]
        if len(lines) > EXCERPT_LINES:
            lines = lines[:4] + [f"... {len(lines) - EXCERPT_LINES + 4} more ..."] + \
                lines[-(EXCERPT_LINES - 5):]
        return lines


def describe(record: dict) -> str:
    answer = record["outcome"] + (f" {record['code']}" if record.get("code") else "")
    if record.get("registration_id"):
        answer += f" registration={record['registration_id'][:8]}"
    if record.get("returned_tickets") and record["returned_tickets"] != PLAIN:
        answer += f" tickets={_show(record['returned_tickets'])}"
    if record.get("quota"):
        answer += f" quota={record['quota']}"
    link = f" link={record['link'][:8]}" if record.get("link") else ""
    asked = f" tickets={_show(record['tickets'])}" if record.get("tickets") else ""
    return (f"{record['invoked']:.3f}-{record['completed']:.3f} p{record['process']}"
            f"/t{record['thread']} {record['step']:<8} {record['operation']:<6} "
            f"{record['request_id']} {record['email']}{link}{asked} -> {answer}")


def _show(tickets: dict) -> str:
    return "+".join(f"{n}x{t}" for t, n in sorted(tickets.items()))


def quotas_of(event: dict) -> dict[str, int]:
    """Every quota's capacity (``capacity``: the event's own), in seats."""
    return event.get("quotas") or {CAPACITY: event["capacity"]}


def seats_of(event: dict, tickets: dict | None) -> dict[str, int]:
    """Seats an order takes from each quota (``tickets`` None: one plain seat)."""
    types = event.get("ticket_types") or {}
    seats: dict[str, int] = defaultdict(int)
    for ticket_type, quantity in (tickets or PLAIN).items():
        for quota in (CAPACITY, *types.get(ticket_type, ())):
            seats[quota] += quantity
    return dict(seats)


def seats_taken(event: dict, orders) -> dict[str, int]:
    """Seats per quota of ``orders`` (each its tickets, None for a plain seat)."""
    taken = {quota: 0 for quota in quotas_of(event)}
    for tickets in orders:
        for quota, seats in seats_of(event, tickets).items():
            taken[quota] = taken.get(quota, 0) + seats
    return taken


def _check_answers(result: CheckResult, event_id: str, state: dict, owed: list) -> None:
    """Answers ride in the order's own write: every stored order (pending or confirmed)
    has exactly the answers its request sent, and no answers outlive their order (a
    rejected ``streams`` request's only until its "no seat" e-mail went out)."""
    if "answers" not in state:
        return
    found = state["answers"]
    live = {s["registration_id"]: s for s in state["registrations"]}
    for rid, registration in live.items():
        stored = found.get(rid)
        if registration.get("status") == "rejected":
            if stored is not None and f"rejection-{registration['request_id']}" not in owed:
                result.add("answers_not_whole", event_id, "a rejected request's answers "
                           "outlived its rejection e-mail", registration["email"],
                           registration["request_id"])
            continue
        request_id = registration["request_id"]
        seats = sum((registration.get("tickets") or {"admission": 1}).values())
        passes = (stored or {}).get("pass_answers", [])
        whole = stored is not None and stored["answers"] == {"note": request_id} and \
            len(passes) >= seats and passes == [{"pass_name": f"{request_id}#{n}"}
                                               for n in range(len(passes))]
        if not whole:
            result.add("answers_not_whole", event_id, f"answers {stored!r}",
                       registration["email"], request_id)
    for rid in set(found) - set(live):
        result.add("answers_not_whole", event_id, f"answers of a registration gone ({rid})")


def _check_event(result: CheckResult, event: dict, state: dict, peak: dict) -> None:
    event_id = event["id"]
    everyone = state["registrations"]
    # streams: pending and rejected registrations are stored but hold no seat.
    stored = [s for s in everyone if s.get("status", "confirmed") == "confirmed"]
    undecided = sum(s.get("status") == "pending" for s in everyone)
    if undecided:
        result.add("undecided", event_id, f"{undecided} still pending after the decider's "
                   "last pass")
    taken = seats_taken(event, [s.get("tickets") for s in stored])
    counters = state.get("quotas") or {CAPACITY: state["confirmed"]}
    peaks = {CAPACITY: peak, **peak.get("quotas", {})}
    for quota, capacity in quotas_of(event).items():
        _check_quota(result, event_id, quota, capacity, taken.get(quota, 0),
                     counters.get(quota, 0), peaks.get(quota) or {})
    for email, count in Counter(s["email"] for s in everyone).items():
        if count > 1:
            result.add("registered_twice", event_id, f"{count} registrations", email)
    if event.get("code"):
        _check_code(result, event_id, event["code"], everyone, state.get("code_uses", {}),
                    peak.get("code_uses") or {})
    for violation in state["violations"]:
        result.add("audit", event_id, violation)


def _check_code(result: CheckResult, event_id: str, code: dict, everyone: list[dict],
                uses: dict, peak: dict) -> None:
    """The access code: at most ``max_uses`` orders hold it (pending ones included: a
    use is taken at acceptance), at the end and whenever the watcher looked (its count of
    uses too: cancellations could hide an overrun by the end), and its stored ``uses`` is
    their number at the end."""
    holders = sum(s.get("access_code") == code["code"] and s.get("status") != "rejected"
                  for s in everyone)
    most = max(peak.get("uses", 0), peak.get("holders", 0))
    if most > code["max_uses"]:
        result.add("code_over_limit", event_id,
                   f"{most} uses of {code['code']} seen during the run, which allows "
                   f"{code['max_uses']}")
    elif holders > code["max_uses"]:
        result.add("code_over_limit", event_id,
                   f"{holders} orders hold {code['code']}, which allows {code['max_uses']}")
    if uses.get(code["code"], 0) != holders:
        result.add("code_uses_wrong", event_id,
                   f"{code['code']} counts {uses.get(code['code'], 0)} uses, {holders} "
                   "orders hold it")


def _check_quota(result: CheckResult, event_id: str, quota: str, capacity: int, stored: int,
                 counter: int, peak: dict) -> None:
    """One quota: never over its capacity (stored, counted, seen), its counter true."""
    name = "" if quota == CAPACITY else f"quota {quota}: "
    if stored > capacity:
        result.add("overbooked", event_id, f"{name}{stored} stored for {capacity} seats")
    if counter > capacity:
        result.add("overbooked", event_id, f"{name}counter {counter} for {capacity} seats")
    seen = max(peak.get("confirmed", 0), peak.get("stored", 0))
    if seen > capacity:
        result.add("overbooked", event_id, f"{name}{seen} confirmed seen during the run "
                   f"(at {peak['at']:.3f}) for {capacity} seats")
    if counter != stored:
        result.add("counter_mismatch", event_id, f"{name}counter says {counter}, "
                   f"{stored} stored")


def _check_acknowledged(result: CheckResult, history: History, stored: dict,
                        mails: dict | None = None) -> None:
    for registration_id, booked in history.booked.items():
        event_id, email = booked["event_id"], booked["email"]
        if registration_id in history.cancelled:
            if registration_id in stored:
                result.add("cancelled_but_stored", event_id,
                           f"registration {registration_id} was cancelled (answered ok) but "
                           "is stored", email, booked["request_id"])
            continue
        if registration_id in stored:
            continue
        if _unknown_cancel_could_remove(history, booked, registration_id):
            result.removals_by_unknown_cancel += 1
            continue
        if _asked_again_after_rejection(history, booked, registration_id, mails):
            continue
        result.add("lost", event_id, f"booking {registration_id} was answered ok and is gone, "
                   "and no cancellation can have removed it", email, booked["request_id"])


def _asked_again_after_rejection(history: History, booked: dict, registration_id: str,
                                 mails: dict | None) -> bool:
    """A ``streams`` request decided ``rejected`` (its rejection e-mail went out) is
    replaced when the same person asks again: a later booking of theirs that took effect."""
    if not mails or not mails.get(f"rejection-{registration_id}"):
        return False
    return any(r["operation"] == "book" and r["outcome"] != FAIL
               and r.get("registration_id") != registration_id
               and r["invoked"] >= booked["invoked"]
               for r in history.by_key[(booked["event_id"], booked["email"])])


def _unknown_cancel_could_remove(history: History, booked: dict, registration_id: str) -> bool:
    return any(r["operation"] == "cancel" and r["outcome"] == UNKNOWN
               and r["link"] in (None, registration_id) and r["completed"] >= booked["invoked"]
               for r in history.by_key[(booked["event_id"], booked["email"])])


def _check_made(result: CheckResult, history: History, stored: dict) -> None:
    """Every registration known to exist (stored now, or removed by a cancellation) was
    made by a booking request of its person that was not only ever refused."""
    made = {rid: (event_id, s["email"], s["request_id"]) for rid, (event_id, s) in stored.items()}
    made.update({r["registration_id"]: (r["returned_event"], r["returned_email"],
                                        r["returned_request"])
                 for r in history.records if r["outcome"] == OK and r["operation"] == "cancel"})
    for registration_id, (event_id, email, request_id) in made.items():
        sent = [r for r in history.by_request.get(request_id, [])
                if (r["operation"], r["event_id"], r["email"]) == ("book", event_id, email)]
        if not sent:
            result.add("unexplained", event_id, f"registration {registration_id} was made by "
                       f"request {request_id}, which never booked this person", email,
                       request_id)
        elif all(r["outcome"] == FAIL for r in sent):
            codes = ", ".join(sorted({r["code"] for r in sent}))
            where = "is stored" if registration_id in stored else "was cancelled"
            result.add("refused_but_made", event_id, f"registration {registration_id} {where}, "
                       f"but its request was only answered {codes}", email, request_id)


def _check_requests(result: CheckResult, history: History) -> None:
    for request_id, sent in history.by_request.items():
        first = sent[0]
        same = [r for r in sent if _content(r) == _content(first)]
        bound = min((r["completed"] for r in same if r["outcome"] == OK), default=None)
        for other in (r for r in sent if r not in same):
            if bound is None or other["invoked"] < bound:
                continue  # the id had not taken effect yet: other content may run
            if other["outcome"] != UNKNOWN and other["code"] != "invalid":
                result.add("reused_id_ran", other["event_id"], f"request id reused for other "
                           f"content was answered {other['outcome']} {other['code'] or ''}",
                           other["email"], request_id)
        oks = [r for r in same if r["outcome"] == OK]
        if len({r["registration_id"] for r in oks}) > 1:
            result.add("executed_twice", first["event_id"], "answered ok with registrations "
                       + ", ".join(sorted({r["registration_id"] for r in oks})),
                       first["email"], request_id)
        for answer in (r for r in oks if not _answer_fits(r)):
            result.add("wrong_registration", answer["event_id"], "answered with registration "
                       f"{answer['registration_id']} of {answer['returned_email']}",
                       answer["email"], request_id)
        if oks:
            done = min(r["completed"] for r in oks)
            for later in (r for r in same if r["invoked"] > done and r["outcome"] == FAIL):
                result.add("answer_changed", later["event_id"], f"answered ok, then a repeat "
                           f"was answered {later['code']}", later["email"], request_id)


def _content(record: dict) -> tuple:
    """What a request asks: the operation, on whom, and which tickets."""
    return (record["operation"], record["event_id"], record["email"],
            sorted((record.get("tickets") or {}).items()), record.get("access_code"))


def _answer_fits(answer: dict) -> bool:
    """An ok answer carries its own person's registration (for a booking: its request's)."""
    same_person = (answer["returned_email"], answer["returned_event"]) == (answer["email"],
                                                                          answer["event_id"])
    return same_person and (answer["operation"] != "book"
                            or answer["returned_request"] == answer["request_id"])


def _tickets(tickets: dict | None) -> dict:
    return dict(tickets) if tickets else dict(PLAIN)


def _check_orders(result: CheckResult, history: History, stored: dict) -> None:
    """Orders whole: an ok booking answers the order it asked, an ok cancellation of part
    of one frees what it asked, a stored order is what its request asked minus the parts
    freed since (every one answered ok, and any of those whose answer is unknown)."""
    for record in history.records:
        if record["outcome"] != OK or "returned_tickets" not in record:
            continue
        asked, answered = _tickets(record.get("tickets")), record["returned_tickets"]
        if record["operation"] == "book" and answered != asked:
            result.add("order_not_whole", record["event_id"], f"booked {_show(asked)}, "
                       f"answered {_show(answered)}", record["email"], record["request_id"])
        elif record["operation"] == "cancel" and record.get("tickets") and answered != asked:
            result.add("partial_freed_other", record["event_id"], f"asked to free "
                       f"{_show(asked)}, answered {_show(answered)}", record["email"],
                       record["request_id"])
    for registration_id, (event_id, row) in stored.items():
        _check_order_whole(result, history, event_id, row)


def _check_order_whole(result: CheckResult, history: History, event_id: str,
                       row: dict) -> None:
    books = [r for r in history.by_request.get(row["request_id"], [])
             if (r["operation"], r["event_id"], r["email"]) == ("book", event_id, row["email"])]
    if not books:
        return  # ``unexplained``
    # A refused request wrote nothing and its id may run again with other tickets: the
    # order was made by one of its runs that was not refused (``refused_but_made`` if none).
    makers = [r for r in books if r["outcome"] != FAIL] or books
    stored_tickets = _tickets(row.get("tickets"))
    freed = history.freed.get(row["registration_id"], {})
    for maker in makers:
        left = Counter(_tickets(maker.get("tickets")))
        for part in freed.values():
            left.subtract(part["tickets"])
        maybe = {r["request_id"]: r["tickets"] for r in history.by_key[(event_id, row["email"])]
                 if r["operation"] == "cancel" and r["outcome"] == UNKNOWN and r.get("tickets")
                 and r["request_id"] not in freed and r["completed"] >= maker["invoked"]}
        owed = left.copy()
        owed.subtract(stored_tickets)
        if not any(n < 0 for n in owed.values()) and _key(owed) in _part_sums(maybe.values()):
            return
    explained = f" minus {len(freed)} part(s) freed" if freed else ""
    result.add("order_not_whole", event_id, f"stores {_show(stored_tickets)}"
               f", asked {_show(_tickets(makers[0].get('tickets')))}{explained}"
               + (f" and any of {len(maybe)} unknown" if maybe else ""), row["email"],
               row["request_id"])


def _key(tickets: Counter) -> tuple:
    return tuple(sorted((t, n) for t, n in tickets.items() if n))


def _part_sums(parts) -> set[tuple]:
    """Every total that some of ``parts`` (unknown partial cancellations) add up to."""
    sums = {()}
    for part in parts:
        sums |= {_key(Counter(dict(total)) + Counter(part)) for total in sums}
    return sums


def _check_full_answers(result: CheckResult, history: History, event: dict,
                        stored: dict) -> None:
    """A "full" answer names a quota the order draws on, and which can have been full:
    counting every order that may have held seats at any moment of the answer (from its
    request's first invocation to the end of a cancellation that removed it; whole, as
    asked), that quota had no room for the order."""
    refusals = [r for r in history.records if r["event_id"] == event["id"]
                and r["outcome"] == FAIL and r["code"] == "event_full" and r.get("quota")]
    if not refusals:
        return
    holds = _Holds(_possible_holds(history, event, stored))
    capacities = quotas_of(event)
    for refused in refusals:
        quota = refused["quota"]
        need = seats_of(event, refused.get("tickets")).get(quota, 0)
        if not need or quota not in capacities:
            result.add("full_with_room", event["id"], f"'full' names quota {quota}, which "
                       "the order does not draw on", refused["email"], refused["request_id"])
            continue
        most = holds.most(quota, refused["invoked"], refused["completed"])
        if most + need <= capacities[quota]:
            result.add("full_with_room", event["id"], f"'full' naming {quota} for "
                       f"{need} seat(s), but at most {most} of its {capacities[quota]} "
                       "seats can have been taken then", refused["email"],
                       refused["request_id"])


def _possible_holds(history: History, event: dict, stored: dict) -> list[tuple]:
    """(from, until, seats per quota) of every booking request that may have taken seats."""
    made = {s["request_id"] for event_id, s in stored.values() if event_id == event["id"]}
    made.update(r["returned_request"] for r in history.records
                if r["outcome"] == OK and r.get("returned_event") == event["id"])
    removed: dict[tuple, float] = {}  # (request id, e-mail) -> when a whole cancel ended
    for r in history.records:
        if r["outcome"] == OK and r["operation"] == "cancel" and not r.get("returned_part") \
                and r.get("returned_event") == event["id"]:
            key = (r["returned_request"], r["returned_email"])
            removed[key] = min(removed.get(key, r["completed"]), r["completed"])
    groups = defaultdict(list)
    for r in history.records:
        if r["operation"] == "book" and r["event_id"] == event["id"]:
            groups[(r["request_id"], r["email"])].append(r)
    return [(min(r["invoked"] for r in sent), removed.get(key, float("inf")),
             seats_of(event, sent[0].get("tickets")))
            for key, sent in groups.items()
            if key[0] in made or any(r["outcome"] != FAIL for r in sent)]


class _Holds:
    """Seats that may have been held in an interval: a sum of starts minus ends, per quota."""

    def __init__(self, holds: list[tuple]):
        self.starts, self.ends = defaultdict(list), defaultdict(list)
        for start, end, seats in holds:
            for quota, n in seats.items():
                self.starts[quota].append((start, n))
                self.ends[quota].append((end, n))
        self.starts = {q: _cumulative(v) for q, v in self.starts.items()}
        self.ends = {q: _cumulative(v) for q, v in self.ends.items()}

    def most(self, quota: str, begin: float, end: float) -> int:
        """Seats of ``quota`` held by holds that overlap [begin, end]: those that started
        before ``end``, less those that ended before ``begin`` (they started earlier)."""
        return (_sum_before(self.starts.get(quota), end, inclusive=False)
                - _sum_before(self.ends.get(quota), begin, inclusive=True))


def _cumulative(points: list[tuple]) -> tuple[list, list]:
    points.sort()
    times, totals, total = [], [], 0
    for at, n in points:
        total += n
        times.append(at)
        totals.append(total)
    return times, totals


def _sum_before(cumulative, at: float, *, inclusive: bool) -> int:
    if not cumulative:
        return 0
    times, totals = cumulative
    index = (bisect_right if inclusive else bisect_left)(times, at)
    return totals[index - 1] if index else 0


def _resolve_unknown_books(result: CheckResult, history: History, stored: dict) -> None:
    made_by = {s["request_id"] for _, s in stored.values()}
    made_by.update(r["returned_request"] for r in history.records if r["outcome"] == OK)
    for record in history.records:
        if record["outcome"] == UNKNOWN and record["operation"] == "book":
            if record["request_id"] in made_by:
                result.unknown_applied += 1
            else:
                result.unknown_not_applied += 1


def _made_by_request(history: History, stored: dict) -> dict[str, dict[str, str]]:
    """Request id -> {registration id: event id} of every registration seen made by it."""
    made: dict[str, dict[str, str]] = defaultdict(dict)
    for registration_id, (event_id, s) in stored.items():
        made[s["request_id"]][registration_id] = event_id
    for r in history.records:
        if r["outcome"] == OK and r.get("returned_request"):
            made[r["returned_request"]][r["registration_id"]] = r["returned_event"]
    return made


def _check_one_registration_per_request(result: CheckResult, history: History,
                                        stored: dict) -> None:
    flagged = {a.request_id for a in result.anomalies if a.kind == "executed_twice"}
    for request_id, made in _made_by_request(history, stored).items():
        if len(made) > 1 and request_id not in flagged:
            event_id = next(iter(made.values()))
            first = history.by_request.get(request_id, [{}])[0]
            result.add("executed_twice", event_id, f"request made {len(made)} registrations: "
                       + ", ".join(sorted(made)), first.get("email"), request_id)


def _check_mail(result: CheckResult, history: History, stored: dict, mails: dict,
                owed: list) -> None:
    for message_id, count in sorted(mails.items()):
        if count > 1:
            result.add("mail_twice", "", f"{message_id} sent {count} times")
    made = {rid: event_id for regs in _made_by_request(history, stored).values()
            for rid, event_id in regs.items()}
    status = _statuses(history, stored)
    _check_decisions(result, made, status, mails)
    # A decision mails itself (streams): a confirmation, or a rejection; nothing for a
    # request withdrawn while pending, or whose last state nobody saw.
    kinds = {"confirmed": "confirmation", "rejected": "rejection"}
    expected = {f"{kinds[status[rid]]}-{rid}": event_id for rid, event_id in made.items()
                if status.get(rid) in kinds}
    expected.update({f"cancellation-{r['registration_id']}"
                     + (f"-{r['returned_part']}" if r.get("returned_part") else ""): r["event_id"]
                     for r in history.records if r["outcome"] == OK
                     and r["operation"] == "cancel"})
    for message_id, event_id in sorted(expected.items()):
        if not mails.get(message_id):
            state = "still owed" if message_id in owed else "never sent"
            result.add("mail_missing", event_id, f"{message_id} {state}")


def _statuses(history: History, stored: dict) -> dict[str, str]:
    """A registration's last known state: stored now, or as a cancellation removed it."""
    known = {r["registration_id"]: r.get("returned_status", "confirmed")
             for r in history.records if r["outcome"] == OK and r["operation"] == "cancel"}
    known.update({rid: s.get("status", "confirmed") for rid, (_, s) in stored.items()})
    for rid in history.booked:  # answered ok at once: confirmed unless a decider decides
        if history.booked[rid].get("returned_status", "confirmed") == "confirmed":
            known.setdefault(rid, "confirmed")
    return known


def _check_decisions(result: CheckResult, made: dict, status: dict, mails: dict) -> None:
    """streams: one decision per registration, and the one that stands."""
    for rid, event_id in made.items():
        confirmed, rejected = mails.get(f"confirmation-{rid}"), mails.get(f"rejection-{rid}")
        if confirmed and rejected:
            result.add("decided_twice", event_id, f"registration {rid} was both confirmed "
                       "and rejected")
        elif (confirmed and status.get(rid) == "rejected") or (
                rejected and status.get(rid) == "confirmed"):
            result.add("decision_changed", event_id, f"registration {rid} is "
                       f"{status.get(rid)}, but the other decision was mailed")
