"""Metadata on plays: a JSON object kept with the session and with the entry the play makes,
read back wherever scores are listed, and refused whole (INVALID_METADATA, nothing written on
any board) when it is not a small, shallow JSON object."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dynamo.errors import ErrorCode
from resolvers.inputs import FieldError, clean_metadata
from tests.conftest import API_KEYS, WAIT, Api, Indexed
from tests.scan import scan_items
from tests.test_subscriptions import _subscribed

SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    improved duplicate session { id metadata } score { score metadata }
    entries { leaderboardId improved score { score metadata } }
    errors { code field } } }"""

DOCUMENT: dict[str, Any] = {
    "level": "Überwelt 🌋 3-2",
    "replay": {"id": "r-81", "frames": [1, 2, 3], "checksum": None},
    "speed": 1.5,
    "tiny": 1e-07,
    "big": 2**60,
    "negative": -12,
    "zero": 0.0,
    "cheats": False,
    "verified": True,
    "empty": {},
    "none": [],
    "quote": 'a "b" \\ c\n',
}


def _play(player: str, score: int, metadata: Any = None, **extra: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"playerId": player, "gameId": "g", "score": score, **extra}
    fields.setdefault("leaderboardId", "b")
    if metadata is not None:
        fields["metadata"] = metadata
    return {"i": fields}


async def _submit(api: Api, player: str, score: int, metadata: Any = None, **extra: Any) -> Any:
    payload = (await api.gql(SUBMIT, _play(player, score, metadata, **extra)))["submitScore"]
    assert payload["errors"] == [], payload
    return payload


async def _entry(api: Api, player: str, board: str = "b") -> Any:
    """The player's entry as read from the table (AP4, GSI1) by a request of its own."""
    data = await api.gql(
        """query($p: ID!, $b: ID!) { player(id: $p) { entry(leaderboardId: $b) {
            score metadata } } }""",
        {"p": player, "b": board},
    )
    return data["player"]["entry"]


def _nested(depth: int, *, arrays: bool = False) -> dict[str, Any]:
    """An object nested ``depth`` deep (the object itself is depth 1), through objects or,
    below the top, through arrays."""
    inner: Any = [] if arrays else {}
    for _ in range(depth - 2):
        inner = [inner] if arrays else {"a": inner}
    return {"a": inner} if depth > 1 else {}


def _sized(size: int, char: str = "x") -> dict[str, str]:
    """An object whose compact UTF-8 JSON is ``size`` bytes (``char`` fills it)."""
    width = len(char.encode("utf-8"))
    fill, rest = divmod(size - len('{"k":""}'), width)
    assert rest == 0
    document = {"k": char * fill}
    assert len(json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()) == size
    return document


async def test_metadata_round_trips_on_the_session_and_the_entry(api: Api) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    played = await _submit(api, "ann", 10, DOCUMENT)
    assert played["session"]["metadata"] == DOCUMENT
    assert played["score"]["metadata"] == DOCUMENT
    assert played["entries"][0]["score"]["metadata"] == DOCUMENT

    session_id = played["session"]["id"]
    data = await api.gql(
        """query($s: ID!) { session(playerId: "ann", sessionId: $s) { metadata }
            player(id: "ann") { sessions { edges { node { metadata } } }
                                scores { edges { node { metadata } } } }
            gameSessions(gameId: "g") { edges { node { metadata } } } }""",
        {"s": session_id},
    )
    assert data["session"]["metadata"] == DOCUMENT
    assert data["player"]["sessions"]["edges"][0]["node"]["metadata"] == DOCUMENT
    assert data["player"]["scores"]["edges"][0]["node"]["metadata"] == DOCUMENT
    assert data["gameSessions"]["edges"][0]["node"]["metadata"] == DOCUMENT
    assert (await _entry(api, "ann"))["metadata"] == DOCUMENT

    # Stored as the compact JSON text on the session, the Score item and the entry guard.
    items = await scan_items(api.db)
    stored = [i["metadata"] for i in items if "metadata" in i]
    assert len(stored) == 3
    assert all(isinstance(s, str) and json.loads(s) == DOCUMENT for s in stored)


async def test_a_play_without_metadata_reads_null_and_stores_nothing(api: Api) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    played = await _submit(api, "ann", 10, None)
    assert played["session"]["metadata"] is None
    assert played["score"]["metadata"] is None
    assert (await _entry(api, "ann"))["metadata"] is None
    assert not any("metadata" in i for i in await scan_items(api.db))
    # An explicit null is no metadata.
    payload = (await api.gql(SUBMIT, {"i": {**_play("ann", 11)["i"], "metadata": None}}))[
        "submitScore"
    ]
    assert payload["errors"] == []
    assert payload["session"]["metadata"] is None


async def test_metadata_as_a_literal_in_the_document(api: Api) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    data = await api.gql(
        """mutation { submitScore(input: {playerId: "ann", leaderboardId: "b", gameId: "g",
            score: 3, metadata: {level: 3, tags: ["a", "b"], ok: true, at: null, x: 1.5}}) {
            session { metadata } errors { code } } }"""
    )
    assert data["submitScore"]["session"]["metadata"] == {
        "level": 3,
        "tags": ["a", "b"],
        "ok": True,
        "at": None,
        "x": 1.5,
    }


async def test_best_keeps_the_better_plays_metadata(api: Api) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    await _submit(api, "ann", 50, {"run": 1})
    worse = await _submit(api, "ann", 40, {"run": 2})
    assert not worse["improved"]
    assert worse["session"]["metadata"] == {"run": 2}
    assert worse["score"] == {"score": 50, "metadata": {"run": 1}}
    assert (await _entry(api, "ann")) == {"score": 50, "metadata": {"run": 1}}
    better = await _submit(api, "ann", 60, {"run": 3})
    assert better["improved"]
    assert better["score"]["metadata"] == {"run": 3}
    assert (await _entry(api, "ann")) == {"score": 60, "metadata": {"run": 3}}
    # A better play without metadata leaves the entry without any.
    await _submit(api, "ann", 70)
    assert (await _entry(api, "ann")) == {"score": 70, "metadata": None}


async def test_latest_takes_the_newer_plays_metadata(api: Api) -> None:
    await api.create_player("ann")
    await api.create_board("b", operator="LATEST")
    api.clock.set("2026-11-21T10:00:00+00:00")
    await _submit(api, "ann", 50, {"run": 1})
    api.clock.set("2026-11-21T11:00:00+00:00")
    await _submit(api, "ann", 20, {"run": 2})
    assert (await _entry(api, "ann")) == {"score": 20, "metadata": {"run": 2}}
    # A play recorded late (played before the entry) changes neither score nor metadata.
    api.clock.set("2026-11-21T09:00:00+00:00")
    late = await _submit(api, "ann", 90, {"run": 0})
    assert not late["improved"]
    assert (await _entry(api, "ann")) == {"score": 20, "metadata": {"run": 2}}


async def test_an_increment_total_keeps_its_attaining_plays_metadata(api: Api) -> None:
    await api.create_player("ann")
    await api.create_board("b", operator="INCREMENT")
    api.clock.set("2026-11-21T10:00:00+00:00")
    await _submit(api, "ann", 5, {"leg": 1})
    api.clock.set("2026-11-21T11:00:00+00:00")
    await _submit(api, "ann", 7, {"leg": 2})
    assert (await _entry(api, "ann")) == {"score": 12, "metadata": {"leg": 2}}
    # A play older than the entry adds to the total; the newer play stays its attainment.
    api.clock.set("2026-11-21T09:00:00+00:00")
    older = await _submit(api, "ann", 3, {"leg": 0})
    assert older["improved"]
    assert older["score"] == {"score": 15, "metadata": {"leg": 2}}
    assert (await _entry(api, "ann")) == {"score": 15, "metadata": {"leg": 2}}
    # A zero amount changes nothing.
    api.clock.set("2026-11-21T12:00:00+00:00")
    await _submit(api, "ann", 0, {"leg": 9})
    assert (await _entry(api, "ann")) == {"score": 15, "metadata": {"leg": 2}}


async def test_every_list_of_scores_carries_metadata(api: Api) -> None:
    for player in ("ann", "bob", "cat"):
        await api.create_player(player)
    await api.create_board("b")
    for score, player in enumerate(("ann", "bob", "cat"), start=1):
        await _submit(api, player, score * 10, {"who": player})
    data = await api.gql(
        """{ leaderboard(id: "b") {
            topScores(first: 10) { edges { node { player { id } metadata } } }
            around(playerId: "bob", before: 1, after: 1) { score { player { id } metadata } }
            ranksOf(playerIds: ["ann", "cat"]) { score { player { id } metadata } }
            rankOf(playerId: "ann") { score { metadata } } } }"""
    )
    board = data["leaderboard"]
    top = [(e["node"]["player"]["id"], e["node"]["metadata"]) for e in board["topScores"]["edges"]]
    assert top == [(p, {"who": p}) for p in ("cat", "bob", "ann")]
    around = [(r["score"]["player"]["id"], r["score"]["metadata"]) for r in board["around"]]
    assert around == [(p, {"who": p}) for p in ("cat", "bob", "ann")]
    friends = [(r["score"]["player"]["id"], r["score"]["metadata"]) for r in board["ranksOf"]]
    assert friends == [(p, {"who": p}) for p in ("cat", "ann")]
    assert board["rankOf"]["score"]["metadata"] == {"who": "ann"}
    ranks = await api.gql(
        """{ player(id: "bob") { rank(leaderboardId: "b") { score { metadata } }
            ranks(leaderboardIds: ["b"]) { score { metadata } } } }"""
    )
    assert ranks["player"]["rank"]["score"]["metadata"] == {"who": "bob"}
    assert ranks["player"]["ranks"][0]["score"]["metadata"] == {"who": "bob"}


async def test_lists_ranked_by_the_rank_index_carry_metadata(indexed: Indexed) -> None:
    api = indexed.api
    for player in ("ann", "bob", "cat"):
        await api.create_player(player)
    await api.create_board("b")
    for score, player in enumerate(("ann", "bob", "cat"), start=1):
        await _submit(api, player, score * 10, {"who": player})
    await indexed.projector.drain()
    data = await api.gql(
        """{ leaderboard(id: "b") {
            topScores(first: 2) { edges { node { rank metadata } } }
            around(playerId: "bob", before: 1, after: 1) { rank score { metadata } }
            ranksOf(playerIds: ["ann"]) { rank score { metadata } }
            rankOf(playerId: "cat") { rank score { metadata } } }
            player(id: "bob") { rank(leaderboardId: "b") { rank score { metadata } } } }"""
    )
    board = data["leaderboard"]
    assert [(e["node"]["rank"], e["node"]["metadata"]) for e in board["topScores"]["edges"]] == [
        (1, {"who": "cat"}),
        (2, {"who": "bob"}),
    ]
    assert [(r["rank"], r["score"]["metadata"]["who"]) for r in board["around"]] == [
        (1, "cat"),
        (2, "bob"),
        (3, "ann"),
    ]
    assert board["ranksOf"] == [{"rank": 3, "score": {"metadata": {"who": "ann"}}}]
    assert board["rankOf"] == {"rank": 1, "score": {"metadata": {"who": "cat"}}}
    # The index answers the rank alone; the entry (and its metadata) is read from the table.
    assert data["player"]["rank"] == {"rank": 2, "score": {"metadata": {"who": "bob"}}}


async def test_a_subscription_push_carries_metadata(api: Api) -> None:
    await api.create_player("ann")
    await api.create_player("bob")
    await api.create_board("b")
    await _submit(api, "ann", 10, {"who": "ann"})
    query = """subscription { leaderboardChanged(leaderboardId: "b", first: 3) {
        entries { player { id } metadata } } }"""
    async with _subscribed(api, query) as ws:
        first = await ws.receive_json(timeout=WAIT)
        entries = first["payload"]["data"]["leaderboardChanged"]["entries"]
        assert entries == [{"player": {"id": "ann"}, "metadata": {"who": "ann"}}]
        await _submit(api, "bob", 20, {"who": "bob", "n": [1.5]})
        pushed = await ws.receive_json(timeout=WAIT)
        entries = pushed["payload"]["data"]["leaderboardChanged"]["entries"]
        assert entries == [
            {"player": {"id": "bob"}, "metadata": {"who": "bob", "n": [1.5]}},
            {"player": {"id": "ann"}, "metadata": {"who": "ann"}},
        ]


async def test_a_replayed_play_answers_the_same_metadata(api: Api) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    await _submit(api, "ann", 50, {"run": 1})
    sid = "01JD3Q8Z6X4M2K7N9P5R8T1V3W"
    first = await _submit(api, "ann", 40, {"run": 2, "a": [1, 2]}, submissionId=sid)
    again = await _submit(api, "ann", 40, {"a": [1, 2], "run": 2}, submissionId=sid)
    assert again["duplicate"]
    assert not first["duplicate"]
    for payload in (first, again):
        assert payload["session"]["metadata"] == {"run": 2, "a": [1, 2]}
        assert payload["score"] == {"score": 50, "metadata": {"run": 1}}
    other = await api.gql(SUBMIT, _play("ann", 40, {"run": 3}, submissionId=sid))
    assert other["submitScore"]["errors"] == [
        {"code": "SUBMISSION_ID_REUSED", "field": "submissionId"}
    ]
    # The same play without metadata is another play too.
    bare = await api.gql(SUBMIT, _play("ann", 40, None, submissionId=sid))
    assert bare["submitScore"]["errors"][0]["code"] == "SUBMISSION_ID_REUSED"


async def test_the_limits_are_exact(api: Api) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    for score, document in enumerate(
        (
            _sized(1024),
            _sized(1024, "é"),
            _sized(1024, "🌋"),
            _nested(8),
            _nested(8, arrays=True),
            {"a": [[[[[[{"z": 1}]]]]]]},
        ),
        start=1,
    ):
        # Each play better than the last, so that each is the entry.
        played = await _submit(api, "ann", score, document)
        assert played["session"]["metadata"] == document
        assert (await _entry(api, "ann"))["metadata"] == document


HOSTILE: list[tuple[str, Any]] = [
    ("a list", [1, 2]),
    ("an empty list", []),
    ("a string", "level 3"),
    ("a JSON text of an object", '{"level": 3}'),
    ("a number", 3),
    ("a float", 1.5),
    ("a boolean", True),
    ("1025 bytes", _sized(1025)),
    ("1026 bytes of two-byte characters", _sized(1026, "é")),
    ("1028 bytes of four-byte characters", _sized(1028, "🌋")),
    ("depth 9", _nested(9)),
    ("depth 9 through arrays", _nested(9, arrays=True)),
    ("depth 200", _nested(200)),
    ("many small values", {"k": [0] * 600}),
    ("many keys", {str(i): 0 for i in range(300)}),
]


@pytest.mark.parametrize(("_what", "metadata"), HOSTILE, ids=[h[0] for h in HOSTILE])
async def test_hostile_metadata_writes_nothing_on_any_board(
    api: Api, _what: str, metadata: Any
) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    await api.create_board("c", operator="INCREMENT")
    before = await scan_items(api.db)
    body = await api.raw(SUBMIT, _play("ann", 5, metadata, leaderboardIds=["c"]))
    assert "errors" not in body, body
    payload = body["data"]["submitScore"]
    assert payload["errors"] == [{"code": "INVALID_METADATA", "field": "metadata"}]
    assert payload["session"] is None
    after = await scan_items(api.db)
    assert after == before
    player = await api.gql('{ player(id: "ann") { gamesPlayed sessions { edges { cursor } } } }')
    assert player["player"] == {"gamesPlayed": 0, "sessions": {"edges": []}}


async def test_non_finite_numbers_are_refused(api: Api) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    before = await scan_items(api.db)
    for value in (float("nan"), float("inf"), float("-inf")):
        # Python's JSON writes these as NaN and Infinity, which the server's reader accepts.
        body = await api.raw(SUBMIT, _play("ann", 5, {"speed": value}))
        payload = (body.get("data") or {}).get("submitScore")
        if payload is not None:
            assert payload["errors"] == [{"code": "INVALID_METADATA", "field": "metadata"}]
        else:
            assert body["errors"], body
    assert await scan_items(api.db) == before


async def test_lone_surrogates_never_reach_the_table(api: Api) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    before = await scan_items(api.db)
    # Over HTTP, a request holding a lone surrogate is not readable text: 400.
    for document in ({"k": "\ud800"}, {"\udfff": 1}):
        body = json.dumps({"query": SUBMIT, "variables": _play("ann", 5, document)})
        response = await api.http.post(
            "/graphql",
            data=body.encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {API_KEYS[0]}"},
        )
        assert response.status == 400, await response.text()
    # In a document, a lone surrogate escape is not a valid GraphQL string.
    literal = await api.raw(
        'mutation { submitScore(input: {playerId: "ann", leaderboardId: "b", gameId: "g", '
        'score: 5, metadata: {k: "\\ud800"}}) { errors { code } } }'
    )
    assert literal["errors"][0]["extensions"]["code"] == "GRAPHQL_VALIDATION_FAILED"
    assert await scan_items(api.db) == before


@pytest.mark.parametrize(
    "metadata",
    [
        {"k": "\ud800"},
        {"\udfff": 1},
        {"k": ["a\udc00b"]},
        {"k": float("nan")},
        {"k": float("inf")},
        {1: "a"},
        {"k": object()},
        {"k": (1, 2)},
        [{}],
        None.__class__,
    ],
)
def test_clean_metadata_refuses_what_is_not_json_text(metadata: Any) -> None:
    with pytest.raises(FieldError) as refused:
        clean_metadata(metadata)
    assert (refused.value.code, refused.value.field) == (ErrorCode.INVALID_METADATA, "metadata")


def test_clean_metadata_walks_a_deep_document_without_recursion() -> None:
    deep: Any = {}
    for _ in range(100_000):
        deep = {"a": deep}
    with pytest.raises(FieldError):
        clean_metadata(deep)
    wide: Any = {"k": list(range(1_000_000))}
    with pytest.raises(FieldError):
        clean_metadata(wide)
