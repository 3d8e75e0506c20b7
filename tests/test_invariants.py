"""The table invariant checker (soak.invariants): it finds nothing after a concurrent burst of
plays through the app, and it finds exactly what was broken when an item is corrupted."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from ulid import ULID

from dynamo.db import Db
from dynamo.entry_guards import ENTRY_GUARD, EntryGuardItem
from dynamo.items import serialize
from dynamo.layout import entity_of
from dynamo.leaderboards import LEADERBOARD, PARTITIONED_ENTRY_COUNT_SHARD, LeaderboardItem
from dynamo.players import PLAYER
from dynamo.scores import SCORE, ScoreItem, holds_score, rank_value, sort_values, tie_value
from dynamo.sessions import SESSION, SessionItem
from soak.invariants import Kind, Violation, check_table, scan_items
from tests.conftest import Api, each_layout

SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
  duplicate session { id } errors { code message } } }"""

BOARDS: dict[str, dict[str, Any]] = {
    "best": {"operator": "BEST"},
    "fastest": {"operator": "BEST", "sortOrder": "ASC", "scoreWidth": 6},
    "latest": {"operator": "LATEST"},
    "latest-asc": {"operator": "LATEST", "sortOrder": "ASC", "scoreWidth": 6},
    "total": {"operator": "INCREMENT", "scoreWidth": 12},
}


async def _submit(api: Api, given: dict[str, Any]) -> dict[str, Any]:
    data = await api.gql(SUBMIT, {"i": given})
    payload: dict[str, Any] = data["submitScore"]
    return payload


@each_layout
@pytest.mark.slow
async def test_a_concurrent_burst_keeps_every_invariant(api: Api) -> None:
    for board_id, fields in BOARDS.items():
        await api.create_board(board_id, **fields)
    family = await api.gql(
        """mutation($n: Int!) { createLeaderboardFamily(input: {id: "daily", name: "Daily",
             period: DAILY, operator: INCREMENT, partitions: $n}) { errors { code } } }""",
        {"n": api.partitions},
    )
    assert family["createLeaderboardFamily"]["errors"] == []
    # Plays naming the family read its definition first, concurrently with the plays before
    # them; each play still takes its time in its player's turn, so one process records every
    # play in the order it was played (single_writer).
    players = [f"p{i}" for i in range(8)]
    for player in players:
        await api.create_player(player)
    rng = random.Random(11)
    sends: list[dict[str, Any]] = []
    for _ in range(90):
        play: dict[str, Any] = {
            "playerId": rng.choice(players[:2] if rng.random() < 0.7 else players),
            "gameId": "arena",
            "score": 0 if rng.random() < 0.1 else rng.randint(1, 60),
            "leaderboardIds": rng.sample(sorted(BOARDS), rng.randint(1, 3)),
            "familyIds": ["daily"] if rng.random() < 0.3 else [],
        }
        if rng.random() < 0.25:
            play["submissionId"] = str(ULID())
            sends.append(play)  # sent twice at once, as a retrying game server does
        sends.append(play)
    rng.shuffle(sends)

    in_flight = asyncio.Semaphore(16)

    async def send(play: dict[str, Any]) -> dict[str, Any]:
        async with in_flight:
            return await _submit(api, play)

    results = await asyncio.gather(*(send(s) for s in sends))

    assert [r["errors"] for r in results if r["errors"]] == []
    first = [r for r in results if not r["duplicate"]]
    assert len(first) == 90
    found = await check_table(api.db.client, api.db.table, single_writer=True)
    assert [str(v) for v in found] == []
    items = await scan_items(api.db.client, api.db.table)
    assert sum(1 for i in items if SESSION.holds(i)) == 90


@each_layout
async def test_plays_recorded_out_of_time_order_keep_every_invariant(api: Api) -> None:
    """A play attained earlier but recorded later (a slow instance, a skewed clock) neither
    replaces a newer LATEST entry nor moves an INCREMENT total's attainment back in time."""
    await api.create_board("latest", operator="LATEST")
    await api.create_board("total", operator="INCREMENT")
    await api.create_player("p1")
    now = api.clock()
    for offset, score in ((5, 300), (1, 100), (3, 200)):
        api.clock.set(now + timedelta(seconds=offset))
        payload = await _submit(
            api,
            {
                "playerId": "p1",
                "gameId": "g",
                "score": score,
                "leaderboardIds": ["latest", "total"],
            },
        )
        assert payload["errors"] == []

    data = await api.gql(
        """{ player(id: "p1") {
             latest: bestScore(leaderboardId: "latest") { score attainedAt }
             total: bestScore(leaderboardId: "total") { score attainedAt } } }"""
    )
    latest, total = data["player"]["latest"], data["player"]["total"]
    assert (latest["score"], total["score"]) == (300, 600)
    played_last = now + timedelta(seconds=5)
    assert datetime.fromisoformat(latest["attainedAt"]) == played_last
    assert datetime.fromisoformat(total["attainedAt"]) == played_last
    assert await check_table(api.db.client, api.db.table) == []


# -- corruption: the checker reports exactly what was broken ---------------------------------


async def _items(db: Db) -> list[dict[str, Any]]:
    return await scan_items(db.client, db.table)


async def _put(db: Db, item: dict[str, Any]) -> None:
    await db.client.put_item(TableName=db.table, Item=serialize(item))


BEST_PK = SCORE.pk.fill(leaderboard_id="best")


def _one(items: list[dict[str, Any]], pk: str, sk_prefix: str) -> dict[str, Any]:
    (found,) = [i for i in items if i["pk"] == pk and i["sk"].startswith(sk_prefix)]
    return found


async def _bump_games_played(db: Db) -> list[Violation]:
    await db.client.update_item(
        TableName=db.table,
        Key=serialize(PLAYER.key_attributes(player_id="p1")),
        UpdateExpression="ADD gamesPlayed :one",
        ExpressionAttributeValues=serialize({":one": 1}),
    )
    return [
        Violation(Kind.GAMES_PLAYED, "player p1", "gamesPlayed is 4, the player has 3 sessions")
    ]


async def _duplicate_score_item(db: Db) -> list[Violation]:
    """A second Score item for p1 on ``best``, keyed consistently (attained 1 ms later)."""
    items = await _items(db)
    board = LeaderboardItem.model_validate(_one(items, *LEADERBOARD.key(leaderboard_id="best")))
    raw = _one(items, BEST_PK, f"{SCORE.sk.prefix}0000000500")
    score = ScoreItem.model_validate(raw)
    copy = score.model_copy(update={"attained_at": score.attained_at + timedelta(milliseconds=1)})
    keys = SCORE.keys_of(copy, **sort_values(board, copy))
    await _put(db, SCORE.item(copy, **sort_values(board, copy)))
    return [
        Violation(
            Kind.DUPLICATE_SCORE,
            "player p1 on board best",
            f"2 Score items: {keys['sk']}, {raw['sk']}",
        )
    ]


async def _lose_the_best_score(db: Db) -> list[Violation]:
    """Rewrite p1's entry on ``best``, consistently (Score item, keys and guard), to its
    400 play: the end state of a race that lost a better score."""
    items = await _items(db)
    board = LeaderboardItem.model_validate(_one(items, *LEADERBOARD.key(leaderboard_id="best")))
    old = _one(items, BEST_PK, f"{SCORE.sk.prefix}0000000500")
    session = next(
        SessionItem.model_validate(i)
        for i in items
        if SESSION.holds(i) and i["playerId"] == "p1" and i["score"] == 400
    )
    lost = ScoreItem.model_validate(old).model_copy(
        update={"score": 400, "attained_at": session.played_at, "session_id": session.session_id}
    )
    keys = SCORE.keys_of(lost, **sort_values(board, lost))
    guard = EntryGuardItem.model_validate(
        _one(items, *ENTRY_GUARD.key(player_id="p1", leaderboard_id="best"))
    ).model_copy(
        update={
            "score": 400,
            "attained_at": lost.attained_at,
            "session_id": lost.session_id,
            "score_sk": keys["sk"],
            "rank_value": rank_value(400, board.score_width, board.sort_order),
            "tie_value": tie_value(lost.attained_at),
        }
    )
    await db.client.delete_item(
        TableName=db.table, Key=serialize({"pk": old["pk"], "sk": old["sk"]})
    )
    await _put(db, {**keys, **lost.attributes()})
    await _put(db, ENTRY_GUARD.item(guard))
    return [
        Violation(
            Kind.ENTRY_SCORE,
            "player p1 on board best",
            "the Score item holds 400; BEST over the player's 3 sessions gives 500",
        )
    ]


async def _miscount_entries(db: Db) -> list[Violation]:
    await db.client.update_item(
        TableName=db.table,
        Key=serialize(LEADERBOARD.key_attributes(leaderboard_id="best")),
        UpdateExpression="ADD entryCount :one",
        ExpressionAttributeValues=serialize({":one": 1}),
    )
    return [
        Violation(
            Kind.ENTRY_COUNT, "board best", "entryCount is 3; 2 distinct players played on it"
        )
    ]


async def _overwrite_a_score_attribute(db: Db) -> list[Violation]:
    """Only the Score item's ``score`` attribute changes: its key, its guard and the sessions
    all disagree with it."""
    items = await _items(db)
    raw = _one(items, BEST_PK, f"{SCORE.sk.prefix}0000000500")
    await _put(db, {**raw, "score": 501})
    sk = raw["sk"]
    wanted = sk.replace(f"{SCORE.sk.prefix}0000000500", f"{SCORE.sk.prefix}0000000501")
    return [
        Violation(
            Kind.ENTRY_SCORE,
            "player p1 on board best",
            "the Score item holds 501; BEST over the player's 3 sessions gives 500",
        ),
        Violation(Kind.GUARD_MISMATCH, "player p1 on board best", "guard score 500 vs 501"),
        Violation(
            Kind.ITEM_KEYS,
            "player p1 on board best",
            f"sk is {sk!r}, expected {wanted!r}",
        ),
    ]


@pytest.mark.parametrize(
    "corrupt",
    [
        _bump_games_played,
        _duplicate_score_item,
        _lose_the_best_score,
        _miscount_entries,
        _overwrite_a_score_attribute,
    ],
)
async def test_the_checker_reports_exactly_what_was_corrupted(
    api: Api, corrupt: Callable[[Db], Awaitable[list[Violation]]]
) -> None:
    await api.create_board("best")
    for player in ("p1", "p2"):
        await api.create_player(player)
    for player, score in (("p1", 300), ("p1", 500), ("p1", 400), ("p2", 200)):
        assert (await api.submit(player, "best", score))["errors"] == []
    assert await check_table(api.db.client, api.db.table, single_writer=True) == []

    expected = await corrupt(api.db)

    assert await check_table(api.db.client, api.db.table, single_writer=True) == expected


async def test_the_checker_finds_a_score_item_outside_its_players_partition(api: Api) -> None:
    """On a write-sharded board: a Score item in another partition than its player's (its
    guard saying so too), then a guard naming another partition than its Score item's."""
    await api.create_board("best", partitions=4)
    for player in ("p1", "p2"):
        await api.create_player(player)
        assert (await api.submit(player, "best", 100))["errors"] == []
    assert await check_table(api.db.client, api.db.table, single_writer=True) == []
    items = await _items(api.db)
    raw = next(i for i in items if holds_score(i) and i["playerId"] == "p1")
    right = raw["pk"]
    wrong = next(p for p in (f"LEADERBOARD#best#{n:02d}" for n in range(4)) if p != right)
    guard_key = ENTRY_GUARD.key(player_id="p1", leaderboard_id="best")
    guard = _one(items, *guard_key)
    subject = "player p1 on board best"

    await api.db.client.delete_item(
        TableName=api.db.table, Key=serialize({"pk": right, "sk": raw["sk"]})
    )
    await _put(api.db, {**raw, "pk": wrong})
    await _put(api.db, {**guard, "scorePk": wrong})
    assert await check_table(api.db.client, api.db.table, single_writer=True) == [
        Violation(Kind.ITEM_KEYS, subject, f"pk is {wrong!r}, expected {right!r}")
    ]

    await api.db.client.delete_item(
        TableName=api.db.table, Key=serialize({"pk": wrong, "sk": raw["sk"]})
    )
    await _put(api.db, raw)
    assert await check_table(api.db.client, api.db.table, single_writer=True) == [
        Violation(Kind.GUARD_MISMATCH, subject, f"guard scorePk {wrong!r} vs {right!r}")
    ]


async def test_the_checker_finds_a_count_shard_outside_its_players_partition(api: Api) -> None:
    """On a write-sharded board a player's count shard is under its Score key: the same count
    under another partition's key is a miscount there, though the board's total holds."""
    await api.create_board("best", partitions=4)
    await api.create_player("p1")
    assert (await api.submit("p1", "best", 100))["errors"] == []
    assert await check_table(api.db.client, api.db.table, single_writer=True) == []
    items = await _items(api.db)
    (raw,) = [i for i in items if entity_of(i) is PARTITIONED_ENTRY_COUNT_SHARD]
    right, shard = raw["partition"], raw["shard"]
    assert raw["pk"] == f"LEADERBOARD#best#{right}"
    wrong = next(p for p in (f"{n:02d}" for n in range(4)) if p != right)

    await api.db.client.delete_item(
        TableName=api.db.table, Key=serialize({"pk": raw["pk"], "sk": raw["sk"]})
    )
    await _put(api.db, {**raw, "pk": f"LEADERBOARD#best#{wrong}", "partition": wrong})
    assert await check_table(api.db.client, api.db.table, single_writer=True) == [
        Violation(
            Kind.ENTRY_COUNT,
            "board best",
            f"its shards count {{'{wrong}/{shard}': 1}}, its players' shards are"
            f" {{'{right}/{shard}': 1}}",
        )
    ]
