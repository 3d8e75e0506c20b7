"""DynamoDB calls per request: loaders batch, nothing is read twice, nothing per row."""

from __future__ import annotations

import pytest

from dynamo.items import now
from dynamo.play_writes import record_play
from dynamo.players import PlayerItem, create_player
from dynamo.plays import Play
from tests.conftest import Api, each_layout


async def _populate(api: Api, players: int, boards: list[str]) -> None:
    for board in boards:
        await api.create_board(board)
    for i in range(players):
        t = now()
        player = PlayerItem(
            player_id=f"p{i:03d}",
            name=f"P {i}",
            email=f"p{i}@example.com",
            created_at=t,
            updated_at=t,
        )
        await create_player(api.db, player)
        for board in boards:
            await record_play(
                api.db,
                Play(
                    player_id=player.player_id,
                    game_id=f"g{i % 2}",
                    score=(i * 7919) % 1000,
                    leaderboard_ids=(board,),
                ),
            )


@each_layout
@pytest.mark.slow
async def test_top_100_with_player_names_reads_the_entries_only(api: Api) -> None:
    await _populate(api, 120, ["global"])
    api.reset_calls()
    data = await api.gql(
        """{ leaderboard(id: "global") { name topScores(first: 100) {
             edges { node { score player { id name } } } } } }"""
    )
    edges = data["leaderboard"]["topScores"]["edges"]
    assert len(edges) == 100
    assert all(
        e["node"]["player"]["name"] == f"P {int(e['node']['player']['id'][1:])}" for e in edges
    )
    # The board itself is one Query (AP9; a write-sharded board's count, not asked for, is
    # not read); the 100 entries another (one per partition, merged), each holding its
    # player's name: no player is read.
    assert api.calls == {"Query": 1 + api.partitions}


@each_layout
@pytest.mark.slow
async def test_top_100_with_more_of_each_player_reads_the_players_in_one_batch(api: Api) -> None:
    await _populate(api, 120, ["global"])
    api.reset_calls()
    data = await api.gql(
        """{ leaderboard(id: "global") { topScores(first: 100) {
             edges { node { player { name gamesPlayed } } } } } }"""
    )
    assert {
        e["node"]["player"]["gamesPlayed"] for e in data["leaderboard"]["topScores"]["edges"]
    } == {1}
    assert api.calls == {"Query": 1 + api.partitions, "BatchGetItem": 1}


async def test_a_page_of_game_sessions_with_players_is_one_query_and_one_batch_get(
    api: Api,
) -> None:
    await _populate(api, 30, ["global"])
    api.reset_calls()
    data = await api.gql(
        '{ gameSessions(gameId: "g0", first: 20) { edges { node { score player { name } } } } }'
    )
    assert len(data["gameSessions"]["edges"]) == 15
    assert api.calls == {"Query": 1, "BatchGetItem": 1}


async def test_player_sessions_reuse_the_loaded_player(api: Api) -> None:
    await _populate(api, 1, ["a", "b", "c"])
    api.reset_calls()
    await api.gql(
        """{ player(id: "p000") { name sessions(first: 20) { edges { node { player { name } } } }
        } }"""
    )
    assert api.calls == {"GetItem": 1, "Query": 1}


@each_layout
async def test_submit_score_is_two_reads_at_once_and_one_transaction(api: Api) -> None:
    await _populate(api, 1, ["global"])
    api.reset_calls()
    result = await api.submit("p000", "global", 5)
    assert result["errors"] == []
    # The player and its entry guard in one BatchGetItem, beside it the board in one Query
    # (with its count shards on one partition; a write-sharded board's are not read), then
    # the transaction.
    assert api.calls == {"BatchGetItem": 1, "Query": 1, "TransactWriteItems": 1}


def _shards(api: Api) -> int:
    """The Queries that read a board's count beyond the board's own: one per partition of a
    write-sharded board (a board of one partition has its count with its item)."""
    return 0 if api.partitions == 1 else api.partitions


@each_layout
async def test_a_boards_count_is_read_only_when_asked_for(api: Api) -> None:
    await _populate(api, 5, ["global"])
    api.reset_calls()
    data = await api.gql('{ leaderboard(id: "global") { name partitions } }')
    assert data["leaderboard"] == {"name": "global", "partitions": api.partitions}
    assert api.calls == {"Query": 1}

    api.reset_calls()
    data = await api.gql('{ leaderboard(id: "global") { name entryCount } }')
    assert data["leaderboard"] == {"name": "global", "entryCount": 5}
    # The board's Query, then a write-sharded board's count shards: one Query per partition.
    assert api.calls == {"Query": 1 + _shards(api)}


@each_layout
async def test_submit_score_with_rank_adds_only_the_count(api: Api) -> None:
    await _populate(api, 5, ["global"])
    api.reset_calls()
    data = await api.gql(
        """mutation { submitScore(input: {playerId: "p003", leaderboardId: "global",
             gameId: "g", score: 999}) {
             improved score { score leaderboard { id entryCount } } rank { rank total }
             errors { code } } }"""
    )
    payload = data["submitScore"]
    assert payload["improved"] is True
    assert payload["rank"] == {"rank": 1, "total": 5}
    assert payload["score"]["leaderboard"] == {"id": "global", "entryCount": 5}
    # The board as the play read it is the payload's: its Query, and one COUNT for the rank
    # (one per partition); a write-sharded board's count, which the play did not read, by one
    # Query per partition (once for the rank's total and the board's entryCount).
    assert api.calls == {
        "BatchGetItem": 1,
        "TransactWriteItems": 1,
        "Query": 1 + api.partitions + _shards(api),
    }


@each_layout
async def test_ranks_and_best_scores_on_several_boards_are_batched_per_tick(api: Api) -> None:
    await _populate(api, 4, ["a", "b", "c"])
    api.reset_calls()
    data = await api.gql(
        """{ player(id: "p002") {
             ra: rank(leaderboardId: "a") { rank total score { score } }
             rb: rank(leaderboardId: "b") { rank total }
             rc: rank(leaderboardId: "c") { rank total }
             ba: bestScore(leaderboardId: "a") { score } } }"""
    )
    player = data["player"]
    assert player["ra"]["score"] == player["ba"]
    # GetItem: the player. Beside it, the rank loader reads the three entries from their
    # guards in one BatchGetItem (bestScore(a) is then one of them, no AP4 Query) and the
    # three boards in one Query each, and counts each rank with one COUNT Query (one per
    # partition), beside each total (a write-sharded board's count shards, one Query per
    # partition).
    assert api.calls == {
        "GetItem": 1,
        "BatchGetItem": 1,
        "Query": 3 + 3 * api.partitions + 3 * _shards(api),
    }


@each_layout
async def test_a_profile_counts_each_rank_once(api: Api) -> None:
    """A best score's rank and the same board's rank in a list of ranks are one count, whether
    the entry was read by its guard (beside the player, for its ranks) or by its Score item."""
    await _populate(api, 4, ["a", "b", "c"])
    fields = """bestScore(leaderboardId: "a") { score rank }
                ranks(leaderboardIds: ["a", "b", "c"]) { rank }"""

    api.reset_calls()
    player = (await api.gql(f'{{ player(id: "p002") {{ {fields} }} }}'))["player"]
    assert player["bestScore"]["rank"] == player["ranks"][0]["rank"]
    # GetItem: the player. BatchGetItem: the three entries from their guards. Query: each
    # board, and one COUNT per board (per partition of each) beside its total.
    n = api.partitions + _shards(api)
    assert api.calls == {"GetItem": 1, "BatchGetItem": 1, "Query": 3 + 3 * n}

    # players(ids) does not look ahead: bestScore(a) reads the Score item (AP4).
    api.reset_calls()
    listed = (await api.gql(f'{{ players(ids: ["p002"]) {{ {fields} }} }}'))["players"][0]
    assert listed == player
    # GetItem: the player. BatchGetItem: the entries of b and c. Query: AP4, each board,
    # then one COUNT per board (per partition of each) beside its total.
    assert api.calls == {"GetItem": 1, "BatchGetItem": 1, "Query": 4 + 3 * n}


@each_layout
async def test_a_player_asked_only_for_ranks_is_not_read_when_it_holds_an_entry(
    api: Api,
) -> None:
    """An entry proves its player exists: a rank-only query reads the entry, the board and the
    count, not the player. Without an entry the player is read to tell null from no rank."""
    await _populate(api, 4, ["a"])
    await api.create_player("idle")
    query = """query($p: ID!, $b: ID!) { player(id: $p) { __typename ...R } }
               fragment R on Player { id rank(leaderboardId: $b) { rank total } }"""

    api.reset_calls()
    data = await api.gql(query, {"p": "p002", "b": "a"})
    assert data["player"] == {"__typename": "Player", "id": "p002", "rank": {"rank": 2, "total": 4}}
    # The entry (AP4) and the board, then one COUNT (one per partition) beside the total.
    assert api.calls == {"Query": 2 + api.partitions + _shards(api)}

    api.reset_calls()
    data = await api.gql(query, {"p": "idle", "b": "a"})
    assert data["player"] == {"__typename": "Player", "id": "idle", "rank": None}
    # The entry (none) and the board, then the player.
    assert api.calls == {"GetItem": 1, "Query": 2}

    data = await api.gql(query, {"p": "nobody", "b": "a"})
    assert data["player"] is None

    result = await api.raw(
        '{ player(id: "p002") { id bad: rank(leaderboardId: "no spaces") { rank } } }'
    )
    assert result["data"]["player"] == {"id": "p002", "bad": None}
    assert [e["extensions"]["code"] for e in result["errors"]] == ["INVALID_ID"]
    assert result["errors"][0]["path"] == ["player", "bad"]
