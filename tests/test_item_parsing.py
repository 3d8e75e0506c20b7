"""Items read straight from their attribute values (dynamo/items.py's readers) are the models
pydantic's validation builds from them, field by field, in the fields they were given and in
every field's type, for items of every form: attributes missing or NULL, numbers whole or with
a fraction, instants with ``Z``, an offset or none (or written otherwise), documents as JSON
text or as maps, binary values, lists, attributes of a field's name or of another type. They
are also the models of a reference base whose validator of every field puts instants in UTC,
and the items it refuses are refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from enum import Enum
from functools import cache
from types import UnionType
from typing import Any, Union, get_args, get_origin

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, create_model, field_validator
from pydantic.alias_generators import to_camel

from dynamo.claims import ClaimItem
from dynamo.deliveries import DeliveryItem
from dynamo.entry_guards import EntryGuardItem
from dynamo.families import FamilyItem
from dynamo.items import Item, deserialize, parse, read_item, serialize, stamp
from dynamo.leaderboards import EntryCountShard, LeaderboardItem, Period
from dynamo.moderation import ModerationItem, RemovedEntry
from dynamo.play_records import PlayRecord, RecordedEntry
from dynamo.players import PlayerItem
from dynamo.results import ResultItem
from dynamo.rewards import RewardTier, TierKind
from dynamo.scores import ScoreItem, score_item
from dynamo.sessions import SessionItem
from dynamo.wire import attribute_map, attribute_value

MODELS: list[type[Item]] = [
    ScoreItem,
    LeaderboardItem,
    PlayerItem,
    ResultItem,
    SessionItem,
    EntryGuardItem,
    EntryCountShard,
    ModerationItem,
    RemovedEntry,
    FamilyItem,
    RewardTier,
    ClaimItem,
    DeliveryItem,
    PlayRecord,
    RecordedEntry,
]

EXAMPLES = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class _ReferenceItem(BaseModel):
    """The reference base of the item models: a validator of every field puts its instants
    in UTC."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="ignore"
    )

    @field_validator("*", mode="after")
    @classmethod
    def _utc(cls, value: Any) -> Any:
        if isinstance(value, datetime):
            return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value


@cache
def _reference(model: type[Item]) -> type[BaseModel]:
    """``model``'s fields on the reference base."""
    fields: Any = {name: (info.annotation, info) for name, info in model.model_fields.items()}
    return create_model(f"Reference{model.__name__}", __base__=_ReferenceItem, **fields)


def _shape(value: Any) -> Any:
    """A value as compared: its type and exact form throughout (an instant with its tzinfo's
    type, a number with its type and digits)."""
    if isinstance(value, BaseModel):
        return (type(value).__name__.removeprefix("Reference"), _fields(value))
    if isinstance(value, datetime):
        return ("datetime", value.isoformat(), type(value.tzinfo).__name__)
    if isinstance(value, list):
        return ("list", [_shape(v) for v in value])
    if isinstance(value, dict):
        return ("dict", {k: _shape(v) for k, v in value.items()})
    return (type(value).__name__, repr(value))


def _fields(model: BaseModel) -> Any:
    return (
        [(name, _shape(v)) for name, v in model.__dict__.items()],
        sorted(model.model_fields_set),
        model.__pydantic_extra__,
        model.__pydantic_private__,
    )


def _outcome(build: Any) -> Any:
    """What building gives: the model's shape, or the type of error refusing the item."""
    try:
        return ("built", _shape(build()))
    except Exception as error:  # any refusal, to be the same refusal every way
        return ("refused", type(error).__name__)


def _same_everywhere(model: type[Item], raw: dict[str, Any]) -> Any:
    """Parse ``raw`` every way; each must build the same model or refuse it alike."""
    parsed = _outcome(lambda: parse(model, raw))
    validated = _outcome(lambda: model.model_validate(deserialize(raw)))
    reference = _outcome(lambda: _reference(model).model_validate(deserialize(raw)))
    assert parsed == validated
    if reference == ("refused", "OverflowError"):
        # An instant past the calendar once in UTC (year 1 with an offset east of UTC): the
        # reference refuses it as its field is validated, the item models once every field
        # is valid, so that another field's refusal may come first.
        assert parsed[0] == "refused"
    else:
        assert parsed == reference
    direct = read_item(model, raw)
    if direct is not None:
        assert parsed == ("built", _shape(direct))
    return parsed


# Attribute values of every form.

_NUMBER_TEXTS = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.integers(-(10**6), 10**6).map(lambda n: f"{n}.0"),
    st.integers(-99, 99).map(lambda n: f"{n}e2"),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(str),
    st.sampled_from(["0", "-0", "1.5", "-0.125", "1E+3", "00012", "2.50"]),
)
_ANY_SCALAR = st.one_of(
    st.text(max_size=12).map(lambda t: {"S": t}),
    _NUMBER_TEXTS.map(lambda n: {"N": n}),
    st.booleans().map(lambda b: {"BOOL": b}),
    st.just({"NULL": True}),
    st.binary(max_size=8).map(lambda b: {"B": b}),
    st.lists(st.text(max_size=4), min_size=1, max_size=3, unique=True).map(lambda t: {"SS": t}),
    st.lists(st.integers(-9, 9).map(str), min_size=1, max_size=3, unique=True).map(
        lambda n: {"NS": n}
    ),
    st.lists(st.binary(max_size=3), min_size=1, max_size=2, unique=True).map(lambda b: {"BS": b}),
)
ANY_VALUE = st.recursive(
    _ANY_SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda v: {"L": v}),
        st.dictionaries(st.text(max_size=4), inner, max_size=3).map(lambda v: {"M": v}),
    ),
    max_leaves=6,
)
"""Any attribute value, of any type, nested."""


@st.composite
def instants(draw: st.DrawFn) -> str:
    """An instant as an item may hold it: ISO 8601 with ``Z``, an offset or none, fractions of
    up to nine digits, or written otherwise (a space, a date alone, no colon, a lowercase z,
    out of range)."""
    at = draw(st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)))
    text = at.strftime("%Y-%m-%dT%H:%M:%S")
    digits = draw(st.integers(0, 9))
    if digits:
        text += "." + draw(st.text("0123456789", min_size=digits, max_size=digits))
    zone = draw(
        st.one_of(
            st.sampled_from(["Z", "", "+00:00", "-00:00", "z", "+0530", "+24:00", "+05:60"]),
            st.builds(
                lambda sign, h, m: f"{sign}{h:02d}:{m:02d}",
                st.sampled_from("+-"),
                st.integers(0, 23),
                st.integers(0, 59),
            ),
        )
    )
    text += zone
    return draw(
        st.one_of(
            st.just(text),
            st.just(text.replace("T", " ")),
            st.just(text[:10]),
            st.just(text[:16]),
            st.sampled_from(
                [
                    "2025-02-29T00:00:00Z",
                    "2025-03-04T24:00:00Z",
                    "2025-03-04T23:59:60Z",
                    "0001-01-01T00:00:00+01:00",
                    "9999-12-31T23:59:59-01:00",
                    "1700000000",
                    "2025-03-04T05:06:07.Z",
                ]
            ),
        )
    )


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)


def _documents() -> st.SearchStrategy[dict[str, Any]]:
    """A document as an item holds it: its JSON text, or a map of attribute values; or JSON
    that holds no object, or text that is no JSON."""
    return st.one_of(
        st.dictionaries(st.text(max_size=4), _JSON, max_size=4).map(lambda d: {"S": json.dumps(d)}),
        _JSON.map(lambda d: {"S": json.dumps(d)}),
        st.sampled_from([{"S": "{"}, {"S": ""}, {"S": "[1, 2]"}, {"S": '{"a": 1e400}'}]),
        st.dictionaries(st.text(max_size=4), ANY_VALUE, max_size=3).map(lambda m: {"M": m}),
    )


def _without_none(annotation: Any) -> Any:
    args = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) in (Union, UnionType) and len(args) == 1:
        return args[0]
    return annotation


Members = Callable[[type[Item]], st.SearchStrategy[dict[str, Any]]]


@st.composite
def stamped(draw: st.DrawFn) -> str:
    """An instant as the service writes one: ISO 8601 in UTC with ``Z`` (``stamp``), with
    microseconds or none; or with an offset."""
    at = draw(st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31)))
    if draw(st.booleans()):
        return stamp(at.replace(tzinfo=UTC))
    offset = timedelta(minutes=draw(st.integers(-23 * 60, 23 * 60)))
    return at.replace(tzinfo=timezone(offset)).isoformat()


def _good(
    model: type[Item], name: str, draw: st.DrawFn, members: Members, *, stored: bool
) -> dict[str, Any]:
    """An attribute value of the form ``model``'s field ``name`` is read from: as the table
    holds it when ``stored``, else mostly so (a list of models holds raw items drawn from
    ``members``)."""
    annotation = _without_none(model.model_fields[name].annotation)
    if name == "metadata":
        if stored:
            document = draw(st.dictionaries(st.text(max_size=4), _JSON, max_size=4))
            return {"S": json.dumps(document)}
        return draw(_documents())
    if annotation is datetime:
        return {"S": draw(stamped() if stored else instants())}
    if get_origin(annotation) is list:
        (member,) = get_args(annotation)
        if member is str:
            return {"L": [{"S": t} for t in draw(st.lists(st.text(max_size=5), max_size=3))]}
        return {"L": [{"M": m} for m in draw(st.lists(members(member), max_size=2))]}
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        values = [m.value for m in annotation]
        return {"S": draw(st.sampled_from(values if stored else [*values, "nope", "desc"]))}
    if annotation is bool:
        return {"BOOL": draw(st.booleans())}
    if annotation is int and stored:
        return {"N": str(draw(st.integers(-(10**20), 10**20)))}
    if annotation in (int, Decimal):
        return {"N": draw(_NUMBER_TEXTS)}
    return {"S": draw(st.text(max_size=12))}


@st.composite
def raw_items(draw: st.DrawFn, model: type[Item]) -> dict[str, Any]:
    """A raw item of ``model``'s entity: keys and other attributes, and each field's attribute
    absent, NULL, of its own form or of any other, under its alias, its name or both."""
    raw: dict[str, Any] = {"pk": {"S": "PK#x"}, "sk": {"S": "SK#y"}}
    if draw(st.booleans()):
        raw["gsi1pk"] = {"S": "G#1"}
        raw["other"] = draw(ANY_VALUE)
    for name, info in model.model_fields.items():
        choice = draw(st.sampled_from(["good"] * 6 + ["absent", "null", "other"]))
        if choice == "absent":
            continue
        if choice == "good":
            value = _good(model, name, draw, raw_items, stored=False)
        else:
            value = {"NULL": True} if choice == "null" else draw(ANY_VALUE)
        alias = info.alias or name
        where = draw(st.sampled_from(["alias"] * 8 + ["name", "both"]))
        if where == "alias" or alias == name:
            raw[alias] = value
        elif where == "name":
            raw[name] = value
        else:
            raw[alias] = value
            raw[name] = draw(ANY_VALUE)
    return raw


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@EXAMPLES
@given(data=st.data())
def test_every_raw_item_reads_as_pydantic_builds_it(model: type[Item], data: st.DataObject) -> None:
    _same_everywhere(model, data.draw(raw_items(model)))


@st.composite
def stored_items(draw: st.DrawFn, model: type[Item]) -> dict[str, Any]:
    """A raw item of ``model`` as the table holds one: only its fields' own forms."""
    raw: dict[str, Any] = {"pk": {"S": "PK#x"}, "sk": {"S": "SK#y"}}
    for name, info in model.model_fields.items():
        if info.is_required() or draw(st.booleans()):
            raw[info.alias or name] = _good(model, name, draw, stored_items, stored=True)
    return raw


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
@EXAMPLES
@given(data=st.data())
def test_items_as_stored_read_as_pydantic_builds_them(
    model: type[Item], data: st.DataObject
) -> None:
    raw = data.draw(stored_items(model))
    _same_everywhere(model, raw)
    if model is not RewardTier:  # a decimal field: read by pydantic
        assert read_item(model, raw) is not None


def _as_sent(item: dict[str, Any]) -> dict[str, Any]:
    """An item's attribute values as the service's client returns them (dynamo/wire.py)."""
    return attribute_map(json.loads(json.dumps(serialize(item))))


BOARD = LeaderboardItem(
    leaderboard_id="global",
    name="Global",
    period=Period.GLOBAL,
    created_at=datetime(2026, 1, 1, tzinfo=UTC),
    ends_at=datetime(2026, 2, 1, 12, 30, 0, 123000, tzinfo=UTC),
    reward_tiers=[
        RewardTier(kind=TierKind.RANKS, reward_id="gold", from_rank=1, to_rank=3),
        RewardTier(kind=TierKind.TOP_PERCENT, reward_id="silver", top_percent=Decimal("12.5")),
    ],
)
ENTRIES = [
    ScoreItem(
        leaderboard_id="global",
        player_id="player-0042",
        score=123_450,
        attained_at=datetime(2026, 3, 4, 5, 6, 7, 890_000, tzinfo=UTC),
        session_id="01JABCDEFGHJKMNPQRSTVWXYZ0",
        version=3,
        player_name="Ada Lovelace",
        player_name_version=2,
    ),
    ScoreItem(
        leaderboard_id="global",
        player_id="player-0043",
        score=0,
        attained_at=datetime(2026, 3, 4, tzinfo=UTC),
        ttl=1_800_000_000,
        metadata={"map": "dunes", "laps": [1, 2.5, None], "deep": {"x": {"y": True}}},
    ),
]


@pytest.mark.parametrize("entry", ENTRIES, ids=["named", "with-metadata"])
def test_a_page_s_score_items_are_read_directly(entry: ScoreItem) -> None:
    raw = _as_sent(score_item(BOARD, entry))
    direct = read_item(ScoreItem, raw)
    assert direct == entry
    assert direct is not None
    assert _same_everywhere(ScoreItem, raw) == ("built", _shape(direct))


def test_boards_and_players_are_read_directly() -> None:
    player = PlayerItem(
        player_id="player-0042",
        name="Ada",
        email="ada@example.com",
        lifetime_score=10**15,
        games_played=3,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        updated_at=datetime(2026, 2, 1, 1, 2, 3, 4000, tzinfo=UTC),
        renaming=False,
    )
    board = BOARD.model_copy(update={"reward_tiers": None})
    for model, item in ((PlayerItem, player), (LeaderboardItem, board)):
        raw = _as_sent({"pk": "PK#x", "sk": "SK#y", **item.attributes()})
        direct = read_item(model, raw)
        assert direct == item
        _same_everywhere(model, raw)
    # A board with reward tiers: its tiers (a decimal field) are left to pydantic, alike.
    raw = _as_sent({"pk": "PK#x", "sk": "SK#y", **BOARD.attributes()})
    assert parse(LeaderboardItem, raw) == BOARD
    _same_everywhere(LeaderboardItem, raw)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-03-04T05:06:07Z", datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)),
        ("2026-03-04T05:06:07.8Z", datetime(2026, 3, 4, 5, 6, 7, 800_000, tzinfo=UTC)),
        ("2026-03-04T05:06:07.123456Z", datetime(2026, 3, 4, 5, 6, 7, 123_456, tzinfo=UTC)),
        ("2026-03-04T05:06:07", datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)),
        ("2026-03-04T05:06:07+05:30", datetime(2026, 3, 3, 23, 36, 7, tzinfo=UTC)),
        ("2026-03-04T05:06:07-23:59", datetime(2026, 3, 5, 5, 5, 7, tzinfo=UTC)),
        ("2026-03-04T05:06:07.1234567Z", datetime(2026, 3, 4, 5, 6, 7, 123_456, tzinfo=UTC)),
        ("2026-03-04 05:06:07Z", datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)),
    ],
)
def test_instants_of_every_form_are_kept_in_utc(text: str, expected: datetime) -> None:
    raw = {"leaderboardId": {"S": "b"}, "playerId": {"S": "p"}, "score": {"N": "1"}}
    entry = parse(ScoreItem, {**raw, "attainedAt": {"S": text}})
    assert entry.attained_at == expected
    assert entry.attained_at.tzinfo is UTC
    _same_everywhere(ScoreItem, {**raw, "attainedAt": {"S": text}})


@pytest.mark.parametrize(
    "number", ["12", "12.0", "1.2E+1", "-0", "123456789012345678901234567890", "1.5"]
)
def test_numbers_whole_or_not_read_as_pydantic_reads_them(number: str) -> None:
    raw = {
        "leaderboardId": {"S": "b"},
        "playerId": {"S": "p"},
        "score": {"N": number},
        "attainedAt": {"S": "2026-03-04T05:06:07Z"},
    }
    outcome = _same_everywhere(ScoreItem, raw)
    assert (outcome[0] == "refused") == (number == "1.5")


def test_instants_given_to_a_model_are_kept_in_utc_as_by_the_reference() -> None:
    for at in (
        datetime(2026, 3, 4, 5, 6, 7),
        datetime(2026, 3, 4, 5, 6, 7, tzinfo=timezone(timedelta(hours=-3))),
        datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC),
    ):
        fields: dict[str, Any] = {
            "leaderboard_id": "b",
            "player_id": "p",
            "score": 1,
            "attained_at": at,
        }
        built = ScoreItem(**fields)
        assert built.attained_at.tzinfo is UTC
        assert _shape(built) == _shape(_reference(ScoreItem)(**fields))


def test_metadata_and_binary_values_read_alike() -> None:
    raw = {
        "leaderboardId": {"S": "b"},
        "playerId": {"S": "p"},
        "score": {"N": "1"},
        "attainedAt": {"S": "2026-03-04T05:06:07Z"},
        "blob": {"B": b"\x00\x01"},
    }
    for metadata in (
        {"S": '{"a": [1, 2.5, {"b": null}]}'},
        {"M": {"a": {"N": "2.50"}, "b": {"L": [{"S": "x"}, {"B": b"\x07"}]}}},
        {"L": [{"S": "not a map"}]},
        {"B": b"\x00"},
        {"NULL": True},
    ):
        _same_everywhere(ScoreItem, {**raw, "metadata": metadata})


def test_the_wire_returns_a_plain_item_as_decoded() -> None:
    plain = {"pk": {"S": "a"}, "n": {"N": "1"}, "t": {"BOOL": True}, "z": {"NULL": True}}
    assert attribute_map(plain) is plain
    binary: dict[str, Any] = {
        "pk": {"S": "a"},
        "b": {"B": "AAE="},
        "m": {"M": {"x": {"B": "AA=="}}},
    }
    assert attribute_map(binary) == {
        name: attribute_value(member) for name, member in binary.items()
    }
    assert attribute_map(binary)["b"] == {"B": b"\x00\x01"}
    with pytest.raises(ValueError, match="exactly one member"):
        attribute_map({"pk": {"S": "a", "N": "1"}})
