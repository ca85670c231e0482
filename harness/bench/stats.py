"""Turn per-attempt records into the benchmark's per-strategy figures."""
from .sizes import mean

OK, FULL = "ok", "event_full"


def ms(seconds) -> float | None:
    return None if seconds is None else round(seconds * 1000, 2)


def percentile(values: list[float], fraction: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _per(total, count):
    return round(total / count, 3) if count else None


def summarize(strategy, clients, capacity, runs, stored, cost) -> dict:
    records = [r for run in runs for r in run["records"]]
    wall = max(r["finished"] for r in runs) - min(r["started"] for r in runs)
    booked = [r for r in records if r[0] == OK]
    rejected = [r for r in records if r[0] == FULL]
    outcomes = {}
    for record in records:
        outcomes[record[0]] = outcomes.get(record[0], 0) + 1
    latencies = [r[1] for r in records]
    return {
        "strategy": strategy, "clients": clients, "capacity": capacity, "supported": True,
        "attempts": len(records), "booked": len(booked), "rejected_full": len(rejected),
        "outcomes": outcomes, "seconds": round(wall, 3),
        "bookings_per_second": round(len(booked) / wall, 2) if wall else None,
        "requests_per_booking": _per(sum(r[2] for r in booked), len(booked)),
        "requests_per_rejection": _per(sum(r[2] for r in rejected), len(rejected)),
        "condition_failures_per_booking": _per(sum(r[4] for r in booked), len(booked)),
        "retries_per_booking": _per(sum(max(r[3] - 1, 0) for r in booked), len(booked)),
        "p50_ms": ms(percentile(latencies, 0.50)), "p99_ms": ms(percentile(latencies, 0.99)),
        "stored_registrations": stored, "overbooked": max(0, stored - capacity),
        "wcu_per_booking": round(cost["mean"], 2) if cost["mean"] is not None else None,
        "wcu_last_seat": cost["last_seat"],
        # Writes whose first answer left the outcome unknown (lost, timed out), and how
        # many of those the service could not resolve before answering.
        "first_attempt_unknown": sum(r.get("unknown", {}).get("first_attempt", 0)
                                     for r in runs),
        "unknown_unresolved": sum(r.get("unknown", {}).get("unresolved", 0) for r in runs),
    }


def unsupported(strategy, clients, capacity) -> dict:
    return {"strategy": strategy, "clients": clients, "capacity": capacity, "supported": False}


def add_ratios(rows: list[dict]) -> None:
    """Set ``ratio_to_unguarded``: bookings per second over unguarded's, same client count."""
    baseline = {r["clients"]: r.get("bookings_per_second") for r in rows
                if r["strategy"] == "unguarded" and r["supported"]}
    for row in rows:
        base, rate = baseline.get(row["clients"]), row.get("bookings_per_second")
        row["ratio_to_unguarded"] = round(rate / base, 2) if base and rate is not None else None


__all__ = ["mean", "ms", "percentile", "summarize", "unsupported", "add_ratios"]
