"""A Jepsen-style torture run: random bookings, cancellations and repeated requests from
several OS processes against an embedded DynamoDB that injects faults, every operation
recorded, and a checker that looks for broken invariants in the history afterwards.

``plan`` says what each thread does, ``worker`` does it in spawned processes, ``runner``
sets up and gathers, ``checker`` judges, ``report`` prints (docs/reliability.md).
"""
