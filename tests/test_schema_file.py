"""The committed schema.graphql is exactly what the code exports."""

from __future__ import annotations

from pathlib import Path

from graphql import GraphQLEnumType, GraphQLInputObjectType, GraphQLObjectType, build_schema

from edge.schema import schema

ROOT = Path(__file__).resolve().parent.parent


def test_committed_schema_matches_the_code() -> None:
    committed = (ROOT / "schema.graphql").read_text()
    assert committed == schema.as_str() + "\n", "run `make schema` and commit schema.graphql"


def test_contract_names_are_present() -> None:
    sdl = build_schema((ROOT / "schema.graphql").read_text())
    query = sdl.query_type
    mutation = sdl.mutation_type
    assert query is not None
    assert mutation is not None
    contract_queries = {"player", "playerByEmail", "leaderboard", "session", "gameSessions"}
    assert contract_queries <= set(query.fields)
    assert {"createPlayer", "createLeaderboard", "submitScore"} <= set(mutation.fields)
    for name in (
        "Player",
        "Leaderboard",
        "Score",
        "Session",
        "Rank",
        "ScoreConnection",
        "SessionConnection",
        "SubmitScorePayload",
        "UserError",
        "Long",
        "DateTime",
        "LeaderboardPeriod",
        "SortOrder",
    ):
        assert name in sdl.type_map, name


def test_every_type_field_argument_and_enum_value_has_a_description() -> None:
    sdl = build_schema((ROOT / "schema.graphql").read_text())
    missing = []
    for name, kind in sdl.type_map.items():
        if name.startswith("__") or name in {"String", "Int", "Float", "Boolean", "ID"}:
            continue
        if not kind.description:
            missing.append(f"type {name}")
        if isinstance(kind, GraphQLObjectType | GraphQLInputObjectType):
            for field_name, field in kind.fields.items():
                if not field.description:
                    missing.append(f"{name}.{field_name}")
                for arg_name, arg in getattr(field, "args", {}).items():
                    if not arg.description:
                        missing.append(f"{name}.{field_name}({arg_name})")
        if isinstance(kind, GraphQLEnumType):
            missing += [f"{name}.{v}" for v, value in kind.values.items() if not value.description]
    assert missing == []
