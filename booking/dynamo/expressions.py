"""DynamoDB expressions as objects: conditions, update actions, projections, key conditions.

The model is PynamoDB's expression objects: a path (``attr("holds", email)``) compares,
tests and changes itself; conditions combine with ``&``, ``|`` and ``~``; ``Actions``
collects SET/ADD/REMOVE/DELETE clauses. Nothing here is written by hand: ``compile``
generates the ``#n``/``:v`` placeholders of one request and the values' wire form (boto3's
own ``TypeSerializer``, as ``codec.py``). A path segment is written plainly when it is a
plain name that is not one of DynamoDB's reserved words, else through a placeholder; an
equal value reuses its placeholder. So a request names and sends no more than it must
(the capacity proxy and DynamoDB size an update by its names and values).

    condition = attr("event_id").exists() & attr("confirmed_count").lt(attr("capacity"))
    update = Actions().set("confirmed_count", attr("confirmed_count").plus(1)).remove(
        attr("holds", email))
    request = compile(condition=condition, update=update)  # the client's keyword arguments

boto3's ``boto3.dynamodb.conditions`` builds conditions too, but splits paths on dots (an
e-mail key is one segment) and has no update actions; this module keeps one vocabulary
for all three.

Transactions: a write is ``Members``, typed members (``Put``, ``Update``, ``Delete``,
``ConditionCheck`` of one table) each under a name (``registration``, ``quota:capacity``,
``request``). When DynamoDB cancels the transaction, ``Members.refusal`` reads its
reasons by those names, so a decode asks "was ``registration`` refused, and what did it
find" instead of counting positions. (A member may still come as the client's ("Put",
body) pair, ``Op``, from code not yet moved to the typed members.)
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from dataclasses import replace as dataclasses_replace
from typing import Any, Protocol, Union

from boto3.dynamodb.types import TypeSerializer

from booking.dynamo.errors import CONDITION_FAILED, TransactionCancelled
from booking.dynamo.reserved_words import RESERVED_WORDS

_serializer = TypeSerializer()
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


class Placeholders:
    """The names and values of one request, each given a generated placeholder."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.values: dict[str, Any] = {}  # placeholder -> the value in wire form
        self._name_of: dict[str, str] = {}
        self._value_of: dict[str, str] = {}

    def name(self, segment: str) -> str:
        """A path segment as written: itself when plain, else its ``#n`` placeholder."""
        if _PLAIN.match(segment) and segment.upper() not in RESERVED_WORDS:
            return segment
        if segment not in self._name_of:
            placeholder = f"#n{len(self._name_of)}"
            self._name_of[segment] = placeholder
            self.names[placeholder] = segment
        return self._name_of[segment]

    def value(self, value: object) -> str:
        """A value's ``:v`` placeholder (one per distinct value)."""
        wire = _serializer.serialize(value)
        seen = json.dumps(wire, sort_keys=True, default=str)
        if seen not in self._value_of:
            placeholder = f":v{len(self._value_of)}"
            self._value_of[seen] = placeholder
            self.values[placeholder] = wire
        return self._value_of[seen]


# --- operands ------------------------------------------------------------------------

class Operand:
    """What an expression compares or assigns: a path, a value, or a function of them."""

    def render(self, p: Placeholders) -> str:
        raise NotImplementedError

    # comparisons (a method each: ``==`` stays Python's equality)
    def eq(self, other: object) -> Condition:
        return Compare("=", self, operand(other))

    def ne(self, other: object) -> Condition:
        return Compare("<>", self, operand(other))

    def lt(self, other: object) -> Condition:
        return Compare("<", self, operand(other))

    def le(self, other: object) -> Condition:
        return Compare("<=", self, operand(other))

    def gt(self, other: object) -> Condition:
        return Compare(">", self, operand(other))

    def ge(self, other: object) -> Condition:
        return Compare(">=", self, operand(other))

    def between(self, low: object, high: object) -> Condition:
        return Between(self, operand(low), operand(high))

    def is_in(self, *values: object) -> Condition:
        return In(self, tuple(operand(v) for v in values))

    # arithmetic, for SET
    def plus(self, other: object) -> Operand:
        return Arithmetic(self, "+", operand(other))

    def minus(self, other: object) -> Operand:
        return Arithmetic(self, "-", operand(other))


@dataclass(frozen=True, eq=False)
class Path(Operand):
    """An attribute, or an entry of a map attribute (``attr("holds", email)``)."""

    segments: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.segments or not all(isinstance(s, str) and s for s in self.segments):
            raise ValueError(f"a path needs non-empty segments: {self.segments!r}")

    def render(self, p: Placeholders) -> str:
        return ".".join(p.name(segment) for segment in self.segments)

    def __truediv__(self, segment: str) -> Path:
        """The entry ``segment`` of this map attribute."""
        return Path((*self.segments, segment))

    def exists(self) -> Condition:
        return Function("attribute_exists", (self,))

    def not_exists(self) -> Condition:
        return Function("attribute_not_exists", (self,))

    def begins_with(self, prefix: object) -> Condition:
        return Function("begins_with", (self, operand(prefix)))

    def contains(self, member: object) -> Condition:
        return Function("contains", (self, operand(member)))

    def is_type(self, kind: str) -> Condition:
        """``attribute_type``: the stored value's type is ``kind`` ("NULL", "S", "N", ...)."""
        return Function("attribute_type", (self, operand(kind)))

    def size(self) -> Operand:
        return Size(self)

    def if_not_exists(self, default: object) -> Operand:
        return IfNotExists(self, operand(default))


@dataclass(frozen=True, eq=False)
class Value(Operand):
    value: object

    def render(self, p: Placeholders) -> str:
        return p.value(self.value)


@dataclass(frozen=True, eq=False)
class Arithmetic(Operand):
    left: Operand
    sign: str
    right: Operand

    def render(self, p: Placeholders) -> str:
        return f"{self.left.render(p)} {self.sign} {self.right.render(p)}"


@dataclass(frozen=True, eq=False)
class IfNotExists(Operand):
    path: Path
    default: Operand

    def render(self, p: Placeholders) -> str:
        return f"if_not_exists({self.path.render(p)}, {self.default.render(p)})"


@dataclass(frozen=True, eq=False)
class ListAppend(Operand):
    first: Operand
    second: Operand

    def render(self, p: Placeholders) -> str:
        return f"list_append({self.first.render(p)}, {self.second.render(p)})"


@dataclass(frozen=True, eq=False)
class Size(Operand):
    path: Path

    def render(self, p: Placeholders) -> str:
        return f"size({self.path.render(p)})"


def attr(*segments: str) -> Path:
    """The attribute ``segments[0]`` (further segments: entries of nested maps)."""
    return Path(tuple(segments))


def operand(value: object) -> Operand:
    """``value`` as an operand: operands as they are, anything else a value."""
    return value if isinstance(value, Operand) else Value(value)


def if_not_exists(path: Path | str, default: object) -> Operand:
    return IfNotExists(_path(path), operand(default))


def list_append(first: object, second: object) -> Operand:
    return ListAppend(operand(first), operand(second))


def _path(path: Path | str) -> Path:
    return path if isinstance(path, Path) else attr(path)


# --- conditions ----------------------------------------------------------------------

class Condition:
    """A ConditionExpression (or a filter, or a key condition): combine with & | ~."""

    def render(self, p: Placeholders) -> str:
        raise NotImplementedError

    def __and__(self, other: Condition) -> Condition:
        return Junction("AND", (self, other))

    def __or__(self, other: Condition) -> Condition:
        return Junction("OR", (self, other))

    def __invert__(self) -> Condition:
        return Not(self)

    def binding(self) -> int:
        """How tightly it binds: OR 1, AND 2, NOT 3, a comparison or function 9."""
        return 9

    def within(self, p: Placeholders, binding: int) -> str:
        """Rendered inside an operator that binds as tightly as ``binding``."""
        text = self.render(p)
        return f"({text})" if self.binding() < binding else text


@dataclass(frozen=True, eq=False)
class Compare(Condition):
    operator: str
    left: Operand
    right: Operand

    def render(self, p: Placeholders) -> str:
        return f"{self.left.render(p)} {self.operator} {self.right.render(p)}"


@dataclass(frozen=True, eq=False)
class Between(Condition):
    subject: Operand
    low: Operand
    high: Operand

    def render(self, p: Placeholders) -> str:
        return f"{self.subject.render(p)} BETWEEN {self.low.render(p)} AND {self.high.render(p)}"


@dataclass(frozen=True, eq=False)
class In(Condition):
    subject: Operand
    options: tuple[Operand, ...]

    def render(self, p: Placeholders) -> str:
        return f"{self.subject.render(p)} IN ({', '.join(o.render(p) for o in self.options)})"


@dataclass(frozen=True, eq=False)
class Function(Condition):
    name: str
    arguments: tuple[Operand, ...]

    def render(self, p: Placeholders) -> str:
        return f"{self.name}({', '.join(a.render(p) for a in self.arguments)})"


@dataclass(frozen=True, eq=False)
class Junction(Condition):
    operator: str  # AND | OR
    parts: tuple[Condition, ...]

    def binding(self) -> int:
        return 2 if self.operator == "AND" else 1

    def render(self, p: Placeholders) -> str:
        return f" {self.operator} ".join(part.within(p, self.binding()) for part in self.parts)


@dataclass(frozen=True, eq=False)
class Not(Condition):
    inner: Condition

    def binding(self) -> int:
        return 3

    def render(self, p: Placeholders) -> str:
        return f"NOT {self.inner.within(p, 4)}"


def all_of(conditions: Iterable[Condition]) -> Condition:
    """Every condition (``&`` over them); raises on none."""
    parts = tuple(conditions)
    if not parts:
        raise ValueError("all_of needs a condition")
    return parts[0] if len(parts) == 1 else Junction("AND", parts)


def any_of(conditions: Iterable[Condition]) -> Condition:
    """Some condition (``|`` over them); raises on none."""
    parts = tuple(conditions)
    if not parts:
        raise ValueError("any_of needs a condition")
    return parts[0] if len(parts) == 1 else Junction("OR", parts)


# --- update actions ------------------------------------------------------------------

@dataclass(frozen=True)
class Actions:
    """An UpdateExpression: SET, ADD, REMOVE and DELETE clauses, in the order added
    within each (a new ``Actions`` per call: share a base freely)."""

    sets: tuple[tuple[Path, Operand], ...] = ()
    adds: tuple[tuple[Path, Operand], ...] = ()
    removes: tuple[Path, ...] = ()
    deletes: tuple[tuple[Path, Operand], ...] = ()

    def set(self, path: Path | str, value: object) -> Actions:
        return Actions((*self.sets, (_path(path), operand(value))), self.adds, self.removes,
                       self.deletes)

    def set_all(self, values: dict[str, object]) -> Actions:
        """SET each attribute of ``values`` (in its order)."""
        actions = self
        for name, value in values.items():
            actions = actions.set(name, value)
        return actions

    def add(self, path: Path | str, value: object) -> Actions:
        """ADD a number to a number (0 when absent), or members to a set."""
        return Actions(self.sets, (*self.adds, (_path(path), operand(value))), self.removes,
                       self.deletes)

    def remove(self, *paths: Path | str) -> Actions:
        return Actions(self.sets, self.adds, (*self.removes, *map(_path, paths)), self.deletes)

    def delete(self, path: Path | str, members: object) -> Actions:
        """DELETE members from a set."""
        return Actions(self.sets, self.adds, self.removes,
                       (*self.deletes, (_path(path), operand(members))))

    def __add__(self, other: Actions) -> Actions:
        return Actions(self.sets + other.sets, self.adds + other.adds,
                       self.removes + other.removes, self.deletes + other.deletes)

    def __bool__(self) -> bool:
        return bool(self.sets or self.adds or self.removes or self.deletes)

    def render(self, p: Placeholders) -> str:
        clauses = []
        if self.sets:
            clauses.append("SET " + ", ".join(f"{path.render(p)} = {value.render(p)}"
                                              for path, value in self.sets))
        if self.adds:
            clauses.append("ADD " + ", ".join(f"{path.render(p)} {value.render(p)}"
                                              for path, value in self.adds))
        if self.removes:
            clauses.append("REMOVE " + ", ".join(path.render(p) for path in self.removes))
        if self.deletes:
            clauses.append("DELETE " + ", ".join(f"{path.render(p)} {value.render(p)}"
                                                 for path, value in self.deletes))
        if not clauses:
            raise ValueError("an update needs an action")
        return " ".join(clauses)


# --- projections and whole requests ---------------------------------------------------

@dataclass(frozen=True)
class Projection:
    """The attributes a read returns."""

    paths: tuple[Path, ...]

    def render(self, p: Placeholders) -> str:
        return ", ".join(path.render(p) for path in self.paths)


def projection(*paths: Path | str) -> Projection:
    return Projection(tuple(map(_path, paths)))


def compile(*, condition: Condition | None = None, update: Actions | None = None,
            key: Condition | None = None, filter: Condition | None = None,
            project: Projection | None = None) -> dict[str, Any]:
    """The request fields for these expressions, placeholders generated across all of
    them (``ConditionExpression``, ``UpdateExpression``, ``KeyConditionExpression``,
    ``FilterExpression``, ``ProjectionExpression``, and the names and values used)."""
    p = Placeholders()
    request: dict[str, Any] = {}
    for field_name, expression in (("KeyConditionExpression", key),
                                   ("UpdateExpression", update),
                                   ("ConditionExpression", condition),
                                   ("FilterExpression", filter),
                                   ("ProjectionExpression", project)):
        if expression is not None:
            request[field_name] = expression.render(p)
    if p.names:
        request["ExpressionAttributeNames"] = p.names
    if p.values:
        request["ExpressionAttributeValues"] = p.values
    return request


# --- transactions: typed members, by name ---------------------------------------------

class TableOps(Protocol):
    """What a member asks of its table (``booking.dynamo.table.Table``)."""

    name: str

    def put_op(self, item: dict[str, Any], *, condition: Any = None) -> dict[str, Any]: ...

    def update_op(self, key: dict[str, Any], expression: Any, *,
                  condition: Any = None) -> dict[str, Any]: ...

    def delete_op(self, key: dict[str, Any], *, condition: Any = None) -> dict[str, Any]: ...

    def check_op(self, key: dict[str, Any], *, condition: Any) -> dict[str, Any]: ...


Op = tuple[str, dict]  # the client's (kind, body) pair
MOST_MEMBERS = 100  # DynamoDB's limit on the members of one TransactWriteItems


@dataclass(frozen=True, eq=False)
class Put:
    """Write ``item`` whole (only if ``condition``)."""

    table: TableOps
    item: dict[str, Any]
    condition: Condition | None = None
    kind = "Put"

    def body(self) -> dict[str, Any]:
        return self.table.put_op(self.item, condition=self.condition)


@dataclass(frozen=True, eq=False)
class Update:
    """Change the item at ``key`` by ``actions`` (only if ``condition``)."""

    table: TableOps
    key: dict[str, Any]
    actions: Actions
    condition: Condition | None = None
    kind = "Update"

    def body(self) -> dict[str, Any]:
        return self.table.update_op(self.key, self.actions, condition=self.condition)


@dataclass(frozen=True, eq=False)
class Delete:
    """Delete the item at ``key`` (only if ``condition``)."""

    table: TableOps
    key: dict[str, Any]
    condition: Condition | None = None
    kind = "Delete"

    def body(self) -> dict[str, Any]:
        return self.table.delete_op(self.key, condition=self.condition)


@dataclass(frozen=True, eq=False)
class ConditionCheck:
    """Write nothing; refuse the transaction unless the item at ``key`` meets ``condition``."""

    table: TableOps
    key: dict[str, Any]
    condition: Condition
    kind = "ConditionCheck"

    def body(self) -> dict[str, Any]:
        return self.table.check_op(self.key, condition=self.condition)


Write = Union[Put, Update, Delete, ConditionCheck]
Member = Union[Write, Op]  # what ``Members`` takes


def as_op(member: Member) -> Op:
    """The client's (kind, body) pair of a member."""
    if isinstance(member, tuple):
        return member
    return (member.kind, member.body())


def kind_of(member: Member) -> str:
    """"Put", "Update", "Delete" or "ConditionCheck"."""
    return member[0] if isinstance(member, tuple) else member.kind


def without_condition(member: Write) -> Write:
    """The same member, its condition dropped (the harness's careless variants)."""
    if isinstance(member, ConditionCheck):
        raise ValueError("a condition check is only its condition")
    return dataclasses_replace(member, condition=None)


class Members:
    """The members of one TransactWriteItems, in order, each under a unique name."""

    def __init__(self, named: Iterable[tuple[str, Member]] = ()) -> None:
        self._named: list[tuple[str, Member]] = []
        self.extend(named)

    def add(self, name: str, op: Member) -> Members:
        if name in self.names:
            raise ValueError(f"a transaction already has a member named {name!r}")
        self._named.append((name, op))
        return self

    def extend(self, named: Iterable[tuple[str, Member]]) -> Members:
        for name, op in named:
            self.add(name, op)
        return self

    def replaced(self, name: str, op: Member) -> Members:
        """A copy with member ``name``'s operation replaced (same place, same name)."""
        return Members((n, op if n == name else o) for n, o in self._named)

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self._named]

    @property
    def operations(self) -> list[Op]:
        """The client's (kind, body) pairs, in order."""
        return [as_op(op) for _, op in self._named]

    def __iter__(self) -> Iterator[tuple[str, Member]]:
        return iter(self._named)

    def __len__(self) -> int:
        return len(self._named)

    def refusal(self, cancelled: TransactionCancelled) -> Refusal:
        return Refusal(cancelled, self.names)


class Refusal:
    """A cancelled transaction read by its members' names."""

    def __init__(self, cancelled: TransactionCancelled, names: list[str]) -> None:
        self.cancelled = cancelled
        self._index = {name: index for index, name in enumerate(names)}

    @property
    def conflict(self) -> bool:
        """Nothing applied, and another attempt may succeed (a conflict or a throttle)."""
        return self.cancelled.conflict

    def code(self, name: str) -> str:
        """Member ``name``'s cancellation code ("None" when it did not stop the write;
        ``ConditionalCheckFailed``, ``TransactionConflict``, ``ThrottlingError``...)."""
        index = self._index.get(name)
        return "None" if index is None else self.cancelled.code(index)

    def refused(self, name: str) -> bool:
        """Whether member ``name``'s condition refused the transaction (False: no such member)."""
        return self.code(name) == CONDITION_FAILED

    def old(self, name: str) -> dict | None:
        """What member ``name`` found when its condition refused it (None: no such item)."""
        return self.cancelled.reasons[self._index[name]].old_item if self.refused(name) else None

    def refused_names(self, prefix: str = "") -> list[str]:
        """The refused members whose names start with ``prefix``, in the write's order."""
        return [name for name in self._index if name.startswith(prefix) and self.refused(name)]
