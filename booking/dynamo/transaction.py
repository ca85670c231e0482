"""A transaction's members by name, and what a refusal says of each.

A write is ``Members``: ("Put"|"Update"|"Delete"|"ConditionCheck", body) pairs, each under
a name (``registration``, ``quota:capacity``, ``request``). When DynamoDB cancels the
transaction, ``Members.refusal`` reads its reasons by those names, so a decode asks "was
``registration`` refused, and what did it find" instead of counting positions.
"""
from collections.abc import Iterable, Iterator

from booking.dynamo.errors import CONDITION_FAILED, TransactionCancelled

Op = tuple[str, dict]
MOST_MEMBERS = 100  # DynamoDB's limit on the members of one TransactWriteItems


class Members:
    """The members of one TransactWriteItems, in order, each under a unique name."""

    def __init__(self, named: Iterable[tuple[str, Op]] = ()):
        self._named: list[tuple[str, Op]] = []
        self.extend(named)

    def add(self, name: str, op: Op) -> "Members":
        if name in self.names:
            raise ValueError(f"a transaction already has a member named {name!r}")
        self._named.append((name, op))
        return self

    def extend(self, named: Iterable[tuple[str, Op]]) -> "Members":
        for name, op in named:
            self.add(name, op)
        return self

    def replaced(self, name: str, op: Op) -> "Members":
        """A copy with member ``name``'s operation replaced (same place, same name)."""
        return Members((n, op if n == name else o) for n, o in self._named)

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self._named]

    @property
    def operations(self) -> list[Op]:
        return [op for _, op in self._named]

    def __iter__(self) -> Iterator[tuple[str, Op]]:
        return iter(self._named)

    def __len__(self) -> int:
        return len(self._named)

    def refusal(self, cancelled: TransactionCancelled) -> "Refusal":
        return Refusal(cancelled, self.names)


class Refusal:
    """A cancelled transaction read by its members' names."""

    def __init__(self, cancelled: TransactionCancelled, names: list[str]):
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
