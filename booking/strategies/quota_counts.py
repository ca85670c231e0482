"""Per-quota counts kept in the event item (``aggregate``, ``streams``): further quotas'
sizes in ``quota_capacities``, their seats taken in ``quota_counts`` (docs/orders.md).
"""
from booking.models import CAPACITY_QUOTA, Order, QuotaAvailability
from booking.strategies.base import CAPACITY_NAMES


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


def quota_paths(order_seats: dict[str, int]):
    """(count path, capacity path, names) of each quota: the capacity's own attributes, the
    further quotas' entries of ``quota_counts`` and ``quota_capacities``."""
    names, paths = {}, {}
    for number, quota in enumerate(sorted(order_seats, key=lambda q: (q != CAPACITY_QUOTA, q))):
        if quota == CAPACITY_QUOTA:
            paths[quota] = ("confirmed_count", "#capacity")
            names.update(CAPACITY_NAMES)
        else:
            names[f"#q{number}"] = quota
            paths[quota] = (f"quota_counts.#q{number}", f"quota_capacities.#q{number}")
    return paths, names


def count_changes(seats: dict[str, int], sign: str) -> tuple[list[str], dict, dict]:
    """SET clauses adding (``+``) or removing (``-``) ``seats`` per quota."""
    paths, names = quota_paths(seats)
    clauses = [f"{count} = {count} {sign} :n{i}" for i, (count, _) in enumerate(paths.values())]
    values = {f":n{i}": seats[quota] for i, quota in enumerate(paths)}
    return clauses, {k: v for k, v in names.items() if k != "#capacity"}, values


def room_condition(order: Order, *, lacking: bool = False) -> tuple[str, dict, dict]:
    """The condition that every quota of ``order`` has room for its seats at the
    capacities it names (``capacity >= :cap AND count <= :cap - n``: a condition cannot
    add); with ``lacking``, that those capacities still hold and some quota has no room."""
    paths, names = quota_paths(order.seats)
    values, fits, short, same = {}, [], [], []
    for i, (quota, (count, capacity)) in enumerate(paths.items()):
        values[f":cap{i}"] = order.capacities[quota]
        values[f":room{i}"] = order.capacities[quota] - order.seats[quota]
        fits.append(f"{capacity} >= :cap{i} AND {count} <= :room{i}")
        same.append(f"{capacity} = :cap{i}")
        short.append(f"{count} > :room{i}")
    if lacking:
        return f"{' AND '.join(same)} AND ({' OR '.join(short)})", names, values
    return " AND ".join(fits), names, values
