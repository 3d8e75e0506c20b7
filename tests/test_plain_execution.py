"""Plain execution (gql/execution.py) answers exactly as graphql-core does: the same bytes, data
and errors, and the same DynamoDB calls, over generated documents of board pages (aliases,
fragments, ``@skip``/``@include``, merged selections, ``__typename``, fields that need a read,
errors); and a page of plain entries is completed without graphql-core's per-field
machinery."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from typing import Any

import pytest
from graphql import ExecutionResult, GraphQLObjectType, GraphQLResolveInfo, GraphQLScalarType

from dynamo.items import serialize
from edge.schema import EXTENSIONS
from gql import execution
from gql.execution import PlainExecutionContext, same_output
from gql.plain import UNSETTLED
from gql.schema import LeaderboardSchema, build_schema
from resolvers.context import Caller, Context, Role
from tests.conftest import WAIT, Api, each_layout
from tests.scan import scan_items


class CountingPlain(PlainExecutionContext):
    """Plain execution that counts the objects it completed itself, by type."""

    completed: dict[str, int] = {}

    def _compile(self, shape: Any) -> Any:
        complete = super()._compile(shape)
        object_type: GraphQLObjectType = shape[0]

        def counted(source: Any, context: Any, info: GraphQLResolveInfo[Any]) -> Any:
            answer = complete(source, context, info)
            if answer is not UNSETTLED:
                counts = CountingPlain.completed
                counts[object_type.name] = counts.get(object_type.name, 0) + 1
            return answer

        return counted


PLAIN = build_schema(EXTENSIONS, execution_context_class=CountingPlain)
GENERAL = build_schema(EXTENSIONS, execution_context_class=None)


async def _run(
    api: Api, schema: LeaderboardSchema, query: str, variables: dict[str, Any]
) -> tuple[bytes, dict[str, int]]:
    """The answer's bytes (data and errors as a client gets them) and the DynamoDB calls the
    execution made."""
    api.reset_calls()
    before = asyncio.all_tasks()
    context = Context(db=api.db, clock=api.clock, caller=Caller(role=Role.GAME_SERVER))
    result = await schema.execute(query, variable_values=variables, context_value=context)
    # Reads an error left running (settled in the background) count as the execution's.
    left = asyncio.all_tasks() - before - {asyncio.current_task()}
    if left:
        await asyncio.wait(left, timeout=WAIT)
    body: dict[str, Any] = {"data": result.data}
    if result.errors:
        body["errors"] = [error.formatted for error in result.errors]
    return json.dumps(body, separators=(",", ":")).encode(), api.calls


_BOARD_LEAVES = ["id", "name", "period", "sortOrder", "operator", "scoreWidth", "partitions"]
_BOARD_LEAVES += ["minScore", "maxScore", "startsAt", "endsAt", "entryCount", "expiresAt"]
_BOARD_LEAVES += ["status", "closedAt", "archiveDays"]
_PAGE_INFO = ["hasNextPage", "hasPreviousPage", "startCursor", "endCursor"]
_SCORE_LEAVES = ["score", "rank", "attainedAt", "sessionId", "metadata"]
_PAGE_ARGUMENTS = ["", "(first: 3)", "(first: 100)", "(first: $first)"]
_PAGE_ARGUMENTS += ["(first: 2, after: $after)", "(first: 101)"]
_PAGE_ARGUMENTS += ['(first: 2, after: "not a cursor")']
_PLAYER_NAMED = ["id", "name"]
_PLAYER_READ = ["gamesPlayed", "lifetimeScore", "createdAt"]


_VARIABLES = {
    "board": "$board: ID!",
    "first": "$first: Int",
    "after": "$after: String",
    "yes": "$yes: Boolean!",
    "no": "$no: Boolean!",
}


class _Documents:
    """Random documents asking for a board's page, and the fragments they use."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)
        self.fragments: dict[str, str] = {}
        self.aliases = 0

    def _field(self, name: str, body: str = "") -> str:
        rnd = self.random
        text = name
        roll = rnd.random()
        if roll < 0.15:
            self.aliases += 1
            text = f"a{self.aliases}: {text}"
        elif roll < 0.2:
            text = f"{name}: {text}"  # an alias that is the field's own name
        roll = rnd.random()
        if roll < 0.08:
            text += " @include(if: $yes)"
        elif roll < 0.14:
            text += " @skip(if: $yes)"
        elif roll < 0.18:
            text += " @include(if: $no)"
        return text + (f" {{ {body} }}" if body else "")

    def _selection(self, type_name: str, fields: list[str]) -> str:
        rnd = self.random
        chosen = [self._field(f) for f in rnd.sample(fields, rnd.randint(1, len(fields)))]
        if rnd.random() < 0.2:
            chosen.append("__typename")
        if rnd.random() < 0.15 and chosen:
            chosen.append(rnd.choice(chosen))  # the same field again: merged
        return self._wrap(type_name, chosen)

    def _wrap(self, type_name: str, chosen: list[str]) -> str:
        """The selections, some of them in an inline or a named fragment."""
        rnd = self.random
        roll = rnd.random()
        if roll < 0.15 and len(chosen) > 1:
            cut = rnd.randint(1, len(chosen) - 1)
            return " ".join(chosen[:cut]) + f" ... on {type_name} {{ {' '.join(chosen[cut:])} }}"
        if roll < 0.25:
            name = f"F{len(self.fragments)}"
            self.fragments[name] = f"fragment {name} on {type_name} {{ {' '.join(chosen)} }}"
            return f"...{name}"
        return " ".join(chosen)

    def player(self) -> str:
        fields = list(_PLAYER_NAMED)
        if self.random.random() < 0.25:
            fields.append(self.random.choice(_PLAYER_READ))
        return self._selection("Player", fields)

    def score(self) -> str:
        rnd = self.random
        chosen = [self._field(f) for f in rnd.sample(_SCORE_LEAVES, rnd.randint(0, 5))]
        if rnd.random() < 0.8:
            chosen.append(self._field("player", self.player()))
        if rnd.random() < 0.1:
            chosen.append(self._field("leaderboard", "id name"))
        if not chosen:
            chosen.append("score")
        return self._wrap("Score", chosen)

    def page(self) -> str:
        rnd = self.random
        edge = [self._field("node", self.score())]
        if rnd.random() < 0.4:
            edge.append(self._field("cursor"))
        chosen = [self._field("edges", self._wrap("ScoreEdge", edge))]
        if rnd.random() < 0.4:
            chosen.append(self._field("pageInfo", self._selection("PageInfo", _PAGE_INFO)))
        arguments = rnd.choice(_PAGE_ARGUMENTS)
        return f"topScores{arguments} {{ {self._wrap('ScoreConnection', chosen)} }}"

    def document(self) -> str:
        rnd = self.random
        self.fragments = {}
        board = rnd.choice(['"b1"', '"b1"', '"b1"', "$board", '"missing"', '"bad#id"'])
        fields = [self._field(f) for f in rnd.sample(_BOARD_LEAVES, rnd.randint(0, 4))]
        fields.append(self.page())
        root = f"leaderboard(id: {board}) {{ {self._wrap('Leaderboard', fields)} }}"
        if rnd.random() < 0.15:
            root = f'first: {root} second: leaderboard(id: "b1") {{ id entryCount }}'
        text = " ".join([root, *self.fragments.values()])
        declared = ", ".join(d for n, d in _VARIABLES.items() if f"${n}" in text)
        head = f"query Page({declared})" if declared else "query Page"
        return " ".join([f"{head} {{ {root} }}", *self.fragments.values()])


async def _board(api: Api) -> str:
    """Board b1 with 12 entries (ties among them), two of them written before entries held
    their player's name, one with metadata; the cursor after its first two entries."""
    await api.create_board("b1", minScore=0, maxScore=10_000)
    for i in range(12):
        player = f"p{i:02}"
        await api.create_player(player, f"Player {i}")
        data = await api.gql(
            """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
                errors { code } } }""",
            {
                "i": {
                    "playerId": player,
                    "leaderboardId": "b1",
                    "gameId": "g",
                    "score": [500, 700, 700, 20, 9000, 700, 1, 350, 20, 4000, 60, 80][i],
                    **({"metadata": {"level": 3, "tags": ["a", "b"]}} if i == 4 else {}),
                }
            },
        )
        assert data["submitScore"]["errors"] == []
    for item in await scan_items(api.db):
        if item.get("playerId") in {"p03", "p07"} and "playerName" in item:
            await api.db.client.update_item(
                TableName=api.db.table,
                Key=serialize({"pk": item["pk"], "sk": item["sk"]}),
                UpdateExpression="REMOVE playerName",
            )
    page = await api.gql(
        '{ leaderboard(id: "b1") { topScores(first: 2) { pageInfo { endCursor } } } }'
    )
    cursor: str = page["leaderboard"]["topScores"]["pageInfo"]["endCursor"]
    return cursor


@each_layout
async def test_generated_documents_answer_alike_byte_for_byte(api: Api) -> None:
    after = await _board(api)
    documents = _Documents(seed=20261202)
    plain_runs = 0
    answers: Counter[tuple[bool, bool]] = Counter()
    CountingPlain.completed = {}
    for _ in range(200):
        query = documents.document()
        values = {"board": "b1", "first": 5, "after": after, "yes": True, "no": False}
        variables = {n: v for n, v in values.items() if f"${n}" in query}
        general = await _run(api, GENERAL, query, variables)
        plain = await _run(api, PLAIN, query, variables)
        assert plain == general, query
        answers[b'"errors"' in plain[0], b'"data":null' in plain[0]] += 1
        plain_runs += 1
    # The documents exercised the plain completion, and graphql-core's where needed.
    assert plain_runs == 200
    # Most answered with data and no error; some with errors beside data, or none at all.
    assert answers[False, False] > 80
    assert answers[True, False] > 30
    assert CountingPlain.completed.get("ScoreEdge", 0) > 100
    assert CountingPlain.completed.get("Player", 0) > 100


async def test_a_page_of_entries_holding_their_names_is_completed_plainly(api: Api) -> None:
    await _board(api)
    query = """{ leaderboard(id: "b1") { name topScores(first: 100) {
        edges { cursor node { rank score player { id name } } } pageInfo { hasNextPage } } } }"""
    CountingPlain.completed = {}
    plain, plain_calls = await _run(api, PLAIN, query, {})
    general, general_calls = await _run(api, GENERAL, query, {})
    assert plain == general
    assert plain_calls == general_calls
    answer = json.loads(plain)["data"]["leaderboard"]["topScores"]
    assert [e["node"]["rank"] for e in answer["edges"]] == [1, 2, 3, 3, 3, 6, 7, 8, 9, 10, 10, 12]
    # The connection with its list of edges, every edge, entry, player and the page's info
    # completed plainly: the two entries without a copy of their name too, their players read
    # with the page.
    assert CountingPlain.completed == {
        "ScoreConnection": 1,
        "ScoreEdge": 12,
        "Score": 12,
        "Player": 12,
        "PageInfo": 1,
    }


async def test_a_push_of_the_top_is_completed_plainly_ranks_and_names_at_hand(api: Api) -> None:
    """A subscription's push holds its entries' ranks and players already: its entries and
    their players are completed plainly, so no coroutine of theirs is made that a socket
    closing mid-push could leave unawaited."""
    await _board(api)
    query = """subscription { leaderboardChanged(leaderboardId: "b1", first: 12) {
        entries { rank score player { id name } } } }"""
    context = Context(db=api.db, clock=api.clock, caller=Caller(role=Role.GAME_SERVER))
    CountingPlain.completed = {}
    pushes = await PLAIN.subscribe(query, context_value=context)
    assert not isinstance(pushes, ExecutionResult)
    try:
        push = await anext(pushes)
    finally:
        await pushes.aclose()
    assert push.errors is None
    assert push.data is not None
    entries = push.data["leaderboardChanged"]["entries"]
    assert [e["rank"] for e in entries] == [1, 2, 3, 3, 3, 6, 7, 8, 9, 10, 10, 12]
    assert [e["player"]["id"] for e in entries[:2]] == ["p04", "p09"]
    assert CountingPlain.completed == {"LeaderboardTop": 1, "Score": 12, "Player": 12}


def test_a_leaf_answered_as_it_is_is_what_its_coercion_answers() -> None:
    """Plain execution skips a leaf's coercion only for a value the coercion answers as it
    is, of the same type: every value taken so is checked against the coercion itself, and
    the values it must coerce (a bool for Int, a float, out of range) are not taken."""
    schema = GENERAL._schema
    values: list[Any] = [0, 1, -1, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 10**15 - 1]
    values += [10**15, True, False, 1.0, 2.5, "", "text", "12", b"x", None, [1]]
    taken: dict[str, list[Any]] = {}
    for name in ("Int", "String", "ID", "Boolean", "Long"):
        leaf = schema.type_map[name]
        assert isinstance(leaf, GraphQLScalarType)
        same = same_output(leaf)
        assert same is not None, name
        for value in values:
            if same(value):
                coerced = leaf.coerce_output_value(value)
                assert coerced == value, (name, value)
                assert type(coerced) is type(value), (name, value)
                taken.setdefault(name, []).append(value)
    assert taken == {
        "Int": [0, 1, -1, 2**31 - 1, -(2**31)],
        "String": ["", "text", "12"],
        "ID": ["", "text", "12"],
        "Boolean": [True, False],
        "Long": [0, 1, 2**31 - 1, 2**31, 10**15 - 1],
    }
    assert same_output(schema.type_map["Float"]) is None  # type: ignore[arg-type]


async def test_a_shapes_completer_is_made_once_and_the_kept_ones_are_bounded(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document asked again is completed by the completers its first execution made; the
    shapes kept between executions are at most COMPLETERS_KEPT, the oldest used dropped."""
    await _board(api)
    made: list[str] = []
    real = PlainExecutionContext._compile

    def compile_counted(self: PlainExecutionContext, shape: Any) -> Any:
        made.append(shape[0].name)
        return real(self, shape)

    monkeypatch.setattr(PlainExecutionContext, "_compile", compile_counted)
    schema = build_schema(EXTENSIONS, execution_context_class=PlainExecutionContext)
    query = '{ leaderboard(id: "b1") { topScores(first: 3) { edges { node { score } } } } }'
    first, _ = await _run(api, schema, query, {})
    assert sorted(made) == ["Score", "ScoreConnection", "ScoreEdge"]
    again, _ = await _run(api, schema, query, {})
    assert again == first
    assert len(made) == 3
    monkeypatch.setattr(execution, "COMPLETERS_KEPT", 4)
    for alias in ("a", "b", "c"):
        aliased = query.replace("score", f"{alias}: score")
        await _run(api, schema, aliased, {})
    assert len(execution._COMPLETERS) == 4
    # The first document's Score shape was the oldest used: it is made again when asked.
    made.clear()
    assert (await _run(api, schema, query, {}))[0] == first
    assert "Score" in made
