"""Per-quota counts kept in the event item (``aggregate``, ``streams``): further quotas'
sizes in ``quota_capacities``, their seats taken in ``quota_counts`` (docs/orders.md).
"""
from booking.models import CAPACITY_QUOTA, Order, QuotaAvailability
from booking.dynamo.expressions import Actions, Condition, Path, all_of, any_of, attr


def counts_of(item: dict) -> dict[str, tuple[int, int]]:
    """Every quota's stored (capacity, seats taken)."""
    counts = item.get("quota_counts") or {}
    found = {CAPACITY_QUOTA: (int(item["capacity"]), int(item["confirmed_count"]))}
    for quota, seats in (item.get("quota_capacities") or {}).items():
        found[quota] = (int(seats), int(counts.get(quota, 0)))
    return found


def further_availability(item: dict, stored: dict, held: dict) -> dict[str, QuotaAvailability]:
    """The further quotas' seats; ``stored``: seats per quota of every hold in the item
    (counted in its counts), ``held``: of those still held (``holds.held_seats``)."""
    return {quota: QuotaAvailability(capacity=capacity, confirmed=taken - stored.get(quota, 0),
                                     held=held.get(quota, 0))
            for quota, (capacity, taken) in counts_of(item).items() if quota != CAPACITY_QUOTA}


def quota_paths(order_seats: dict[str, int]) -> dict[str, tuple[Path, Path]]:
    """(count path, capacity path) of each quota, the capacity first: the capacity's own
    attributes, the further quotas' entries of ``quota_counts`` and ``quota_capacities``."""
    paths = {}
    for quota in sorted(order_seats, key=lambda q: (q != CAPACITY_QUOTA, q)):
        if quota == CAPACITY_QUOTA:
            paths[quota] = (attr("confirmed_count"), attr("capacity"))
        else:
            paths[quota] = (attr("quota_counts", quota), attr("quota_capacities", quota))
    return paths


def count_changes(seats: dict[str, int], sign: str) -> Actions:
    """SET clauses adding (``+``) or removing (``-``) ``seats`` per quota."""
    actions = Actions()
    for quota, (count, _) in quota_paths(seats).items():
        moved = count.plus(seats[quota]) if sign == "+" else count.minus(seats[quota])
        actions = actions.set(count, moved)
    return actions


def room_condition(order: Order, *, lacking: bool = False) -> Condition:
    """The condition that every quota of ``order`` has room for its seats at the
    capacities it names (``capacity >= cap AND count <= cap - n``: a condition cannot
    add); with ``lacking``, that those capacities still hold and some quota has no room."""
    fits, short, same = [], [], []
    for quota, (count, capacity) in quota_paths(order.seats).items():
        guess = order.capacities[quota]
        room = guess - order.seats[quota]
        fits.append(capacity.ge(guess) & count.le(room))
        same.append(capacity.eq(guess))
        short.append(count.gt(room))
    if lacking:
        return all_of(same) & any_of(short)
    return all_of(fits)
