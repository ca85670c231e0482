"""The torture run's summary: as a JSON-able dict, and as text for a terminal."""
import json
from collections import Counter

from .checker import History, quotas_of, seats_taken

SHOWN_PER_KIND = 3  # anomalies printed with their history excerpt, per kind


def summary(config, result: dict) -> dict:
    records, found = result["records"], result["check"]
    history = History(records)
    shown = Counter()
    anomalies = []
    for anomaly in found.anomalies:
        entry = anomaly.as_dict()
        if shown[anomaly.kind] < SHOWN_PER_KIND:
            entry["history"] = history.excerpt(anomaly.event_id, anomaly.email,
                                               anomaly.request_id)
        shown[anomaly.kind] += 1
        anomalies.append(entry)
    return {
        "config": {**vars(config), "fault_spec": config.fault_spec()},
        "seconds": round(result["seconds"], 2),
        "operations": len(records),
        "operations_per_second": round(len(records) / max(result["seconds"], 1e-9), 1),
        "steps": dict(Counter(r["step"] for r in records)),
        "outcomes": dict(Counter(r["outcome"] for r in records)),
        "outcomes_by_step": _by_step(records),
        # Definite refusals (full, already registered, ...) are the product working: counted
        # apart from failures, which are the anomalies below.
        "expected_refusals": dict(Counter(r["code"] for r in records if r["outcome"] == "fail")),
        "failures": len(found.anomalies),
        "codes": dict(Counter(r["code"] or "ok" for r in records)),
        "unknown_resolved": {"bookings_applied": found.unknown_applied,
                             "bookings_not_applied": found.unknown_not_applied,
                             "removals_by_unknown_cancel": found.removals_by_unknown_cancel},
        "faults": result["faults"],
        "mail": {"sent": sum(result.get("mails", {}).values()),
                 "messages": len(result.get("mails", {})),
                 "still_owed": len(result.get("owed", []))},
        "events": [_event_summary(e, result) for e in result["events"]],
        # streams: the stream decider process was killed (SIGKILL) and restarted this often.
        "decider_kills": result.get("decider_kills", 0),
        "door": _door_summary(result.get("door")),
        "anomaly_counts": found.counts(),
        "anomalies": anomalies,
    }


def _door_summary(door: dict | None) -> dict | None:
    """Scans sent and their answers (``unknown``: no answer, e.g. a lost response)."""
    if door is None:
        return None
    records = door["records"]
    return {"scans": len(records), "careless": door["setup"].get("careless", False),
            "answers": dict(Counter(r["status"] or "unknown" for r in records)),
            "repeated_nonces": len(records) - len({(r["list"], r["nonce"]) for r in records})}


def _by_step(records: list[dict]) -> dict:
    """Step kind -> outcome -> invocations (``order``: orders booked, ``partial``: parts of
    orders freed, each counted where it was a new request)."""
    found: dict = {}
    for record in records:
        outcomes = found.setdefault(record["step"], {})
        outcomes[record["outcome"]] = outcomes.get(record["outcome"], 0) + 1
    return found


def _event_summary(event: dict, result: dict) -> dict:
    state, peak = result["final"][event["id"]], result["peaks"][event["id"]]
    # Registrations holding a seat (streams also stores pending and rejected ones).
    seated = [r for r in state["registrations"] if r.get("status", "confirmed") == "confirmed"]
    stored = seats_taken(event, [r.get("tickets") for r in seated])
    counters = state.get("quotas") or {"capacity": state["confirmed"]}
    peaks = {"capacity": peak, **peak.get("quotas", {})}
    quotas = {quota: {"capacity": capacity, "stored": stored.get(quota, 0),
                      "counter": counters.get(quota, 0),
                      "peak_seen": max(peaks.get(quota, {}).get("confirmed", 0),
                                       peaks.get(quota, {}).get("stored", 0))}
              for quota, capacity in quotas_of(event).items()}
    code = event.get("code")
    if code:  # the plain event's access code: its uses and the orders holding it
        code = {**code, "uses": state.get("code_uses", {}).get(code["code"], 0),
                "holders": sum(r.get("access_code") == code["code"]
                               and r.get("status") != "rejected"
                               for r in state["registrations"])}
    return {**{k: v for k, v in event.items() if k not in ("quotas", "code")},
            "orders_stored": len(seated), **quotas["capacity"], "quotas": quotas,
            "audit_violations": len(state["violations"]), **({"code": code} if code else {})}


def save_history(config, result: dict, path: str) -> None:
    """Everything the checker reads (history, events, final state, peaks, faults), as JSON."""
    saved = {key: result.get(key) for key in ("events", "final", "peaks", "faults", "seconds",
                                              "mails", "owed", "door")}
    saved["config"] = vars(config)
    saved["records"] = sorted(result["records"], key=lambda r: r["invoked"])
    with open(path, "w", encoding="utf-8") as out:
        json.dump(saved, out)


def load_history(path: str) -> tuple[dict, dict]:
    """A saved run as (config fields, result without the check), to check it again."""
    with open(path, encoding="utf-8") as saved_file:
        saved = json.load(saved_file)
    return saved.pop("config"), saved


def text(report: dict) -> str:
    config = report["config"]
    lines = [
        f"Torture run: {config['processes']} processes x {config['threads']} threads, "
        f"seed {config['seed']}, faults: {config['fault_spec'] or 'none'}",
        f"Request rows {'on' if config['request_history'] else 'OFF'}, ambiguity checks "
        f"{'on' if config['ambiguity_checks'] else 'OFF'}",
        f"Operations: {report['operations']} in {report['seconds']} s "
        f"({report['operations_per_second']}/s); steps: {_counts(report['steps'])}",
        f"Answers: {report['outcomes'].get('ok', 0)} succeeded, "
        f"{sum(report['expected_refusals'].values())} expected refusals "
        f"({_counts(report['expected_refusals']) or 'none'}), "
        f"{report['outcomes'].get('unknown', 0)} unknown (checked against the final state); "
        f"failures: {report['failures']}",
        f"Outcomes: {_counts(report['outcomes'])}; by code: {_counts(report['codes'])}",
        "Unknown outcomes resolved by the final state: "
        f"{_counts(report['unknown_resolved'])}",
        f"Faults injected: {_counts(report['faults']) or 'none'}",
        f"E-mails: {_counts(report['mail'])}",
        *([f"Stream decider killed (SIGKILL) and restarted: {report['decider_kills']}"]
          if report.get("decider_kills") else []),
        "Events:",
    ]
    for event in report["events"]:
        kind = "orders" if event.get("orders") else "plain"
        lines.append(f"  {event['strategy']:<10} {kind:<6} {event['id']}  capacity "
                     f"{event['capacity']}, stored {event['stored']}, counter "
                     f"{event['counter']}, peak seen {event['peak_seen']}, audit violations "
                     f"{event['audit_violations']}")
        for quota, seats in event.get("quotas", {}).items():
            if quota != "capacity":
                lines.append(f"{'':<20}quota {quota}: capacity {seats['capacity']}, stored "
                             f"{seats['stored']}, counter {seats['counter']}, peak seen "
                             f"{seats['peak_seen']}")
    total = len(report["anomalies"])
    lines.append(f"Anomalies: {total}" + (f" ({_counts(report['anomaly_counts'])})"
                                          if total else ""))
    for anomaly in report["anomalies"]:
        if "history" not in anomaly:
            continue
        lines.append(f"- {anomaly['kind']}: event {anomaly['event_id']}"
                     + (f", {anomaly['email']}" if anomaly["email"] else "")
                     + (f", request {anomaly['request_id']}" if anomaly["request_id"] else "")
                     + f": {anomaly['detail']}")
        lines.extend(f"    {line}" for line in anomaly["history"])
    return "\n".join(lines)


def _counts(counts: dict) -> str:
    return ", ".join(f"{key} {value}" for key, value in sorted(counts.items()))
