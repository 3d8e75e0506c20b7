"""DynamoDB's billing rules: the size of an item as DynamoDB counts it, and the request units
a read or a write of that many bytes consumes.

An item's size is the sum of its attributes' sizes; an attribute's size is the UTF-8 length of
its name plus the size of its value: a string's UTF-8 length, a binary value's length, a
number's 1 byte per two significant digits plus 1, a boolean or null 1 byte, a list or map 3
bytes plus 1 byte and the size of each element (a map's elements with their names), a set the
sum of its members. Values come in the wire form (``{"S": "text"}``, ``{"N": "42"}``).

A read unit covers 4 KB: 1 for a strongly consistent read, 0.5 for an eventually consistent
one, 2 in a transaction. A write unit covers 1 KB: 1, or 2 in a transaction. Every request for
an item is billed at least one unit, even when the item does not exist.

Storage is billed on each item's size plus :data:`ITEM_OVERHEAD_BYTES`, and the same again for
each global secondary index that holds a copy of it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dynamo.keys import INDEX_ATTRIBUTES

__all__ = [
    "ITEM_OVERHEAD_BYTES",
    "READ_UNIT_BYTES",
    "WRITE_UNIT_BYTES",
    "index_copies",
    "item_size",
    "number_size",
    "read_units",
    "stored_bytes",
    "value_size",
    "write_units",
]

READ_UNIT_BYTES = 4096
WRITE_UNIT_BYTES = 1024
ITEM_OVERHEAD_BYTES = 100
"""What DynamoDB adds to each stored item (and to each index copy) for storage billing."""


def number_size(text: str) -> int:
    """The bytes of a number: 1 per two significant digits (leading and trailing zeros
    trimmed), plus 1."""
    digits = text.lstrip("+-").lower().split("e")[0].replace(".", "").strip("0")
    return (max(len(digits), 1) + 1) // 2 + 1


def value_size(value: Mapping[str, Any]) -> int:
    """The bytes of one attribute value in wire form (its name not included)."""
    ((tag, raw),) = value.items()
    if tag == "S":
        return len(str(raw).encode())
    if tag == "N":
        return number_size(str(raw))
    if tag == "B":
        return len(raw)
    if tag in ("BOOL", "NULL"):
        return 1
    if tag == "SS":
        return sum(len(str(m).encode()) for m in raw)
    if tag == "NS":
        return sum(number_size(str(m)) for m in raw)
    if tag == "BS":
        return sum(len(m) for m in raw)
    if tag == "L":
        return 3 + sum(1 + value_size(m) for m in raw)
    if tag == "M":
        return 3 + sum(1 + len(k.encode()) + value_size(m) for k, m in raw.items())
    raise ValueError(f"an attribute value of an unknown type: {tag}")


def item_size(item: Mapping[str, Mapping[str, Any]] | None) -> int:
    """The bytes of an item in wire form (0 for no item)."""
    if not item:
        return 0
    return sum(len(name.encode()) + value_size(value) for name, value in item.items())


def read_units(size: int, *, consistent: bool = False, transactional: bool = False) -> float:
    """The read request units of reading ``size`` bytes in one request for one item (or one
    Query page): 4 KB units, at least one."""
    units = max(1, math.ceil(size / READ_UNIT_BYTES))
    if transactional:
        return 2.0 * units
    return float(units) if consistent else units / 2


def write_units(size: int, *, transactional: bool = False) -> float:
    """The write request units of writing an item of ``size`` bytes: 1 KB units, at least
    one."""
    units = max(1, math.ceil(size / WRITE_UNIT_BYTES))
    return float(2 * units if transactional else units)


def index_copies(item: Mapping[str, Any]) -> int:
    """The global secondary indexes that hold a copy of an item: those whose key attributes
    it has."""
    return sum(1 for pk, sk in INDEX_ATTRIBUTES.values() if pk in item and sk in item)


def stored_bytes(item: Mapping[str, Mapping[str, Any]]) -> int:
    """The bytes DynamoDB bills for storing an item in wire form: its size plus
    :data:`ITEM_OVERHEAD_BYTES`, once in the table and once in each of its
    :func:`index_copies`."""
    return (item_size(item) + ITEM_OVERHEAD_BYTES) * (1 + index_copies(item))
