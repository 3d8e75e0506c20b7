"""DynamoDB's transaction-conflict rule, for the fault proxy (DynamoDB Local does not apply it).

DynamoDB cancels a transaction that touches an item another request is still working on;
DynamoDB Local runs its transactions one after another and never does. This module decides,
for each request that reaches the proxy, whether DynamoDB would have refused it for such a
conflict, and what the request holds until DynamoDB Local's answer has come back.

Emulated (the Developer Guide's "Transaction conflict handling in DynamoDB", and the API
reference of TransactWriteItems for the last case):

- a ``TransactWriteItems`` with an item held by another ``TransactWriteItems`` in flight is
  cancelled: 400 ``TransactionCanceledException``, one reason per item in request order,
  ``TransactionConflict`` on each held item and ``None`` on the others;
- a ``PutItem``, ``UpdateItem`` or ``DeleteItem`` on an item held by a ``TransactWriteItems``
  in flight: 400 ``TransactionConflictException``;
- a ``TransactGetItems`` with an item held by a ``TransactWriteItems``, a ``BatchWriteItem``,
  or a ``PutItem``/``UpdateItem``/``DeleteItem`` in flight is cancelled like a write
  transaction (``TransactionConflict`` on the held items);
- a ``TransactWriteItems`` with an item that a ``PutItem``/``UpdateItem``/``DeleteItem`` or
  a ``BatchWriteItem`` in flight is writing is cancelled the same way (the API reference: an
  ongoing operation is updating the same item);
- a ``TransactWriteItems`` whose ``ClientRequestToken`` is that of one still in flight (a
  retry of an attempt whose answer the client stopped waiting for): 400
  ``TransactionInProgressException``, which botocore retries.

Not emulated (these requests are forwarded as they are):

- ``GetItem``, ``BatchGetItem``, ``Query`` and ``Scan`` never conflict (the guide: a GetItem
  and a transaction on the same item can both succeed; the others are read-committed);
- a single write, or a ``BatchWriteItem``, is never refused because of another single write
  or of a ``TransactGetItems``; DynamoDB runs them one after the other;
- a ``BatchWriteItem`` is never refused because of a transaction (DynamoDB documents no
  conflict error for it);
- a ``TransactGetItems`` holds nothing, so it never cancels a write that arrives after it
  (DynamoDB may cancel the ``TransactGetItems`` then; its answer has already been decided
  here when it was forwarded).

A request holds its items from the moment the proxy receives it until DynamoDB Local's
answer is back: a wider window than DynamoDB's own (which excludes the network), which the
optional ``hold`` widens further, deterministically, for a transaction. Items are told
apart by table and primary key; the key of a ``Put``'s item is read from the attributes
named in ``key_attributes``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Claim", "ItemKey", "Refusal", "TransactionConflicts"]

_ERROR_TYPE = "com.amazonaws.dynamodb.v20120810#"
_ONGOING = "Transaction is ongoing for the item"
_SINGLE_WRITES = {"PutItem", "UpdateItem", "DeleteItem"}
_TRANSACT_WRITE = "TransactWriteItems"
_TRANSACT_GET = "TransactGetItems"
_BATCH_WRITE = "BatchWriteItem"


@dataclass(frozen=True, order=True)
class ItemKey:
    """One item: its table and its primary key, as (attribute name, value) pairs in name
    order; a value is its wire form's string (an ``S``, the digits of an ``N``, the base64
    of a ``B``)."""

    table: str
    key: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, table: str, **attributes: str) -> ItemKey:
        """The item of ``table`` with these key attributes, e.g. ``ItemKey.of(t, pk=.., sk=..)``."""
        return cls(table, tuple(sorted(attributes.items())))

    @classmethod
    def parse(
        cls, table: Any, attributes: Any, names: Sequence[str] | None = None
    ) -> ItemKey | None:
        """The key of a request's ``Key`` (or, with ``names``, of a ``Put``'s ``Item``: those
        attributes of it); None when the request does not name one."""
        if not isinstance(table, str) or not isinstance(attributes, dict):
            return None
        pairs: list[tuple[str, str]] = []
        for name, value in attributes.items():
            if names is not None and name not in names:
                continue
            if not isinstance(value, dict) or len(value) != 1:
                return None
            (scalar,) = value.values()
            if not isinstance(scalar, str):
                return None
            pairs.append((name, scalar))
        if not pairs:
            return None
        return cls(table, tuple(sorted(pairs)))

    def __str__(self) -> str:
        return " ".join([self.table, *(f"{name}={value}" for name, value in self.key)])


@dataclass(frozen=True)
class Refusal:
    """DynamoDB's answer to a request the rule refuses (for a conflict, or because its
    transaction's token is in flight): HTTP 400 with this body."""

    body: bytes
    status: int = 400


@dataclass(eq=False)
class Claim:
    """What an admitted request holds until DynamoDB's answer is back."""

    owner: TransactionConflicts
    operation: str
    transaction: Sequence[ItemKey] = ()
    """The items a TransactWriteItems holds against every other request."""
    writes: Sequence[ItemKey] = ()
    """The items a single write or a BatchWriteItem holds (against transactions)."""
    token: str | None = None
    hold: float = 0.0
    """Seconds to wait, holding the items, before the request is forwarded."""
    released: bool = False

    def release(self, status: int | None) -> None:
        """Let the items go (once); ``status`` is DynamoDB's answer, None when the request
        got none (it was not forwarded, or its connection failed)."""
        if self.released:
            return
        self.released = True
        self.owner._release(self, status)


@dataclass
class TransactionConflicts:
    """The conflict rule and what it did. One instance per proxy; not thread-safe (the
    proxy runs on one event loop)."""

    hold: float = 0.0
    """Seconds every admitted TransactWriteItems waits, its items held, before it is
    forwarded: a transaction's own latency, which widens the window of conflicts."""
    key_attributes: Sequence[str] = ("pk", "sk")
    """The names of the primary key attributes of the tables behind the proxy."""

    conflicts: Counter[str] = field(default_factory=Counter)
    """Requests refused for a conflict, per operation."""
    conflicted: Counter[ItemKey] = field(default_factory=Counter)
    """Per item: how many refused requests it was a conflicting item of."""
    held: Counter[ItemKey] = field(default_factory=Counter)
    """Per item: how many TransactWriteItems were admitted holding it."""
    committed: Counter[ItemKey] = field(default_factory=Counter)
    """Per item: how many of those DynamoDB answered with success."""
    admitted: Counter[str] = field(default_factory=Counter)
    """Requests of the operations the rule looks at that were let through, per operation."""
    in_progress: int = 0
    """TransactWriteItems answered TransactionInProgressException (their token was in flight)."""
    peak: int = 0
    """The most TransactWriteItems in flight at once."""

    _transactions: dict[ItemKey, Claim] = field(default_factory=dict, repr=False)
    _writes: Counter[ItemKey] = field(default_factory=Counter, repr=False)
    _tokens: set[str] = field(default_factory=set, repr=False)
    _in_flight: int = field(default=0, repr=False)

    @property
    def total(self) -> int:
        """Requests refused for a conflict, all operations."""
        return sum(self.conflicts.values())

    def hottest(self, n: int | None = None) -> list[tuple[ItemKey, int]]:
        """The most conflicted items, most first, with how many refusals each caused."""
        return self.conflicted.most_common(n)

    def holding(self) -> set[ItemKey]:
        """The items held now by transactions in flight."""
        return set(self._transactions)

    def reset(self) -> None:
        """Count from zero again (what is held now stays held)."""
        self.conflicts.clear()
        self.conflicted.clear()
        self.held.clear()
        self.committed.clear()
        self.admitted.clear()
        self.in_progress = 0
        self.peak = self._in_flight

    def report(self, n: int = 5) -> dict[str, Any]:
        """What the rule did, for a benchmark's results: totals, per operation, and the ``n``
        most conflicted items with how many transactions held each and committed."""
        return {
            "conflicts": self.total,
            "byOperation": dict(sorted(self.conflicts.items())),
            "admitted": dict(sorted(self.admitted.items())),
            "inProgress": self.in_progress,
            "peak": self.peak,
            "hottest": [
                {
                    "item": str(item),
                    "conflicts": count,
                    "held": self.held[item],
                    "committed": self.committed[item],
                }
                for item, count in self.hottest(n)
            ],
        }

    def admit(self, operation: str, body: bytes) -> Claim | Refusal:
        """Decide on one request that has just reached the proxy: refuse it, or let it
        through holding its items (release the claim once DynamoDB's answer is back)."""
        if operation not in (_TRANSACT_WRITE, _TRANSACT_GET, _BATCH_WRITE, *_SINGLE_WRITES):
            return Claim(self, operation, released=True)
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            # DynamoDB Local answers what it cannot read.
            return Claim(self, operation, released=True)
        if operation == _TRANSACT_WRITE:
            return self._transact_write(request)
        if operation == _TRANSACT_GET:
            return self._transact_get(request)
        if operation == _BATCH_WRITE:
            return self._claim(operation, writes=list(self._batch_keys(request)))
        key = self._single_key(operation, request)
        if key is not None and key in self._transactions:
            return self._refuse(
                operation, [key], _error("TransactionConflictException", _ONGOING, "message")
            )
        return self._claim(operation, writes=[key] if key is not None else [])

    def _transact_write(self, request: dict[str, Any]) -> Claim | Refusal:
        token = request.get("ClientRequestToken")
        if isinstance(token, str) and token in self._tokens:
            self.in_progress += 1
            return Refusal(
                _error(
                    "TransactionInProgressException",
                    "The transaction with the given request token is already in progress",
                )
            )
        keys = [self._action_key(action) for action in _list(request.get("TransactItems"))]
        busy = [k is not None and (k in self._transactions or k in self._writes) for k in keys]
        if any(busy):
            return self._cancel(_TRANSACT_WRITE, keys, busy)
        return self._claim(
            _TRANSACT_WRITE,
            transaction=[k for k in keys if k is not None],
            token=token if isinstance(token, str) else None,
        )

    def _transact_get(self, request: dict[str, Any]) -> Claim | Refusal:
        keys = []
        for action in _list(request.get("TransactItems")):
            get = action.get("Get") if isinstance(action, dict) else None
            keys.append(
                ItemKey.parse(get.get("TableName"), get.get("Key"))
                if isinstance(get, dict)
                else None
            )
        busy = [k is not None and (k in self._transactions or k in self._writes) for k in keys]
        if any(busy):
            return self._cancel(_TRANSACT_GET, keys, busy)
        return self._claim(_TRANSACT_GET)

    def _cancel(self, operation: str, keys: list[ItemKey | None], busy: list[bool]) -> Refusal:
        reasons: list[dict[str, str]] = [
            {"Code": "TransactionConflict", "Message": _ONGOING} if b else {"Code": "None"}
            for b in busy
        ]
        codes = ", ".join(r["Code"] for r in reasons)
        body = json.dumps(
            {
                "__type": f"{_ERROR_TYPE}TransactionCanceledException",
                "CancellationReasons": reasons,
                "Message": "Transaction cancelled, please refer cancellation reasons for "
                f"specific reasons [{codes}]",
            }
        ).encode()
        conflicted = [k for k, b in zip(keys, busy, strict=True) if b and k is not None]
        return self._refuse(operation, conflicted, body)

    def _refuse(self, operation: str, keys: Iterable[ItemKey], body: bytes) -> Refusal:
        self.conflicts[operation] += 1
        self.conflicted.update(keys)
        return Refusal(body)

    def _claim(
        self,
        operation: str,
        *,
        transaction: Sequence[ItemKey] = (),
        writes: Sequence[ItemKey] = (),
        token: str | None = None,
    ) -> Claim:
        self.admitted[operation] += 1
        claim = Claim(
            self,
            operation,
            transaction=transaction,
            writes=writes,
            token=token,
            hold=self.hold if operation == _TRANSACT_WRITE else 0.0,
        )
        if operation == _TRANSACT_WRITE:
            self._in_flight += 1
            self.peak = max(self.peak, self._in_flight)
        for key in transaction:
            self._transactions[key] = claim
        self.held.update(set(transaction))
        self._writes.update(writes)
        if token is not None:
            self._tokens.add(token)
        return claim

    def _release(self, claim: Claim, status: int | None) -> None:
        if claim.operation == _TRANSACT_WRITE:
            self._in_flight -= 1
        for key in claim.transaction:
            if self._transactions.get(key) is claim:
                del self._transactions[key]
        self._writes.subtract(claim.writes)
        self._writes = +self._writes
        if claim.token is not None:
            self._tokens.discard(claim.token)
        if status == 200:
            self.committed.update(set(claim.transaction))

    def _action_key(self, action: Any) -> ItemKey | None:
        """The item of one action of a TransactWriteItems."""
        if not isinstance(action, dict) or len(action) != 1:
            return None
        ((kind, spec),) = action.items()
        if not isinstance(spec, dict):
            return None
        if kind == "Put":
            return ItemKey.parse(spec.get("TableName"), spec.get("Item"), self.key_attributes)
        return ItemKey.parse(spec.get("TableName"), spec.get("Key"))

    def _single_key(self, operation: str, request: dict[str, Any]) -> ItemKey | None:
        if operation == "PutItem":
            return ItemKey.parse(request.get("TableName"), request.get("Item"), self.key_attributes)
        return ItemKey.parse(request.get("TableName"), request.get("Key"))

    def _batch_keys(self, request: dict[str, Any]) -> Iterable[ItemKey]:
        tables = request.get("RequestItems")
        if not isinstance(tables, dict):
            return
        for table, writes in tables.items():
            for write in _list(writes):
                if not isinstance(write, dict):
                    continue
                put, delete = write.get("PutRequest"), write.get("DeleteRequest")
                key = None
                if isinstance(put, dict):
                    key = ItemKey.parse(table, put.get("Item"), self.key_attributes)
                elif isinstance(delete, dict):
                    key = ItemKey.parse(table, delete.get("Key"))
                if key is not None:
                    yield key


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _error(code: str, message: str, member: str = "Message") -> bytes:
    """DynamoDB's JSON error body (``member`` is the message's name in the service model)."""
    return json.dumps({"__type": f"{_ERROR_TYPE}{code}", member: message}).encode()
