"""Keys as data: an entity declares its key templates once, and everything else follows.

An entity (the Player item, a Score item, ...) is declared at the top of its module as an
:class:`Entity`: its name, its ``pk``/``sk`` templates and, for each index it is in, that
index's two templates. A template is text with ``{attribute}`` fields named after the item's
attributes (snake_case): ``PLAYER#{player_id}``. From the declaration come:

- building a key to read: ``PLAYER.key(player_id="ann")`` -> ``("PLAYER#ann", "#METADATA")``;
- building an item with all its keys: ``PLAYER.item(player)`` (the key attributes from the
  item's own attributes, plus any derived values a template needs, then the attributes);
- the partition of a query: ``SESSION.pk.fill(player_id="ann")``, ``SESSION.sk.prefix``;
- recognising a stored item: ``SCORE.holds(raw)``, and ``dynamo.layout.entity_of(raw)``.

A field matches text without ``#`` (ids cannot hold one: dynamo/ids.py), except an e-mail
address (``{email}``), which may hold one and matches the rest of the value. So
``LEADERBOARD#{leaderboard_id}`` does not match ``LEADERBOARD#b#03``, the partition key of a
write-sharded board's Score items (dynamo/scores.py).
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dynamo.items import Item
from dynamo.table import GSI1, GSI2, Key

__all__ = ["INDEX_ATTRIBUTES", "Entity", "Template"]

_ANY_TEXT = frozenset({"email"})
"""The fields whose values may hold a ``#``."""

INDEX_ATTRIBUTES: dict[str, tuple[str, str]] = {
    GSI1: ("gsi1pk", "gsi1sk"),
    GSI2: ("gsi2pk", "gsi2sk"),
}
"""The key attributes of each index."""


@dataclass(frozen=True)
class Template:
    """One key attribute's template: literal text and ``{attribute}`` fields."""

    text: str
    fields: tuple[str, ...] = field(init=False)
    prefix: str = field(init=False)
    """The literal text before the first field (all of it when there is none): what a range
    read of the attribute begins with."""
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = list(string.Formatter().parse(self.text))
        names = tuple(name for _, name, _, _ in parts if name is not None)
        regex = ""
        for literal, name, _, _ in parts:
            regex += re.escape(literal)
            if name is not None:
                body = ".+" if name in _ANY_TEXT else "[^#]+"
                regex += f"(?P<{name}>{body})"
        object.__setattr__(self, "fields", names)
        object.__setattr__(self, "prefix", parts[0][0] if parts else "")
        object.__setattr__(self, "_pattern", re.compile(regex, re.DOTALL))

    def fill(self, **values: object) -> str:
        """The attribute's value for ``values`` (each field's value, by name)."""
        return self.text.format(**{name: values[name] for name in self.fields})

    def match(self, value: object) -> dict[str, str] | None:
        """The fields' values when ``value`` has this template's form, else None."""
        if not isinstance(value, str):
            return None
        found = self._pattern.fullmatch(value)
        return found.groupdict() if found else None


@dataclass(frozen=True)
class Entity:
    """An item family of the table and its keys."""

    name: str
    """As the table in docs/explanation/table-design.md names it."""
    pk: Template
    sk: Template
    indexes: Mapping[str, tuple[Template, Template]] = field(default_factory=dict)

    @classmethod
    def declare(
        cls,
        name: str,
        *,
        pk: str,
        sk: str,
        gsi1: tuple[str, str] | None = None,
        gsi2: tuple[str, str] | None = None,
    ) -> Entity:
        indexes = {
            index: (Template(ipk), Template(isk))
            for index, templates in ((GSI1, gsi1), (GSI2, gsi2))
            if templates is not None
            for ipk, isk in [templates]
        }
        return cls(name, Template(pk), Template(sk), indexes)

    @property
    def fields(self) -> tuple[str, ...]:
        """Every attribute the entity's keys are made of, in order of first use."""
        templates = [self.pk, self.sk, *(t for pair in self.indexes.values() for t in pair)]
        return tuple(dict.fromkeys(name for t in templates for name in t.fields))

    def key(self, **values: object) -> Key:
        """The primary key (pk, sk)."""
        return self.pk.fill(**values), self.sk.fill(**values)

    def key_attributes(self, **values: object) -> dict[str, str]:
        """The primary key as attributes: ``{"pk": ..., "sk": ...}``."""
        pk, sk = self.key(**values)
        return {"pk": pk, "sk": sk}

    def index_key(self, index: str, **values: object) -> Key:
        """The item's key in ``index``."""
        ipk, isk = self.indexes[index]
        return ipk.fill(**values), isk.fill(**values)

    def keys(self, **values: object) -> dict[str, str]:
        """Every key attribute of the item: pk, sk and those of each index it is in. An item
        without a value (None) for an index's field is not in that index (a sparse index)."""
        pk, sk = self.key(**values)
        found = {"pk": pk, "sk": sk}
        for index, (ipk, isk) in self.indexes.items():
            if any(values.get(name) is None for name in (*ipk.fields, *isk.fields)):
                continue
            pk_name, sk_name = INDEX_ATTRIBUTES[index]
            found[pk_name] = ipk.fill(**values)
            found[sk_name] = isk.fill(**values)
        return found

    def keys_of(self, model: Item, **derived: object) -> dict[str, str]:
        """Every key attribute of ``model``'s item, from its attributes and the ``derived``
        values its templates need beyond them."""
        return self.keys(**{**model.model_dump(), **derived})

    def item(self, model: Item, **derived: object) -> dict[str, Any]:
        """The stored item: its key attributes (see :meth:`keys_of`), then its attributes."""
        return {**self.keys_of(model, **derived), **model.attributes()}

    def holds(self, item: Mapping[str, Any]) -> bool:
        """Whether a stored item (or a key) is one of this entity's."""
        return (
            self.pk.match(item.get("pk")) is not None and self.sk.match(item.get("sk")) is not None
        )
