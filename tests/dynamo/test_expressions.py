"""The typed expression builder: generated placeholders, reserved words, map entries,
update actions, and the typed transaction members, against moto."""
import pytest

from booking.dynamo.errors import ConditionFailed, TransactionCancelled
from booking.dynamo.expressions import (Actions, all_of, any_of, attr, compile, if_not_exists,
                                        list_append, projection)
from booking.dynamo.table import _expression
from booking.dynamo.tables import EVENTS
from booking.dynamo.expressions import (ConditionCheck, Delete, Members, Put, Update, as_op,
                                        kind_of, without_condition)



def test_compile__plain_names__written_plainly_values_placeholdered():
    request = compile(condition=attr("confirmed_count").lt(3) & attr("event_id").exists())

    assert request == {"ConditionExpression": "confirmed_count < :v0 AND attribute_exists(event_id)",
                       "ExpressionAttributeValues": {":v0": {"N": "3"}}}


def test_compile__reserved_word_and_odd_segment__get_generated_names():
    request = compile(condition=attr("holds", "a.b@example.com").le(5)
                      & attr("confirmed_count").lt(attr("capacity")))

    assert request["ConditionExpression"] == "holds.#n0 <= :v0 AND confirmed_count < #n1"
    assert request["ExpressionAttributeNames"] == {"#n0": "a.b@example.com", "#n1": "capacity"}


def test_compile__equal_values_and_names__share_one_placeholder():
    update = Actions().set("capacity", attr("capacity").plus(1)).set("version",
                                                                     attr("version").plus(1))
    request = compile(update=update, condition=attr("capacity").ge(1))

    assert request["UpdateExpression"] == "SET #n0 = #n0 + :v0, version = version + :v0"
    assert request["ConditionExpression"] == "#n0 >= :v0"
    assert request["ExpressionAttributeNames"] == {"#n0": "capacity"}
    assert list(request["ExpressionAttributeValues"]) == [":v0"]


def test_compile__or_inside_and__parenthesized_not_binds_tight():
    condition = attr("a").exists() & (attr("b").lt(1) | ~attr("c").exists())

    assert compile(condition=condition)["ConditionExpression"] == (
        "attribute_exists(a) AND (b < :v0 OR NOT attribute_exists(c))")
    assert compile(condition=~(attr("a").eq(1) & attr("b").eq(2)))["ConditionExpression"] == (
        "NOT (a = :v0 AND b = :v1)")


def test_compile__every_action_kind__in_clause_order():
    update = (Actions().remove(attr("holds", "a@x")).add("visits", 2)
              .set("entries", list_append(if_not_exists("entries", []), ["y"]))
              .delete("tags", {"old"}))

    assert compile(update=update)["UpdateExpression"] == (
        "SET entries = list_append(if_not_exists(entries, :v0), :v1) ADD visits :v2 "
        "REMOVE holds.#n0 DELETE tags :v3")


def test_compile__key_filter_and_projection__share_the_placeholders():
    request = compile(key=attr("event_id").eq("e1") & attr("email").begins_with("a"),
                      filter=attr("status").is_in("pending", "held"),
                      project=projection("event_id", "name"))

    assert request["KeyConditionExpression"] == "event_id = :v0 AND begins_with(email, :v1)"
    assert request["FilterExpression"] == "#n0 IN (:v2, :v3)"
    assert request["ProjectionExpression"] == "event_id, #n1"
    assert request["ExpressionAttributeNames"] == {"#n0": "status", "#n1": "name"}


def test_builders__empty__refused():
    with pytest.raises(ValueError):
        compile(update=Actions())
    with pytest.raises(ValueError):
        all_of([])
    with pytest.raises(ValueError):
        any_of([])
    with pytest.raises(ValueError):
        attr("holds", "")


def test_table__typed_update__applies_and_refuses_by_condition(dynamo):
    events = dynamo.table(EVENTS)
    events.put({"event_id": "e1", "capacity": 2, "confirmed_count": 0, "holds": {}})
    take = Actions().set("confirmed_count", attr("confirmed_count").plus(1))
    room = attr("event_id").exists() & attr("confirmed_count").lt(attr("capacity"))

    events.update({"event_id": "e1"}, take, condition=room)
    events.update({"event_id": "e1"}, take.set(attr("holds", "a.b@x.org"), 7), condition=room)

    with pytest.raises(ConditionFailed):
        events.update({"event_id": "e1"}, take, condition=room)
    stored = events.get({"event_id": "e1"}, projection=projection("confirmed_count", "holds"))
    assert stored == {"confirmed_count": 2, "holds": {"a.b@x.org": 7}}


def test_table__typed_and_text_mixed__placeholders_kept_apart_unused_names_dropped(dynamo):
    mixed = _expression({}, None, {"#x": "x", "#unused": "u"}, {":x": 1}, filter="#x = :x",
                        projection=projection("name"))

    assert mixed["ExpressionAttributeNames"] == {"#n0": "name", "#x": "x"}
    assert mixed["ExpressionAttributeValues"] == {":x": {"N": "1"}}
    with pytest.raises(ValueError):
        dynamo.table(EVENTS).put_op({"event_id": "e"}, condition=attr("name").eq(1),
                                    values={":v0": 2})


def test_members__typed__one_transaction_and_refusal_by_name(dynamo):
    events = dynamo.table(EVENTS)
    events.put({"event_id": "e1", "capacity": 1, "confirmed_count": 0})
    members = Members([
        ("new", Put(events, {"event_id": "e2", "capacity": 1},
                    condition=attr("event_id").not_exists())),
        ("take", Update(events, {"event_id": "e1"},
                        Actions().add("confirmed_count", 1),
                        condition=attr("confirmed_count").lt(attr("capacity")))),
    ])
    dynamo.transact_write(members.operations)

    again = Members([("gone", Delete(events, {"event_id": "e2"})),
                     ("full", ConditionCheck(events, {"event_id": "e1"},
                                             attr("confirmed_count").lt(attr("capacity"))))])
    with pytest.raises(TransactionCancelled) as cancelled:
        dynamo.transact_write(again.operations)

    refusal = again.refusal(cancelled.value)
    assert refusal.refused_names() == ["full"]
    assert refusal.old("full")["confirmed_count"] == 1
    assert events.get({"event_id": "e2"}) is not None  # the delete did not apply either


def test_members__kinds_and_dropped_condition__as_the_client_takes_them(dynamo):
    events = dynamo.table(EVENTS)
    put = Put(events, {"event_id": "e"}, condition=attr("event_id").not_exists())

    assert kind_of(put) == "Put" and kind_of(("Delete", {})) == "Delete"
    assert "ConditionExpression" in as_op(put)[1]
    assert "ConditionExpression" not in as_op(without_condition(put))[1]
    with pytest.raises(ValueError):
        without_condition(ConditionCheck(events, {"event_id": "e"}, attr("event_id").exists()))
