"""Render benchmark results: text tables, the machine description, and a PNG chart."""
import os
import platform

from booking.management.output import table

HOT_COLUMNS = (
    ("STRATEGY", "strategy"), ("CLIENTS", "clients"), ("BOOKED", "booked"),
    ("FULL", "rejected_full"), ("BOOK/S", "bookings_per_second"),
    ("xUNGUARDED", "ratio_to_unguarded"), ("REQ/BOOK", "requests_per_booking"),
    ("REQ/REJECT", "requests_per_rejection"), ("CCF/BOOK", "condition_failures_per_booking"),
    ("RETRY/BOOK", "retries_per_booking"), ("P50ms", "p50_ms"), ("P99ms", "p99_ms"),
    ("OVERBOOKED", "overbooked"), ("WCU/BOOK", "wcu_per_booking"),
    ("MAIL_REQ/BOOK", "mail_requests_per_booking"), ("UNKNOWN", "first_attempt_unknown"),
    ("UNRESOLVED", "unknown_unresolved"),
)
STREAMS_COLUMNS = (
    ("STRATEGY", "strategy"), ("CLIENTS", "clients"), ("ACCEPTED", "booked"),
    ("ACCEPT/S", "answers_per_second"), ("xLOCK_TABLE", "answers_ratio_to_lock_table"),
    ("REQ/ACCEPT", "requests_per_booking"), ("CONFIRMED", "confirmed"),
    ("REJECTED", "rejected"), ("PENDING", "still_pending"),
    ("DECIDE_P50ms", "decision_p50_ms"), ("DECIDE_P99ms", "decision_p99_ms"),
    ("DECISIONS/S", "decisions_per_second"), ("REQ/DECISION", "decider_requests_per_decision"),
    ("OVERBOOKED", "overbooked"), ("TWICE", "decided_twice"), ("CHANGED", "decisions_changed"),
    ("KILLED_MID_RUN", "decider_killed_mid_run"), ("KILLED_AT_s", "decider_killed_after_seconds"),
)
COST_COLUMNS = (
    ("STRATEGY", "strategy"), ("CAPACITY", "capacity"), ("CREATE_REQ", "create_requests"),
    ("CREATE_WCU", "create_wcu"), ("CREATE_S", "create_seconds"),
    ("BOOK_REQ", "booking_requests"), ("BOOK_ms", "booking_ms"),
    ("BOOK_WCU_MEAN", "wcu_mean"), ("BOOK_WCU_LAST_SEAT", "wcu_last_seat"),
)


def machine() -> dict:
    model = ""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            model = next((line.split(":", 1)[1].strip() for line in cpuinfo
                          if line.startswith("model name")), "")
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu_model": model or platform.processor(),
            "python": platform.python_version(), "platform": platform.platform()}


def _cell(row, key):
    if not row.get("supported", True) and key not in ("strategy", "clients", "capacity"):
        return "not supported" if key in ("booked", "create_requests") else ""
    value = row.get(key)
    return "-" if value is None else value


def text(results: dict) -> str:
    hot = [[_cell(r, k) for _, k in HOT_COLUMNS] for r in results["hot_event"]]
    cost_rows = [{**r, "wcu_mean": _round((r.get("booking_wcu") or {}).get("mean")),
                  "wcu_last_seat": (r.get("booking_wcu") or {}).get("last_seat")}
                 for r in results["capacity_cost"]]
    parts = ["Hot event: " + _describe(results["config"]),
             table([h for h, _ in HOT_COLUMNS], hot)]
    if results.get("streams"):
        parts += ["", "Streams (accepted at once, decided in order by a stream decider in "
                      "its own process, SIGKILLed while the clients book and restarted):",
                  table([h for h, _ in STREAMS_COLUMNS],
                        [[_cell(r, k) for _, k in STREAMS_COLUMNS] for r in results["streams"]])]
    if cost_rows:
        parts += ["", "Cost by capacity (one client; booking figures extrapolated to a "
                      "full event):",
                  table([h for h, _ in COST_COLUMNS],
                        [[_cell(r, k) for _, k in COST_COLUMNS] for r in cost_rows])]
    return "\n".join(parts)


def _round(value):
    return None if value is None else round(value, 2)


def _describe(config: dict) -> str:
    return (f"capacity {config['capacity']}, {config['attempts']} attempts, clients "
            f"{','.join(map(str, config['clients']))}, {config['processes']} process(es)")


def chart(results: dict, path: str) -> None:
    """Write a PNG: bookings per second and requests per booking, per strategy and clients."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    rows = [r for r in results["hot_event"] if r.get("supported")]
    strategies = list(dict.fromkeys(r["strategy"] for r in rows))
    clients = list(dict.fromkeys(r["clients"] for r in rows))
    figure, axes = pyplot.subplots(1, 2, figsize=(11, 4.2))
    width = 0.8 / max(1, len(strategies))
    for n, strategy in enumerate(strategies):
        by_clients = {r["clients"]: r for r in rows if r["strategy"] == strategy}
        xs = [i + n * width for i in range(len(clients))]
        for axis, key in zip(axes, ("bookings_per_second", "requests_per_booking")):
            axis.bar(xs, [by_clients.get(c, {}).get(key) or 0 for c in clients], width,
                     label=strategy)
    titles = ("Successful bookings per second", "DynamoDB requests per booking")
    for axis, title in zip(axes, titles):
        axis.set_title(title)
        axis.set_xticks([i + width * (len(strategies) - 1) / 2 for i in range(len(clients))])
        axis.set_xticklabels([f"{c} clients" for c in clients])
    axes[0].legend()
    figure.suptitle("bench_booking: " + _describe(results["config"]))
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
