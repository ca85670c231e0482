"""The torture checker on hand-written histories: each anomaly is seen, true ones pass."""
import pytest

from harness.torture.checker import check

EVENT = "e" * 32
CAPACITY = 2


def rec(t, operation, request_id, email, outcome="ok", code=None, registration=None, *,
        link=None, returned_request=None, step="book", returned_email=None):
    record = {"request_id": request_id, "operation": operation, "event_id": EVENT,
              "email": email, "link": link, "invoked": t, "completed": t + 0.5,
              "outcome": outcome, "code": code, "process": 0, "thread": 0, "step": step}
    if outcome == "ok":
        record.update(registration_id=registration, returned_email=returned_email or email,
                      returned_event=EVENT,
                      returned_request=returned_request or (
                          request_id if operation == "book" else "r-booking"))
    return record


def stored(*registrations, confirmed=None, violations=()):
    """``registrations``: (email, registration id, request id[, streams status])."""
    rows = [{"email": email, "registration_id": rid, "request_id": request,
             **({"status": status[0]} if status else {})}
            for email, rid, request, *status in registrations]
    seats = sum(row.get("status", "confirmed") == "confirmed" for row in rows)
    return {EVENT: {"registrations": rows, "violations": list(violations),
                    "confirmed": seats if confirmed is None else confirmed}}


def kinds(records, final, peak=0):
    events = [{"id": EVENT, "strategy": "lock_table", "capacity": CAPACITY}]
    peaks = {EVENT: {"confirmed": peak, "stored": peak, "at": 1.0}}
    return check(records, events, final, peaks).counts()


def test_check__true_history_with_repeats_cancels_and_unknowns__no_anomaly():
    records = [
        rec(1, "book", "r-ada", "ada@x", registration="R1"),
        rec(2, "book", "r-ada", "ada@x", registration="R1", step="repeat"),
        rec(3, "book", "r-bob", "bob@x", registration="R2"),
        rec(4, "book", "r-cy", "cy@x", "fail", "event_full"),
        rec(5, "cancel", "r-c1", "bob@x", registration="R2", returned_request="r-bob"),
        rec(6, "book", "r-dan", "dan@x", "unknown", "store_unavailable"),
        rec(7, "book", "r-dan", "dan@x", "unknown", "in_progress", step="repeat"),
        rec(8, "book", "r-ada", "bob@x", "fail", "invalid", step="mismatch"),
        rec(9, "cancel", "r-c1", "bob@x", registration="R2", returned_request="r-bob"),
    ]
    final = stored(("ada@x", "R1", "r-ada"), ("dan@x", "R4", "r-dan"))

    assert kinds(records, final) == {}


def test_check__more_stored_than_capacity__overbooked_and_counter():
    records = [rec(n, "book", f"r-{n}", f"p{n}@x", registration=f"R{n}") for n in range(3)]
    final = stored(*[(f"p{n}@x", f"R{n}", f"r-{n}") for n in range(3)], confirmed=2)

    assert kinds(records, final) == {"overbooked": 1, "counter_mismatch": 1}


def test_check__overbooked_only_during_the_run__seen_by_the_watcher():
    assert kinds([], stored(), peak=CAPACITY + 1) == {"overbooked": 1}


def test_check__acknowledged_booking_gone_without_cancel__lost():
    records = [rec(1, "book", "r-ada", "ada@x", registration="R1"),
               rec(2, "cancel", "r-c", "ada@x", "fail", "not_registered")]

    assert kinds(records, stored()) == {"lost": 1}


@pytest.mark.parametrize(("mails", "lost"), [({"rejection-R1": 1}, 0), ({}, 1)])
def test_check__streams_request_rejected_then_asked_again__replaced_not_lost(mails, lost):
    # A rejected streams request is replaced by the person's next one (same item): not
    # lost when its rejection e-mail went out; without it, the same history is a loss.
    records = [rec(1, "book", "r-ada", "ada@x", registration="R1"),
               rec(5, "book", "r-ada-2", "ada@x", registration="R2")]
    events = [{"id": EVENT, "strategy": "streams", "capacity": CAPACITY}]
    final = stored(("ada@x", "R2", "r-ada-2"))

    found = check(records, events, final, {}, mails=mails).counts()

    assert found.get("lost", 0) == lost


def test_check__booking_gone_after_unknown_cancel__resolved_not_lost():
    records = [rec(1, "book", "r-ada", "ada@x", registration="R1"),
               rec(2, "cancel", "r-c", "ada@x", "unknown", "store_unavailable")]

    assert kinds(records, stored()) == {}


def test_check__cancelled_registration_still_stored__anomaly():
    records = [rec(1, "book", "r-ada", "ada@x", registration="R1"),
               rec(2, "cancel", "r-c", "ada@x", registration="R1", returned_request="r-ada")]

    assert kinds(records, stored(("ada@x", "R1", "r-ada"))) == {"cancelled_but_stored": 1}


def test_check__stored_but_request_only_refused__false_refusal():
    records = [rec(1, "book", "r-ada", "ada@x", "fail", "already_registered")]

    assert kinds(records, stored(("ada@x", "R1", "r-ada"))) == {"refused_but_made": 1}


def test_check__cancelled_registration_whose_request_was_refused__false_refusal():
    records = [rec(1, "book", "r-ada", "ada@x", "fail", "already_registered"),
               rec(2, "cancel", "r-c", "ada@x", registration="R1", returned_request="r-ada")]

    assert kinds(records, stored()) == {"refused_but_made": 1}


def test_check__stored_registration_no_request_made__unexplained():
    assert kinds([], stored(("ada@x", "R1", "r-ghost"))) == {"unexplained": 1}


def test_check__one_request_two_registrations__executed_twice():
    records = [rec(1, "book", "r-ada", "ada@x", registration="R1"),
               rec(2, "cancel", "r-c", "ada@x", registration="R1", returned_request="r-ada"),
               rec(3, "book", "r-ada", "ada@x", registration="R2", step="repeat")]

    assert kinds(records, stored(("ada@x", "R2", "r-ada"))) == {"executed_twice": 1}


def test_check__repeat_after_ok_refused__answer_changed():
    records = [rec(1, "book", "r-ada", "ada@x", registration="R1"),
               rec(2, "book", "r-ada", "ada@x", "fail", "already_registered", step="repeat")]

    assert kinds(records, stored(("ada@x", "R1", "r-ada"))) == {"answer_changed": 1}


@pytest.mark.parametrize("answer", [("ok", None), ("fail", "event_full")])
def test_check__reused_id_other_content_not_refused__reused_id_ran(answer):
    outcome, code = answer
    records = [rec(1, "book", "r-ada", "ada@x", registration="R1"),
               rec(2, "book", "r-ada", "bob@x", outcome, code, registration="R2",
                   step="mismatch")]
    final = stored(("ada@x", "R1", "r-ada"), *([("bob@x", "R2", "r-ada")] if code is None else []))

    assert kinds(records, final)["reused_id_ran"] == 1


def test_check__ok_with_someone_elses_registration__wrong_registration():
    records = [rec(1, "book", "r-ada", "ada@x", registration="R1", returned_email="bob@x")]

    assert kinds(records, stored(("ada@x", "R1", "r-ada"))) == {"wrong_registration": 1}


def test_check__audit_violation_reported():
    final = stored(violations=["lock_item_present: expected True, found False"])

    assert kinds([], final) == {"audit": 1}


def mail_kinds(records, final, mails, owed=()):
    events = [{"id": EVENT, "strategy": "lock_table", "capacity": CAPACITY}]
    peaks = {EVENT: {"confirmed": 0, "stored": 0, "at": 1.0}}
    return check(records, events, final, peaks, mails=mails, owed=list(owed)).counts()


def test_check__repeat_after_cancellation_booked_again__executed_twice():
    # The repeat answered with the old registration, but a second one of its request is
    # stored: the repeat booked again.
    records = [rec(1, "book", "r-ada", "ada@x", registration="R1"),
               rec(2, "cancel", "r-c", "ada@x", registration="R1", returned_request="r-ada"),
               rec(3, "book", "r-ada", "ada@x", registration="R1", step="repeat")]

    assert kinds(records, stored(("ada@x", "R2", "r-ada"))) == {"executed_twice": 1}


def test_check__refused_id_reused_with_other_content__may_run():
    records = [rec(1, "book", "r-ada", "ada@x", "fail", "event_full"),
               rec(2, "book", "r-ada", "bob@x", registration="R2", step="mismatch")]

    assert kinds(records, stored(("bob@x", "R2", "r-ada"))) == {}


def test_check__every_mail_once__no_anomaly():
    records = [rec(1, "book", "r-ada", "ada@x", registration="R1"),
               rec(2, "cancel", "r-c", "ada@x", registration="R1", returned_request="r-ada"),
               rec(3, "book", "r-bob", "bob@x", registration="R2")]
    mails = {"confirmation-R1": 1, "cancellation-R1": 1, "confirmation-R2": 1}

    assert mail_kinds(records, stored(("bob@x", "R2", "r-bob")), mails) == {}


def test_check__mail_sent_twice_or_never__found():
    records = [rec(1, "book", "r-ada", "ada@x", registration="R1"),
               rec(2, "cancel", "r-c", "ada@x", registration="R1", returned_request="r-ada"),
               rec(3, "book", "r-bob", "bob@x", registration="R2")]
    mails = {"confirmation-R1": 2, "confirmation-R2": 1}

    assert mail_kinds(records, stored(("bob@x", "R2", "r-bob")), mails,
                      owed=["cancellation-R1"]) == {"mail_twice": 1, "mail_missing": 1}


# --- streams: a request accepted as pending, then decided by the stream decider ---------

def streams_kinds(records, final, mails=None, owed=()):
    events = [{"id": EVENT, "strategy": "streams", "capacity": CAPACITY}]
    return check(records, events, final, {}, mails=mails, owed=list(owed)).counts()


def pending_book(t, request_id, email, registration):
    """A streams booking: answered ok at once with a pending registration."""
    return {**rec(t, "book", request_id, email, registration=registration),
            "returned_status": "pending"}


@pytest.mark.parametrize(("status", "found"), [("pending", {"undecided": 1}),
                                               ("confirmed", {}), ("rejected", {})])
def test_check__streams_request_left_pending_after_the_last_pass__undecided(status, found):
    records = [pending_book(1, "r-ada", "ada@x", "R1")]

    assert streams_kinds(records, stored(("ada@x", "R1", "r-ada", status))) == found


def test_check__streams_request_decided_once_each_way__no_anomaly():
    records = [pending_book(1, "r-ada", "ada@x", "R1"), pending_book(2, "r-bob", "bob@x", "R2")]
    final = stored(("ada@x", "R1", "r-ada", "confirmed"), ("bob@x", "R2", "r-bob", "rejected"))
    mails = {"confirmation-R1": 1, "rejection-R2": 1}

    assert streams_kinds(records, final, mails) == {}


@pytest.mark.parametrize("status", ["confirmed", "rejected"])
def test_check__streams_redelivery_decided_again__both_decisions_mailed__decided_twice(status):
    # A decider without the pending condition read the record twice: one registration
    # was confirmed and rejected, and both e-mails went out, whichever status stands.
    records = [pending_book(1, "r-ada", "ada@x", "R1")]
    mails = {"confirmation-R1": 1, "rejection-R1": 1}

    found = streams_kinds(records, stored(("ada@x", "R1", "r-ada", status)), mails)

    assert found == {"decided_twice": 1}


@pytest.mark.parametrize(("mailed", "stands"), [("rejection", "confirmed"),
                                                ("confirmation", "rejected")])
def test_check__streams_decision_mailed_then_overwritten__decision_changed(mailed, stands):
    # One decision was mailed, then a second decision overwrote the stored status; its
    # own e-mail is still owed, so the person was told the decision that no longer holds.
    other = {"rejection": "confirmation", "confirmation": "rejection"}[mailed]
    records = [pending_book(1, "r-ada", "ada@x", "R1")]

    found = streams_kinds(records, stored(("ada@x", "R1", "r-ada", stands)),
                          {f"{mailed}-R1": 1}, owed=[f"{other}-R1"])

    assert found == {"decision_changed": 1, "mail_missing": 1}


# --- orders: ticket types sharing quotas, partial cancellations -------------------------

TYPES = {"conf": [], "wa": ["wa"], "both": ["wa", "wb"]}
ORDER_EVENT = {"id": EVENT, "strategy": "lock_table", "capacity": 6, "orders": True,
               "quotas": {"capacity": 6, "wa": 3, "wb": 2}, "ticket_types": TYPES}


def order(t, request_id, email, tickets, outcome="ok", code=None, registration=None, *,
          answered=None, quota=None, step="order"):
    """A booking of ``tickets`` (its ok answer carries ``answered``, default the same)."""
    record = {**rec(t, "book", request_id, email, outcome, code, registration, step=step),
              "tickets": tickets, **({"quota": quota} if quota else {})}
    if outcome == "ok":
        record["returned_tickets"] = answered or tickets
    return record


def part(t, request_id, email, tickets, outcome="ok", code=None, registration=None, *,
         booked_by=None, answered=None, whole=False):
    """A cancellation of ``tickets`` of an order (ok: freed part, or the rest when whole)."""
    record = {**rec(t, "cancel", request_id, email, outcome, code, registration,
                    returned_request=booked_by, step="partial"), "tickets": tickets}
    if outcome == "ok":
        record.update(returned_tickets=answered or tickets,
                      returned_part=None if whole else request_id)
    return record


def orders_stored(*rows, quotas=None, peaks=None):
    """``rows``: (email, registration id, request id, tickets); counters from the rows
    unless ``quotas`` says otherwise."""
    registrations = [{"email": email, "registration_id": rid, "request_id": request,
                      "tickets": tickets} for email, rid, request, tickets in rows]
    taken = {"capacity": 0, "wa": 0, "wb": 0}
    for *_, tickets in rows:
        for ticket_type, n in tickets.items():
            for quota in ("capacity", *TYPES[ticket_type]):
                taken[quota] += n
    taken.update(quotas or {})
    return {EVENT: {"registrations": registrations, "violations": [],
                    "confirmed": taken["capacity"], "quotas": taken}}


def order_kinds(records, final, quota_peaks=None):
    peaks = {EVENT: {"confirmed": 0, "stored": 0, "at": 1.0,
                     "quotas": {q: {"confirmed": n, "stored": n, "at": 1.0}
                                for q, n in (quota_peaks or {}).items()}}}
    return check(records, [ORDER_EVENT], final, peaks).counts()


def test_check__true_order_history_with_parts_fulls_and_unknowns__no_anomaly():
    records = [
        order(1, "r-ada", "ada@x", {"wa": 2, "conf": 1}, registration="R1"),
        order(2, "r-bob", "bob@x", {"both": 1}, registration="R2"),
        # wa holds 3 of 3: a full answer naming it is true, so is one naming the capacity.
        order(3, "r-cy", "cy@x", {"wa": 1}, "fail", "event_full", quota="wa"),
        order(3.2, "r-dan", "dan@x", {"conf": 4}, "fail", "event_full", quota="capacity"),
        part(4, "r-p1", "ada@x", {"wa": 1}, registration="R1", booked_by="r-ada"),
        part(4.1, "r-p1", "ada@x", {"wa": 1}, registration="R1", booked_by="r-ada"),  # repeat
        part(5, "r-p2", "ada@x", {"conf": 1}, "unknown", "outcome_unknown"),
        part(6, "r-p3", "bob@x", {"both": 1}, registration="R2", booked_by="r-bob", whole=True),
        part(7, "r-p4", "cy@x", {"wa": 1}, "fail", "not_registered"),
        order(8, "r-eve", "eve@x", {"both": 2}, "unknown", "outcome_unknown"),
        order(9, "r-ada", "ada@x", {"wa": 2, "conf": 1}, registration="R1", step="repeat"),
    ]
    final = orders_stored(("ada@x", "R1", "r-ada", {"wa": 1}),
                          ("eve@x", "R5", "r-eve", {"both": 2}))

    assert order_kinds(records, final) == {}


def test_check__quota_over_its_capacity__overbooked_naming_the_quota():
    records = [order(1, "r-ada", "ada@x", {"wa": 2}, registration="R1"),
               order(2, "r-bob", "bob@x", {"both": 2}, registration="R2")]
    final = orders_stored(("ada@x", "R1", "r-ada", {"wa": 2}),
                          ("bob@x", "R2", "r-bob", {"both": 2}))

    found = check(records, [ORDER_EVENT], final, {}).anomalies

    assert [(a.kind, a.detail) for a in found] == [
        ("overbooked", "quota wa: 4 stored for 3 seats"),
        ("overbooked", "quota wa: counter 4 for 3 seats")]


def test_check__quota_over_only_during_the_run__seen_by_the_watcher():
    assert order_kinds([], orders_stored(), quota_peaks={"wb": 3}) == {"overbooked": 1}


def test_check__quota_counter_other_than_the_stored_seats__counter_mismatch():
    records = [order(1, "r-ada", "ada@x", {"both": 1}, registration="R1")]
    final = orders_stored(("ada@x", "R1", "r-ada", {"both": 1}), quotas={"wb": 0})

    assert order_kinds(records, final) == {"counter_mismatch": 1}


@pytest.mark.parametrize("stored_tickets", [{"wa": 1}, {"wa": 2, "conf": 2}, {"conf": 1}])
def test_check__stored_order_not_what_was_asked__order_not_whole(stored_tickets):
    records = [order(1, "r-ada", "ada@x", {"wa": 2, "conf": 1}, registration="R1")]
    final = orders_stored(("ada@x", "R1", "r-ada", stored_tickets))

    assert order_kinds(records, final) == {"order_not_whole": 1}


def test_check__id_refused_then_run_again_with_other_tickets__the_run_that_made_it_counts():
    # A refused request wrote nothing: its id runs again with other content (reused_id).
    records = [order(1, "r-ada", "ada@x", {"both": 1}, "fail", "invalid"),
               order(2, "r-ada", "ada@x", {"conf": 2}, registration="R1")]

    assert order_kinds(records, orders_stored(("ada@x", "R1", "r-ada", {"conf": 2}))) == {}


def test_check__booked_answer_with_other_tickets__order_not_whole():
    records = [order(1, "r-ada", "ada@x", {"wa": 2}, registration="R1", answered={"wa": 1})]

    assert order_kinds(records, orders_stored(("ada@x", "R1", "r-ada", {"wa": 2}))) == {
        "order_not_whole": 1}


def test_check__part_freed_answered_ok_but_still_stored__order_not_whole():
    records = [order(1, "r-ada", "ada@x", {"wa": 2, "conf": 1}, registration="R1"),
               part(2, "r-p", "ada@x", {"conf": 1}, registration="R1", booked_by="r-ada")]
    final = orders_stored(("ada@x", "R1", "r-ada", {"wa": 2, "conf": 1}))

    assert order_kinds(records, final) == {"order_not_whole": 1}


def test_check__part_freed_other_than_asked__partial_freed_other():
    records = [order(1, "r-ada", "ada@x", {"wa": 2, "conf": 1}, registration="R1"),
               part(2, "r-p", "ada@x", {"conf": 1}, registration="R1", booked_by="r-ada",
                    answered={"wa": 1})]
    final = orders_stored(("ada@x", "R1", "r-ada", {"wa": 1, "conf": 1}))

    assert order_kinds(records, final) == {"partial_freed_other": 1, "order_not_whole": 1}


def test_check__full_naming_a_quota_with_room__full_with_room():
    # wb: bob's order holds 1 of 2 seats; cy's one "both" seat fits, yet "full" named wb.
    records = [order(1, "r-bob", "bob@x", {"both": 1}, registration="R2"),
               order(2, "r-cy", "cy@x", {"both": 1}, "fail", "event_full", quota="wb")]

    assert order_kinds(records, orders_stored(("bob@x", "R2", "r-bob", {"both": 1}))) == {
        "full_with_room": 1}


def test_check__full_naming_a_quota_the_order_does_not_draw_on__full_with_room():
    records = [order(1, "r-ada", "ada@x", {"wa": 3}, registration="R1"),
               order(2, "r-cy", "cy@x", {"conf": 1}, "fail", "event_full", quota="wa")]

    assert order_kinds(records, orders_stored(("ada@x", "R1", "r-ada", {"wa": 3}))) == {
        "full_with_room": 1}


def test_check__full_while_a_cancellation_was_freeing_the_quota__true():
    # The seat was freed by a cancellation that ended after the "full" began: it may
    # still have been held when the answer was decided.
    records = [order(1, "r-ada", "ada@x", {"wa": 3}, registration="R1"),
               part(3, "r-c", "ada@x", {"wa": 3}, registration="R1", booked_by="r-ada",
                    whole=True),
               order(3.2, "r-cy", "cy@x", {"wa": 1}, "fail", "event_full", quota="wa"),
               order(4, "r-dan", "dan@x", {"wa": 1}, "fail", "event_full", quota="wa")]

    found = check(records, [ORDER_EVENT], orders_stored(), {}).anomalies

    assert [(a.kind, a.request_id) for a in found] == [("full_with_room", "r-dan")]


def code_kinds(holders: int, uses: int, peak_uses: int = 0, max_uses: int = 1):
    """An event with an access code for ``max_uses`` orders; ``holders`` stored orders
    hold it, its item counts ``uses``; the watcher saw at most ``peak_uses``."""
    records = [rec(n, "book", f"r-{n}", f"p{n}@x", registration=f"R{n}") for n in range(2)]
    final = stored(*[(f"p{n}@x", f"R{n}", f"r-{n}") for n in range(2)])
    for n, row in enumerate(final[EVENT]["registrations"]):
        row["access_code"] = "CODE" if n < holders else None
    final[EVENT]["code_uses"] = {"CODE": uses}
    events = [{"id": EVENT, "strategy": "lock_table", "capacity": CAPACITY,
               "code": {"code": "CODE", "max_uses": max_uses}}]
    peaks = {EVENT: {"confirmed": 2, "stored": 2, "at": 1.0,
                     "code_uses": {"uses": peak_uses, "holders": holders}}}
    return check(records, events, final, peaks).counts()


def test_check__code_held_within_its_limit_and_counted__no_anomaly():
    assert code_kinds(holders=1, uses=1, peak_uses=1) == {}


def test_check__code_over_its_limit__at_the_end_or_seen_by_the_watcher():
    assert code_kinds(holders=2, uses=2, peak_uses=2) == {"code_over_limit": 1}
    assert code_kinds(holders=1, uses=1, peak_uses=2) == {"code_over_limit": 1}


def test_check__code_uses_not_its_orders__code_uses_wrong():
    assert code_kinds(holders=1, uses=0, peak_uses=1) == {"code_uses_wrong": 1}


def with_answers(final, answers):
    final[EVENT]["answers"] = answers
    return final


def whole(request_id, seats=1):
    return {"answers": {"note": request_id},
            "pass_answers": [{"pass_name": f"{request_id}#{n}"} for n in range(seats)]}


def test_check__answers_stored_whole_with_their_orders__no_anomaly():
    records = [rec(1, "book", "r-ada", "ada@x", registration="R1"),
               rec(2, "book", "r-bob", "bob@x", registration="R2")]
    final = with_answers(stored(("ada@x", "R1", "r-ada"), ("bob@x", "R2", "r-bob")),
                         {"R1": whole("r-ada"), "R2": whole("r-bob")})
    assert kinds(records, final) == {}


@pytest.mark.parametrize("answers", [
    {"R1": whole("r-ada")},                                   # Bo's order has none
    {"R1": whole("r-ada"), "R2": whole("r-ada")},             # another request's
    {"R1": whole("r-ada"), "R2": {"answers": {"note": "r-bob"}, "pass_answers": []}},
    {"R1": whole("r-ada"), "R2": whole("r-bob"), "R9": whole("r-cy")},  # without an order
])
def test_check__answers_missing_partial_foreign_or_orphaned__answers_not_whole(answers):
    records = [rec(1, "book", "r-ada", "ada@x", registration="R1"),
               rec(2, "book", "r-bob", "bob@x", registration="R2")]
    final = with_answers(stored(("ada@x", "R1", "r-ada"), ("bob@x", "R2", "r-bob")), answers)
    assert kinds(records, final) == {"answers_not_whole": 1}
