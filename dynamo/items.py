"""Item models and their attribute values: the base of every item model, the instant items
are stamped with, and DynamoDB attribute values to and from Python values."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from pydantic import BaseModel, ConfigDict, field_validator
from pydantic.alias_generators import to_camel

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb.type_defs import AttributeValueTypeDef

__all__ = [
    "Item",
    "M",
    "deserialize",
    "key",
    "now",
    "parse",
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

    @field_validator("*", mode="after")
    @classmethod
    def _utc(cls, value: Any) -> Any:
        """Every instant is kept in UTC; one without an offset is taken to be UTC."""
        if isinstance(value, datetime):
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value

    def attributes(self) -> dict[str, Any]:
        """The plain (non-key) attributes as stored in DynamoDB, None-valued ones left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


M = TypeVar("M", bound=Item)
"""Any item model."""


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
    """Build an item model from a raw DynamoDB item."""
    return model.model_validate(deserialize(item))


def key(pk: str, sk: str) -> dict[str, AttributeValueTypeDef]:
    """A primary key as DynamoDB attribute values."""
    return {"pk": {"S": pk}, "sk": {"S": sk}}
