"""Item models and their attribute values: the base of every item model, the instant items
are stamped with, and DynamoDB attribute values to and from Python values.

An item is built from its raw attribute values by :func:`parse`. For a model whose fields are
all of the kinds a page reads (text, whole numbers, flags, instants, enums, documents, lists
of text or of item models, each optionally None), the values are read straight into the model
(:func:`read_item`): each attribute in the one form whose reading is certain, such as an
instant in ISO 8601 with ``Z``, an offset or none. Any other form (a number with a fraction in
a whole number's field, text in a number's, an instant written otherwise, a missing required
attribute) leaves the item to pydantic's validation, which builds the same model from the
same item (or refuses it); the direct reading only saves its cost."""

from __future__ import annotations

import copy
import json
import re
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from enum import Enum
from functools import partial
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Generic,
    Self,
    TypeVar,
    Union,
    get_args,
    get_origin,
)

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from pydantic import BaseModel, ConfigDict, model_validator
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from dynamo.metadata import Metadata

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb.type_defs import AttributeValueTypeDef

__all__ = [
    "Item",
    "M",
    "deserialize",
    "key",
    "now",
    "parse",
    "read_item",
    "serialize",
    "stamp",
]

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def now() -> datetime:
    """The current time in UTC at millisecond precision, the precision items are stored with."""
    t = datetime.now(UTC)
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


class Item(BaseModel):
    """Base of every item model: camelCase attributes as stored, immutable once read."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="ignore"
    )

    @model_validator(mode="after")
    def _utc(self) -> Self:
        """Every instant is kept in UTC; one without an offset is taken to be UTC."""
        values = self.__dict__
        for name in _instant_fields(type(self)):
            value = values[name]
            if isinstance(value, datetime):
                values[name] = _in_utc(value)
        return self

    def attributes(self) -> dict[str, Any]:
        """The plain (non-key) attributes as stored in DynamoDB, None-valued ones left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


M = TypeVar("M", bound=Item)
"""Any item model."""


def _in_utc(value: datetime) -> datetime:
    """The instant in UTC; one without an offset is taken to be UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


_INSTANT_FIELDS: dict[type[Item], tuple[str, ...]] = {}


def _instant_fields(model: type[Item]) -> tuple[str, ...]:
    """The fields of ``model`` whose value may be an instant (a datetime, optional or not, or
    a field of any type), found once per model."""
    names = _INSTANT_FIELDS.get(model)
    if names is None:
        names = tuple(n for n, f in model.model_fields.items() if _may_hold_instant(f.annotation))
        _INSTANT_FIELDS[model] = names
    return names


def _may_hold_instant(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _may_hold_instant(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return any(_may_hold_instant(arg) for arg in get_args(annotation))
    if origin is not None:
        return False  # a container or a literal: never a datetime itself
    if isinstance(annotation, type):
        return issubclass(annotation, datetime) or issubclass(datetime, annotation)
    return True  # Any, a type variable, a forward reference: it may be


def stamp(at: datetime) -> str:
    """An instant as items store it: ISO 8601 in UTC, with ``Z`` (as an Item's datetime
    fields are written)."""
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")


def serialize(values: Mapping[str, Any]) -> dict[str, AttributeValueTypeDef]:
    """Python values to DynamoDB attribute values (ints stay exact)."""
    return {k: _serializer.serialize(v) for k, v in values.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else value
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _number(text: str) -> int | Decimal:
    try:
        return int(text)
    except ValueError:
        number = Decimal(text)
        return int(number) if number == number.to_integral_value() else number


def _value(value: Mapping[str, Any]) -> Any:
    """One attribute value; the types items hold are read directly, any other through boto3."""
    ((tag, raw),) = value.items()
    if tag == "S" or tag == "BOOL":
        return raw
    if tag == "N":
        return _number(raw)
    if tag == "M":
        return {k: _value(v) for k, v in raw.items()}
    if tag == "L":
        return [_value(v) for v in raw]
    if tag == "NULL":
        return None
    return _plain(_deserializer.deserialize(value))


def deserialize(item: Mapping[str, Any]) -> dict[str, Any]:
    """DynamoDB attribute values to Python values; integral numbers come back as int."""
    return {k: _value(v) for k, v in item.items()}


def parse(model: type[M], item: Mapping[str, Any]) -> M:
    """Build an item model from a raw DynamoDB item: read directly (:func:`read_item`) when it
    can be, through pydantic's validation otherwise; the same model either way."""
    found = read_item(model, item)
    return found if found is not None else model.model_validate(deserialize(item))


def read_item(model: type[M], item: Mapping[str, Any]) -> M | None:
    """The model of a raw DynamoDB item read straight from its attribute values, equal field by
    field (and in the fields it was given) to what pydantic's validation builds from it; None
    when the model or some attribute is of a form only that validation decides."""
    try:
        reader = _READERS[model]
    except KeyError:
        if not model.__pydantic_complete__:
            return None  # its annotations are not all resolved yet
        reader = _READERS[model] = _Reader.of(model)
    return None if reader is None else reader.read(item)


_INSTANT = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)?", re.ASCII
).fullmatch
"""The forms of an instant read directly: ISO 8601 with a fraction of up to six digits, and
``Z``, an offset or none; pydantic and ``datetime.fromisoformat`` read them alike."""

_TEXT, _NUMBER, _FLAG, _INSTANT_VALUE, _CHOICE, _DOCUMENT, _TEXTS, _MODELS = range(8)
"""The kinds of field a reader reads."""

_REQUIRED: Any = object()
"""A field's default when it has none."""

_UNSURE: Any = object()
"""What an attribute reads as when it is of a form only pydantic's validation decides."""

_READERS: dict[type[Item], _Reader[Any] | None] = {}
"""Each model's reader, made at its first item; None for a model read only by pydantic."""

_setattr = object.__setattr__


@dataclass(frozen=True)
class _Field:
    name: str
    alias: str
    kind: int
    optional: bool
    """Whether the field takes None (a NULL attribute)."""
    default: Any
    copied: bool
    """Whether the default is copied for each model (a mutable one, as pydantic does)."""
    extra: Any = None
    """The members of an enum by value, or the model of a list of models."""


class _Reader(Generic[M]):
    """Reads one model's items directly: each attribute of the item that names a field (by
    its alias, or by its name where no attribute bears the alias) is read into that field,
    the others left out."""

    def __init__(self, model: type[M], fields: list[_Field]) -> None:
        self._model = model
        self.read: Callable[[Mapping[str, Any]], M | None] = self._compile(fields)
        """The model of an item, or None when an attribute is of a form it leaves to
        pydantic's validation (see :func:`read_item`): the function :meth:`_compile` writes
        for the model."""

    @classmethod
    def of(cls, model: type[M]) -> _Reader[M] | None:
        """The reader of ``model``; None when a part of the model is one only pydantic's
        validation applies (a validator of its own, its own configuration, private
        attributes, a field of another kind, constraints, an alias choice, a default
        factory)."""
        decorators = model.__pydantic_decorators__
        if (
            model.model_config != Item.model_config
            or set(decorators.model_validators) != {"_utc"}
            or decorators.field_validators
            or decorators.validators
            or decorators.root_validators
            or model.__pydantic_post_init__ is not None
            or model.__private_attributes__
        ):
            return None
        fields = []
        for name, info in model.model_fields.items():
            field = _field(name, info)
            if field is None:
                return None
            fields.append(field)
        aliases = {f.alias for f in fields}
        if any(f.name != f.alias and f.name in aliases for f in fields):
            return None  # one field's name is another's alias
        return cls(model, fields)

    def _compile(self, fields: list[_Field]) -> Callable[[Mapping[str, Any]], M | None]:
        """Write the model's reading as one function: each field's attribute looked up (by
        its alias, then by its name) and read in the one form whose reading is certain, in
        the model's order of fields; None (pydantic's validation decides) for any other form,
        or a required attribute missing."""
        names: dict[str, Any] = {
            "UNSURE": _UNSURE,
            "ABSENT": _REQUIRED,
            "UTC": UTC,
            "datetime": datetime,
            "in_utc": _in_utc,
            "instant": _INSTANT,
            "number": _number,
            "other": _other_kind,
            "deepcopy": copy.deepcopy,
            "model": self._model,
            "setattr_": _setattr,
            "defaults": {f.name: f.default for f in fields},
        }
        lines = ["def read(item):", "    values = defaults.copy()", "    given = set()"]
        lines.append("    try:")
        for n, f in enumerate(fields):
            names[f"f{n}"] = f
            lines.append(f"        v = item.get({f.alias!r}, ABSENT)")
            if f.name != f.alias:
                lines.append("        if v is ABSENT:")
                lines.append(f"            v = item.get({f.name!r}, ABSENT)")
            lines.append("        if v is not ABSENT:")
            lines.append("            if type(v) is not dict or len(v) != 1:")
            lines.append("                return None")
            lines += ["            " + line for line in _kind_lines(f, n, names)]
            lines.append("            if r is UNSURE:")
            if f.optional:
                lines.append('                if "NULL" not in v:')
                lines.append("                    return None")
                lines.append("                r = None")
            else:
                lines.append("                return None")
            lines.append(f"            values[{f.name!r}] = r")
            lines.append(f"            given.add({f.name!r})")
            if f.default is _REQUIRED:
                lines.append("        else:")
                lines.append("            return None")
            elif f.copied:
                lines.append("        else:")
                lines.append(f"            values[{f.name!r}] = deepcopy(values[{f.name!r}])")
        lines.append("    except (ValueError, ArithmeticError, RecursionError):")
        lines.append("        # A number, an instant or a document that does not read (nor")
        lines.append("        # reads the same way through pydantic, whose validation decides).")
        lines.append("        return None")
        lines.append("    built = model.__new__(model)")
        lines.append('    setattr_(built, "__dict__", values)')
        lines.append('    setattr_(built, "__pydantic_fields_set__", given)')
        lines.append('    setattr_(built, "__pydantic_extra__", None)')
        lines.append('    setattr_(built, "__pydantic_private__", None)')
        lines.append("    return built")
        # The text is the lines written above; every value it uses is bound by a name (the
        # attributes' names and the fields' as literals of their repr).
        exec("\n".join(lines), names)
        read: Callable[[Mapping[str, Any]], M | None] = names["read"]
        return read


def _kind_lines(f: _Field, n: int, names: dict[str, Any]) -> list[str]:
    """The lines that read the attribute value ``v`` of field ``f`` into ``r`` (UNSURE for a
    form only pydantic's validation decides)."""
    if f.kind == _TEXT:
        return ['r = v.get("S")', "if type(r) is not str:", "    r = UNSURE"]
    if f.kind == _NUMBER:
        return [
            'r = v.get("N")',
            "if type(r) is str:",
            "    try:",
            "        r = int(r)",
            "    except ValueError:",
            "        r = number(r)",
            "        if type(r) is not int:",
            "            r = UNSURE",
            "else:",
            "    r = UNSURE",
        ]
    if f.kind == _INSTANT_VALUE:
        return [
            'r = v.get("S")',
            "if type(r) is str and instant(r) is not None:",
            "    r = datetime.fromisoformat(r)",
            "    if r.tzinfo is not UTC:",
            "        r = in_utc(r)",
            "else:",
            "    r = UNSURE",
        ]
    if f.kind == _CHOICE:
        names[f"c{n}"] = f.extra
        return ['r = v.get("S")', f"r = c{n}.get(r, UNSURE) if type(r) is str else UNSURE"]
    if f.kind == _FLAG:
        return ['r = v.get("BOOL")', "if type(r) is not bool:", "    r = UNSURE"]
    return [f"r = other(f{n}, v)"]


def _other_kind(f: _Field, value: dict[str, Any]) -> Any:
    """A document, a list of text or a list of item models read from ``value``, or
    _UNSURE."""
    if f.kind == _DOCUMENT:
        text = value.get("S")
        document = json.loads(text) if type(text) is str else _value(value)
        return document if type(document) is dict else _UNSURE
    members = value.get("L")
    if type(members) is not list:
        return _UNSURE
    each = _text if f.kind == _TEXTS else partial(_member, f.extra)
    listed = [each(m) for m in members]
    return _UNSURE if _UNSURE in listed else listed


def _text(value: Any) -> Any:
    """A list's member read as text, or _UNSURE."""
    if type(value) is dict and len(value) == 1:
        text = value.get("S")
        if type(text) is str:
            return text
    return _UNSURE


def _member(model: type[Item], value: Any) -> Any:
    """A list's member (a map) read as ``model``, directly or through pydantic (whose
    refusal is the containing item's to make); _UNSURE when it is no map."""
    if type(value) is dict and len(value) == 1:
        members = value.get("M")
        if type(members) is dict:
            return parse(model, members)
    return _UNSURE


def _field(name: str, info: FieldInfo) -> _Field | None:
    """How the field is read, or None when it is of a kind read only by pydantic."""
    if (
        not isinstance(info.alias, str)
        or info.validation_alias not in (None, info.alias)
        or info.default_factory is not None
        or info.validate_default
        or info.discriminator is not None
    ):
        return None
    annotation, optional = _optional(info.annotation)
    if info.metadata:
        # A required document: pydantic keeps Metadata's validator and serializer here.
        if annotation != dict[str, Any] or info.metadata != list(get_args(Metadata)[1:]):
            return None
        annotation = Metadata
    kind, extra = _kind(annotation)
    if kind is None:
        return None
    default = _REQUIRED if info.default is PydanticUndefined else info.default
    try:
        hash(default)
        copied = False
    except TypeError:
        copied = True
    return _Field(name, info.alias, kind, optional, default, copied, extra)


def _optional(annotation: Any) -> tuple[Any, bool]:
    """The annotation without ``| None``, and whether it had it."""
    origin = get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        args = get_args(annotation)
        if len(args) == 2 and type(None) in args:
            return next(a for a in args if a is not type(None)), True
    return annotation, False


def _kind(annotation: Any) -> tuple[int | None, Any]:
    """The kind of a field of ``annotation`` (without None) and what reading it needs."""
    if annotation is str:
        return _TEXT, None
    if annotation is int:
        return _NUMBER, None
    if annotation is bool:
        return _FLAG, None
    if annotation is datetime:
        return _INSTANT_VALUE, None
    if annotation == Metadata:
        return _DOCUMENT, None
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return _CHOICE, {member.value: member for member in annotation}
    if get_origin(annotation) is list:
        (member,) = get_args(annotation)
        if member is str:
            return _TEXTS, None
        if isinstance(member, type) and issubclass(member, Item):
            return _MODELS, member
    return None, None


def key(pk: str, sk: str) -> dict[str, AttributeValueTypeDef]:
    """A primary key as DynamoDB attribute values."""
    return {"pk": {"S": pk}, "sk": {"S": sk}}
