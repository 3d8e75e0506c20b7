"""Every access pattern through GraphQL, with real data: values and order."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.conftest import Api, each_layout


async def _tick() -> None:
    # Submissions are stamped with the current millisecond; keep tie order deterministic.
    await asyncio.sleep(0.003)


async def _players(api: Api, *ids: str) -> None:
    for player_id in ids:
        await api.create_player(player_id, name=f"Name {player_id}")


async def _walk(api: Api, query: str, path: list[str], first: int, **variables: Any) -> list[Any]:
    """Follow a connection page by page; return the nodes in order, checking the cursors."""
    nodes: list[Any] = []
    after = None
    while True:
        data: Any = await api.gql(query, {"first": first, "after": after, **variables})
        for key in path:
            data = data[key]
        assert len(data["edges"]) <= first
        nodes.extend(edge["node"] for edge in data["edges"])
        if data["edges"]:
            assert data["pageInfo"]["endCursor"] == data["edges"][-1]["cursor"]
        if not data["pageInfo"]["hasNextPage"]:
            return nodes
        after = data["pageInfo"]["endCursor"]


async def test_ap1_ap2_player_by_id_and_by_email(api: Api) -> None:
    await api.create_player("alice", "Alice")
    data = await api.gql(
        """{ player(id: "alice") { id name email lifetimeScore gamesPlayed createdAt }
             byEmail: playerByEmail(email: "  ALICE@X.example ") { id }
             nobody: player(id: "nobody") { id }
             noEmail: playerByEmail(email: "nobody@example.com") { id } }"""
    )
    assert data["player"]["id"] == "alice"
    assert data["player"]["name"] == "Alice"
    assert data["player"]["email"] == "alice@x.example"
    assert (data["player"]["lifetimeScore"], data["player"]["gamesPlayed"]) == (0, 0)
    assert data["player"]["createdAt"].startswith("20")
    assert data["byEmail"] == {"id": "alice"}
    assert data["nobody"] is None
    assert data["noEmail"] is None


@each_layout
async def test_ap3_top_scores_best_first_ties_earlier_first(api: Api) -> None:
    await _players(api, "a", "b", "c", "d", "e")
    await api.create_board("global")
    for player, score in [("c", 50), ("a", 70), ("e", 50), ("b", 90), ("d", 50)]:
        await api.submit(player, "global", score)
        await _tick()
    data = await api.gql(
        """{ leaderboard(id: "global") { entryCount topScores(first: 10) {
             edges { node { score player { id name } } } pageInfo { hasNextPage } } } }"""
    )
    board = data["leaderboard"]
    order = [(e["node"]["player"]["id"], e["node"]["score"]) for e in board["topScores"]["edges"]]
    assert order == [("b", 90), ("a", 70), ("c", 50), ("e", 50), ("d", 50)]
    assert board["topScores"]["edges"][0]["node"]["player"]["name"] == "Name b"
    assert board["entryCount"] == 5
    assert board["topScores"]["pageInfo"]["hasNextPage"] is False


@each_layout
async def test_ap3_ascending_board_lower_is_better(api: Api) -> None:
    await _players(api, "fast", "slow", "mid", "tie")
    await api.create_board("laps", sortOrder="ASC", scoreWidth=7)
    for player, millis in [("slow", 95_000), ("mid", 61_500), ("fast", 58_250), ("tie", 61_500)]:
        await api.submit(player, "laps", millis)
        await _tick()
    # A worse (slower) time does not replace the entry; a faster one does.
    worse = await api.submit("fast", "laps", 60_000)
    better = await api.submit("slow", "laps", 59_000)
    assert (worse["improved"], worse["score"]["score"]) == (False, 58_250)
    assert (better["improved"], better["score"]["score"]) == (True, 59_000)
    data = await api.gql(
        """{ leaderboard(id: "laps") { sortOrder topScores { edges { node {
             score player { id } } } } }
             tie: player(id: "tie") { rank(leaderboardId: "laps") { rank total } }
             mid: player(id: "mid") { rank(leaderboardId: "laps") { rank total } } }"""
    )
    edges = data["leaderboard"]["topScores"]["edges"]
    assert [(e["node"]["player"]["id"], e["node"]["score"]) for e in edges] == [
        ("fast", 58_250),
        ("slow", 59_000),
        ("mid", 61_500),
        ("tie", 61_500),
    ]
    assert data["mid"]["rank"] == {"rank": 3, "total": 4}
    assert data["tie"]["rank"] == {"rank": 3, "total": 4}


@each_layout
async def test_ap4_best_score_keeps_only_a_strictly_better_score(api: Api) -> None:
    await _players(api, "p")
    await api.create_board("global")
    first = await api.submit("p", "global", 500)
    equal = await api.submit("p", "global", 500)
    lower = await api.submit("p", "global", 100)
    higher = await api.submit("p", "global", 900)
    assert [r["improved"] for r in (first, equal, lower, higher)] == [True, False, False, True]
    assert equal["score"]["attainedAt"] == first["score"]["attainedAt"]
    data = await api.gql(
        """{ player(id: "p") { lifetimeScore gamesPlayed
             best: bestScore(leaderboardId: "global") { score sessionId leaderboard { id } }
             none: bestScore(leaderboardId: "other") { score } } }"""
    )
    player = data["player"]
    assert player["best"] == {
        "score": 900,
        "sessionId": higher["session"]["id"],
        "leaderboard": {"id": "global"},
    }
    assert player["none"] is None
    assert (player["lifetimeScore"], player["gamesPlayed"]) == (2000, 4)


@each_layout
async def test_ap5_player_scores_on_every_board(api: Api) -> None:
    await _players(api, "p")
    boards = [f"board-{i:02d}" for i in range(7)]
    for i, board in enumerate(boards):
        await api.create_board(board)
        await api.submit("p", board, 10 * i)
    query = """query($first: Int, $after: String) { player(id: "p") {
        scores(first: $first, after: $after) { edges { cursor node { score leaderboard { id } } }
        pageInfo { hasNextPage endCursor } } } }"""
    nodes = await _walk(api, query, ["player", "scores"], first=3)
    assert [(n["leaderboard"]["id"], n["score"]) for n in nodes] == [
        (b, 10 * i) for i, b in enumerate(boards)
    ]


async def test_ap6_ap8_player_sessions_newest_first_and_one_session(api: Api) -> None:
    await _players(api, "p")
    await api.create_board("global")
    ids = []
    for score in range(1, 12):
        result = await api.submit("p", "global", score, game_id=f"g{score % 2}")
        ids.append(result["session"]["id"])
    query = """query($first: Int, $after: String) { player(id: "p") {
        sessions(first: $first, after: $after) { edges { cursor node { id score gameId } }
        pageInfo { hasNextPage endCursor } } } }"""
    nodes = await _walk(api, query, ["player", "sessions"], first=4)
    assert [n["id"] for n in nodes] == list(reversed(ids))
    assert [n["score"] for n in nodes] == list(range(11, 0, -1))

    data = await api.gql(
        """query($s: ID!) { session(playerId: "p", sessionId: $s) {
             id score gameId leaderboardId durationSec playedAt player { id } }
           missing: session(playerId: "p", sessionId: "01ARZ3NDEKTSV4RRFFQ69G5FAV") { id } }""",
        {"s": ids[4]},
    )
    assert data["session"]["id"] == ids[4]
    assert data["session"]["score"] == 5
    assert data["session"]["gameId"] == "g1"
    assert data["session"]["leaderboardId"] == "global"
    assert data["session"]["durationSec"] is None
    assert data["session"]["player"] == {"id": "p"}
    assert data["missing"] is None


async def test_ap7_game_sessions_of_all_players_newest_first(api: Api) -> None:
    await _players(api, "a", "b", "c")
    await api.create_board("global")
    expected = []
    for n in range(9):
        player = "abc"[n % 3]
        game = "arena" if n % 4 else "puzzle"
        result = await api.submit(player, "global", n, game_id=game)
        if game == "arena":
            expected.append((result["session"]["id"], player))
    query = """query($first: Int, $after: String, $game: ID!) {
        gameSessions(gameId: $game, first: $first, after: $after) {
        edges { cursor node { id gameId player { id } } } pageInfo { hasNextPage endCursor } } }"""
    nodes = await _walk(api, query, ["gameSessions"], first=2, game="arena")
    assert [(n["id"], n["player"]["id"]) for n in nodes] == list(reversed(expected))
    assert {n["gameId"] for n in nodes} == {"arena"}
    empty = await api.gql(
        '{ gameSessions(gameId: "none") { edges { cursor } pageInfo { hasNextPage endCursor } } }'
    )
    assert empty["gameSessions"] == {
        "edges": [],
        "pageInfo": {"hasNextPage": False, "endCursor": None},
    }


@each_layout
async def test_ap9_leaderboard_metadata(api: Api) -> None:
    await api.create_board(
        "season-1",
        period="SEASON",
        scoreWidth=12,
        startsAt="2026-01-01T00:00:00+00:00",
        endsAt="2027-01-01T00:00:00+00:00",
    )
    data = await api.gql(
        """{ leaderboard(id: "season-1") { id name period sortOrder scoreWidth startsAt endsAt
             entryCount partitions } missing: leaderboard(id: "nope") { id } }"""
    )
    assert data["leaderboard"] == {
        "id": "season-1",
        "name": "season-1",
        "period": "SEASON",
        "sortOrder": "DESC",
        "scoreWidth": 12,
        "startsAt": "2026-01-01T00:00:00+00:00",
        "endsAt": "2027-01-01T00:00:00+00:00",
        "entryCount": 0,
        "partitions": api.partitions,
    }
    assert data["missing"] is None


@each_layout
async def test_ap10_rank_standard_competition_with_ties(api: Api) -> None:
    scores = {"a": 100, "b": 80, "c": 80, "d": 70, "e": 80, "f": 10}
    await _players(api, *scores, "absent")
    await api.create_board("global")
    for player, score in scores.items():
        await api.submit(player, "global", score)
    fields = " ".join(
        f'{p}: rankOf(playerId: "{p}") {{ rank total score {{ score player {{ id }} }} }}'
        for p in [*scores, "absent"]
    )
    board = (await api.gql(f'{{ leaderboard(id: "global") {{ {fields} }} }}'))["leaderboard"]
    assert {p: board[p]["rank"] for p in scores} == {"a": 1, "b": 2, "c": 2, "e": 2, "d": 5, "f": 6}
    assert {board[p]["total"] for p in scores} == {6}
    assert board["d"]["score"] == {"score": 70, "player": {"id": "d"}}
    assert board["absent"] is None


@each_layout
async def test_top_scores_walked_to_the_end_has_no_gaps_or_duplicates(api: Api) -> None:
    await api.create_board("global")
    expected = []
    for i in range(23):
        player = f"p{i:02d}"
        await api.create_player(player)
        await api.submit(player, "global", (i * 37) % 11)
        expected.append((player, (i * 37) % 11))
        await _tick()
    query = """query($first: Int, $after: String) { leaderboard(id: "global") {
        topScores(first: $first, after: $after) { edges { cursor node { score player { id } } }
        pageInfo { hasNextPage endCursor } } } }"""
    for first in (1, 5, 23, 100):
        nodes = await _walk(api, query, ["leaderboard", "topScores"], first=first)
        got = [(n["player"]["id"], n["score"]) for n in nodes]
        # Best first; equal scores in submission (attainment) order.
        assert got == sorted(expected, key=lambda e: (-e[1], expected.index(e)))
