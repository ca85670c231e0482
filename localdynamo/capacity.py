"""DynamoDB's per-partition capacity limits, for the proxy in front of DynamoDB Local.

Off unless a spec such as ``partition_wcu=1000,partition_rcu=3000,scale=0.01,burst_s=0``
is given (``dynamodb_local --capacity`` or ``LOCAL_DYNAMODB_CAPACITY``). Then every item
of a table or an index is a partition with a write and a read token bucket, refilled at
``partition_wcu * scale`` and ``partition_rcu * scale`` units per second (the best case
adaptive capacity reaches by splitting for heat; one item never gets more than one
partition). ``unit=key`` charges each partition-key value's whole item collection to one
bucket instead (the case before any split). A bucket holds ``max(burst_s, 1)`` seconds of
units and starts full.

Charges follow DynamoDB's published rules (item size = attribute names plus values):

- a write costs 1 WCU per started KB of the larger of the old and the new item, at least
  1, also when its condition fails; a transactional write twice that, per item, also when
  the transaction is cancelled; each index entry the write changes costs the same again
  on the index's partition;
- a strongly consistent read costs 1 RCU per started 4 KB, an eventually consistent one
  half; a transactional read twice; a Query or a Scan by the total size it read, charged
  to the collection it reads (a Scan: the whole table or index); batches per item.

A request is admitted when every bucket it touches holds at least its charge (or is full,
for a charge larger than a whole bucket); it is then charged in full, which may leave a
bucket in debt. A read's size is known only from its answer: it is admitted on its least
charge and settled afterwards. So over any window of T seconds one partition accepts at
most ``rate * T`` plus one bucket plus one request's charge. A refused request is not
applied: the proxy answers as DynamoDB does (proxy.py).
"""
import base64
import math
import re
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from decimal import Decimal

KB = 1024
WRITE, READ = "write", "read"
UNITS = ("item", "key")


class CapacitySpecError(ValueError):
    """A capacity spec that cannot be parsed; the message says which part."""


@dataclass(frozen=True)
class CapacitySpec:
    partition_wcu: float = 1000.0
    partition_rcu: float = 3000.0
    scale: float = 1.0
    burst_s: float = 0.0
    unit: str = "item"

    @property
    def write_rate(self) -> float:
        return self.partition_wcu * self.scale

    @property
    def read_rate(self) -> float:
        return self.partition_rcu * self.scale

    @classmethod
    def parse(cls, text: str) -> "CapacitySpec":
        """Parse ``name=value,...`` (numbers > 0, burst_s >= 0, unit item or key)."""
        fields = {}
        for part in filter(None, (p.strip() for p in (text or "").split(","))):
            name, _, value = (s.strip() for s in part.partition("="))
            if name == "unit":
                if value not in UNITS:
                    raise CapacitySpecError(f"unit must be one of {', '.join(UNITS)}")
                fields[name] = value
            elif name in ("partition_wcu", "partition_rcu", "scale", "burst_s"):
                try:
                    fields[name] = float(value)
                except ValueError:
                    raise CapacitySpecError(f"bad value in {part!r}") from None
                if fields[name] < 0 or (fields[name] == 0 and name != "burst_s"):
                    raise CapacitySpecError(f"bad value in {part!r}")
            else:
                raise CapacitySpecError(
                    f"unknown setting {name!r} (known: partition_wcu, partition_rcu, scale, "
                    "burst_s, unit)")
        return cls(**fields)


# --- Sizes, by DynamoDB's rules, on the wire format ({"S": "..."}, {"N": "12"}, ...) ---

def number_size(text: str) -> int:
    digits = Decimal(text).normalize().as_tuple().digits
    return (len(digits) + 1) // 2 + 1


def value_size(value: dict) -> int:
    (kind, content), = value.items()
    if kind == "S":
        return len(content.encode("utf-8"))
    if kind == "N":
        return number_size(content)
    if kind == "B":
        return len(base64.b64decode(content))
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(s.encode("utf-8")) for s in content)
    if kind == "NS":
        return sum(number_size(n) for n in content)
    if kind == "BS":
        return sum(len(base64.b64decode(b)) for b in content)
    if kind == "M":
        return 3 + sum(1 + len(k.encode("utf-8")) + value_size(v) for k, v in content.items())
    if kind == "L":
        return 3 + sum(1 + value_size(v) for v in content)
    raise ValueError(f"no DynamoDB size rule for {kind!r}")


def item_size(item: dict | None) -> int:
    return sum(len(name.encode("utf-8")) + value_size(v) for name, v in (item or {}).items())


def write_units(size: int, *, transactional: bool = False) -> float:
    return max(1, math.ceil(size / KB)) * (2 if transactional else 1)


def read_units(size: int, *, consistent: bool = True, transactional: bool = False) -> float:
    units = max(1, math.ceil(size / (4 * KB)))
    return units * (2 if transactional else 1) * (1 if consistent or transactional else 0.5)


# --- Partitions ------------------------------------------------------------------------

@dataclass(frozen=True)
class Schema:
    """A table's key attributes and its indexes' (name -> (hash, range or None))."""

    hash_key: str
    range_key: str | None
    indexes: dict

    @classmethod
    def from_description(cls, table: dict) -> "Schema":
        def keys(schema):
            names = {k["KeyType"]: k["AttributeName"] for k in schema}
            return names["HASH"], names.get("RANGE")
        indexes = {i["IndexName"]: keys(i["KeySchema"])
                   for i in table.get("GlobalSecondaryIndexes", []) +
                   table.get("LocalSecondaryIndexes", [])}
        return cls(*keys(table["KeySchema"]), indexes)

    def key_of(self, item: dict) -> dict:
        return {n: item[n] for n in (self.hash_key, self.range_key) if n and n in item}


def plain(value: dict | None) -> str:
    return "" if value is None else str(next(iter(value.values())))


@dataclass(frozen=True)
class Charge:
    table: str
    partition: str  # "index/value[/value]" names the bucket within the table
    kind: str       # WRITE or READ
    units: float
    on_index: bool = False  # an index entry's write: not made when the write is refused


class Bucket:
    __slots__ = ("tokens", "stamp")

    def __init__(self, tokens: float, stamp: float):
        self.tokens, self.stamp = tokens, stamp


class CapacityModel:
    """Token buckets per partition, the admission rule, and what was consumed."""

    def __init__(self, spec: CapacitySpec, clock=time.monotonic):
        self.spec, self.clock = spec, clock
        self.lock = threading.Lock()
        self.buckets: dict[tuple, Bucket] = {}
        self.started = clock()
        self.consumed = defaultdict(Counter)   # table -> {"write": units, "read": units}
        self.throttles = Counter()             # table -> refused requests
        self.by_key = Counter()                # (table, partition, kind) -> units
        self.requests = Counter()              # table -> requests admitted that touch it
        # (table, partition, kind, whole seconds since the start) -> units: the peaks
        self.by_second = Counter()

    def partition(self, index: str, schema_keys: tuple, item: dict, table_key: dict) -> str:
        """The bucket's name for ``item`` in the table (index "") or one of its indexes."""
        hash_key, range_key = schema_keys
        values = [plain(item.get(hash_key))]
        if self.spec.unit == "item":
            values.append(plain(item.get(range_key)) if range_key else "")
            if index:  # an index entry is one item per base item
                values.extend(plain(v) for _, v in sorted(table_key.items()))
        return "/".join([index, *values] if index else values).rstrip("/")

    def rate(self, kind: str) -> float:
        return self.spec.write_rate if kind == WRITE else self.spec.read_rate

    def _bucket(self, charge: Charge, now: float) -> Bucket:
        rate = self.rate(charge.kind)
        size = rate * max(self.spec.burst_s, 1.0)
        bucket = self.buckets.get((charge.table, charge.partition, charge.kind))
        if bucket is None:
            bucket = self.buckets[(charge.table, charge.partition, charge.kind)] = Bucket(size, now)
        bucket.tokens = min(size, bucket.tokens + (now - bucket.stamp) * rate)
        bucket.stamp = now
        return bucket

    def admit(self, charges: list[Charge]) -> int | None:
        """Charge every bucket, or none: the position of the first one short, or None."""
        with self.lock:
            now = self.clock()
            totals = Counter()
            for charge in charges:
                totals[(charge.table, charge.partition, charge.kind)] += charge.units
            for position, charge in enumerate(charges):
                bucket = self._bucket(charge, now)
                need = totals[(charge.table, charge.partition, charge.kind)]
                full = self.rate(charge.kind) * max(self.spec.burst_s, 1.0)
                if bucket.tokens < min(need, full):
                    self.throttles[charge.table] += 1
                    return position
            for charge in charges:
                self._spend(charge, now)
            for table in {charge.table for charge in charges}:
                self.requests[table] += 1
            return None

    def settle(self, charges: list[Charge]) -> None:
        """Charge (or refund) what an admitted request turned out to cost beyond its
        admitted charge."""
        with self.lock:
            now = self.clock()
            for charge in charges:
                if charge.units:
                    self._spend(charge, now)

    def _spend(self, charge: Charge, now: float) -> None:
        self._bucket(charge, now).tokens -= charge.units
        self.consumed[charge.table][charge.kind] += charge.units
        self.by_key[(charge.table, charge.partition, charge.kind)] += charge.units
        second = int(now - self.started)
        self.by_second[(charge.table, charge.partition, charge.kind, second)] += charge.units

    def peaks(self, hottest: int) -> list[dict]:
        """The partitions with the most units in one whole second (since the start or the
        last reset) against their limit, highest share first: each one's busiest second."""
        busiest = {}
        for (table, partition, kind, second), units in self.by_second.items():
            if units > busiest.get((table, partition, kind), (0, -1.0))[1]:
                busiest[(table, partition, kind)] = (second, units)
        ranked = sorted(busiest.items(), key=lambda kv: -kv[1][1] / self.rate(kv[0][2]))
        return [{"table": t, "partition": p, "kind": k, "second": second, "units": units,
                 "limit_per_second": self.rate(k), "share_of_limit": units / self.rate(k)}
                for (t, p, k), (second, units) in ranked[:hottest]]

    def snapshot(self, hottest: int = 10) -> dict:
        with self.lock:
            elapsed = max(self.clock() - self.started, 1e-9)
            return {
                "spec": self.spec.__dict__,
                "seconds": elapsed,
                "limits": {"write_units_per_second": self.spec.write_rate,
                           "read_units_per_second": self.spec.read_rate},
                "tables": {table: {"write_units": units[WRITE], "read_units": units[READ],
                                   "throttles": self.throttles[table],
                                   "requests": self.requests[table]}
                           for table, units in self.consumed.items()} | {
                    table: {"write_units": 0, "read_units": 0, "throttles": n, "requests": 0}
                    for table, n in self.throttles.items() if table not in self.consumed},
                "hottest": [{"table": t, "partition": p, "kind": k, "units": u,
                             "units_per_second": u / elapsed}
                            for (t, p, k), u in self.by_key.most_common(hottest)],
                "peaks": self.peaks(hottest),
            }

    def reset(self) -> None:
        with self.lock:
            self.buckets.clear()
            self.consumed.clear()
            self.throttles.clear()
            self.by_key.clear()
            self.by_second.clear()
            self.requests.clear()
            self.started = self.clock()


# --- What a request costs ----------------------------------------------------------------

KEY_CONDITION = re.compile(r"(#?\w+)\s*=\s*(:\w+)")


def query_hash_value(request: dict, hash_key: str) -> dict | None:
    """The partition-key value a Query's KeyConditionExpression binds (None if unknown)."""
    names = request.get("ExpressionAttributeNames", {})
    values = request.get("ExpressionAttributeValues", {})
    for name, placeholder in KEY_CONDITION.findall(request.get("KeyConditionExpression", "")):
        if names.get(name, name) == hash_key:
            return values.get(placeholder)
    conditions = request.get("KeyConditions", {}).get(hash_key, {})
    return (conditions.get("AttributeValueList") or [None])[0]


def update_growth(request: dict) -> int:
    """An upper bound on what an update adds: the sizes of its names and values."""
    return (sum(len(n.encode("utf-8")) for n in request.get("ExpressionAttributeNames", {}).values())
            + sum(value_size(v) for v in request.get("ExpressionAttributeValues", {}).values()))


class Meter:
    """What one data-plane request costs, on which partitions; ``call(operation, document)``
    asks DynamoDB Local itself (a table's key schema, an item's size before a write)."""

    def __init__(self, model: CapacityModel, call):
        self.model, self.call = model, call
        self.schemas: dict[str, Schema] = {}

    def schema(self, table: str) -> Schema:
        if table not in self.schemas:
            description = self.call("DescribeTable", {"TableName": table})["Table"]
            self.schemas[table] = Schema.from_description(description)
        return self.schemas[table]

    def old_item(self, table: str, key: dict) -> dict | None:
        return self.call("GetItem", {"TableName": table, "Key": key,
                                     "ConsistentRead": True}).get("Item")

    def partition(self, table: str, item: dict, index: str = "") -> str:
        schema = self.schema(table)
        keys = schema.indexes[index] if index else (schema.hash_key, schema.range_key)
        return self.model.partition(index, keys, item, schema.key_of(item))

    # -- before: the charges to admit, each with the position of its request item ------

    def charges(self, operation: str, request: dict) -> list[tuple[int, Charge]]:
        handler = getattr(self, f"_{operation}", None)
        return handler(request) if handler else []

    def _PutItem(self, r):
        return [(0, c) for c in self.write(r["TableName"], "Put", r)]

    def _UpdateItem(self, r):
        return [(0, c) for c in self.write(r["TableName"], "Update", r)]

    def _DeleteItem(self, r):
        return [(0, c) for c in self.write(r["TableName"], "Delete", r)]

    def _BatchWriteItem(self, r):
        return [(0, c) for table, requests in r["RequestItems"].items() for one in requests
                for kind, body in one.items()
                for c in self.write(table, kind.removesuffix("Request"), body)]

    def _TransactWriteItems(self, r):
        return [(position, c) for position, one in enumerate(r["TransactItems"])
                for kind, body in one.items()
                for c in self.write(body["TableName"], kind, body, transactional=True)]

    def _GetItem(self, r):
        return [(0, self.read(r["TableName"], r["Key"], r.get("ConsistentRead", False)))]

    def _BatchGetItem(self, r):
        return [(0, self.read(table, key, body.get("ConsistentRead", False)))
                for table, body in r["RequestItems"].items() for key in body["Keys"]]

    def _TransactGetItems(self, r):
        return [(position, self.read(one["Get"]["TableName"], one["Get"]["Key"], True, True))
                for position, one in enumerate(r["TransactItems"])]

    def _Query(self, r):
        return [(0, self.collection_read(r, query=True))]

    def _Scan(self, r):
        return [(0, self.collection_read(r, query=False))]

    def write(self, table: str, kind: str, body: dict, *, transactional=False) -> list[Charge]:
        schema = self.schema(table)
        key = schema.key_of(body["Item"]) if kind == "Put" else body["Key"]
        old = self.old_item(table, key)
        new = body["Item"] if kind == "Put" else None
        size = {"Put": max(item_size(old), item_size(new)),
                "Update": (item_size(old) or item_size(key)) + update_growth(body)}.get(
                    kind, item_size(old))
        charges = [Charge(table, self.partition(table, key), WRITE,
                          write_units(size, transactional=transactional))]
        if kind != "ConditionCheck":
            charges += self.index_writes(table, schema, kind, body, old, new, size)
        return charges

    def index_writes(self, table, schema, kind, body, old, new, size) -> list[Charge]:
        """One write per index entry the item leaves or joins (one if it stays put)."""
        charges = []
        assigned = dict(KEY_CONDITION.findall(body.get("UpdateExpression", "")))
        names = body.get("ExpressionAttributeNames", {})
        values = body.get("ExpressionAttributeValues", {})
        for index, (hash_key, _) in schema.indexes.items():
            entries = {self.partition(table, old, index)} if old and hash_key in old else set()
            if new and hash_key in new:
                entries.add(self.partition(table, new, index))
            for name, placeholder in assigned.items() if kind == "Update" else ():
                if names.get(name, name) == hash_key and placeholder in values:
                    entries.add(self.partition(table, {**(old or body["Key"]),
                                                       hash_key: values[placeholder]}, index))
            charges += [Charge(table, entry, WRITE, write_units(size), on_index=True)
                        for entry in entries]
        return charges

    def read(self, table, key, consistent, transactional=False) -> Charge:
        return Charge(table, self.partition(table, key), READ,
                      read_units(0, consistent=consistent, transactional=transactional))

    def collection_read(self, r: dict, *, query: bool) -> Charge:
        table, index = r["TableName"], r.get("IndexName", "")
        schema = self.schema(table)
        if query:
            hash_key = schema.indexes[index][0] if index else schema.hash_key
            value = plain(query_hash_value(r, hash_key))
        else:
            value = "*"  # a Scan reads the whole table or index
        partition = f"{index}/{value}" if index else value
        return Charge(table, partition, READ, read_units(0, consistent=r.get("ConsistentRead", False)))

    # -- after: what the reads' answers show they cost beyond their least charge --------

    def settlement(self, operation: str, request: dict, answer: dict,
                   admitted: list[tuple[int, Charge]]) -> list[Charge]:
        """What an answer shows beyond the charges admitted: a refused write (a failed
        condition, a cancelled transaction) made no index entry; a read its size."""
        if "__type" in answer:
            return [Charge(c.table, c.partition, c.kind, -c.units)
                    for _, c in admitted if c.on_index]
        sizes = self.read_sizes(operation, request, answer)
        if sizes is None:
            return []
        extra = []
        for (_, charge), size in zip(admitted, sizes):
            consistent = charge.units >= 1
            full = read_units(size, consistent=consistent,
                              transactional=operation == "TransactGetItems")
            extra.append(Charge(charge.table, charge.partition, READ, full - charge.units))
        return extra

    def read_sizes(self, operation, request, answer) -> list[int] | None:
        if operation == "GetItem":
            return [item_size(answer.get("Item"))]
        if operation in ("Query", "Scan"):
            return [sum(item_size(item) for item in answer.get("Items", []))]
        if operation == "TransactGetItems":
            return [item_size(one.get("Item")) for one in answer.get("Responses", [])]
        if operation == "BatchGetItem":
            found = {}
            for table, items in answer.get("Responses", {}).items():
                schema = self.schema(table)
                for item in items:
                    found[(table, self.partition(table, schema.key_of(item)))] = item_size(item)
            return [found.get((table, self.partition(table, key)), 0)
                    for table, body in request["RequestItems"].items() for key in body["Keys"]]
        return None
