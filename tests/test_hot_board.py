"""No item that every play touches: plays of distinct players on one board share no item, so
DynamoDB's transaction-conflict rule (applied by the fault proxy in front of DynamoDB Local,
which never applies it) cancels none of them; first entries meet only on a count shard, now
and then, and are retried unseen; and the board's ``entryCount`` stays exact through first
entries, removals, bans and erasures racing each other."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

import pytest

from dynamo.items import serialize
from dynamo.layout import entity_of
from dynamo.leaderboards import (
    ENTRY_COUNT_SHARD,
    LEADERBOARD,
    PARTITIONED_ENTRY_COUNT_SHARD,
    count_shard_key,
    get_leaderboard,
)
from dynamo.scores import SCORE, holds_score, score_partition, score_partitions
from faultproxy import FaultProxy, ItemKey
from faultproxy.conflicts import TransactionConflicts
from leaderboard.config import Settings
from soak.invariants import check_table
from tests.conftest import CONFLICTS, Api, _serve, each_layout
from tests.scan import scan_items
from tests.test_bans import ban
from tests.test_erasure import erase
from tests.test_moderation import _remove

HOLD = 0.010
"""Seconds each transaction holds its items in the proxy: a transaction's own latency."""

SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    entries { leaderboardId improved } errors { code message } } }"""


class _Code(str):
    """An error's code, equal to the code; its repr carries the message, so that a failed
    comparison shows why the play was refused."""

    message = ""

    def __repr__(self) -> str:
        return f"{str.__repr__(self)} ({self.message})"


def _code(error: dict[str, str]) -> _Code:
    code = _Code(error["code"])
    code.message = error["message"]
    return code


@pytest.fixture
async def api(settings: Settings, proxy: FaultProxy, partitions: int) -> AsyncIterator[Api]:
    """The service, talking to DynamoDB through the proxy."""
    through = replace(settings, endpoint_url=proxy.url)
    async with _serve(through, None, partitions=partitions) as served:
        yield served


async def _play(api: Api, player: str, score: int, **boards: Any) -> list[str]:
    """One play; the codes of its errors (none when it was recorded)."""
    data = await api.gql(
        SUBMIT, {"i": {"playerId": player, "gameId": "g", "score": score, **boards}}
    )
    return [_code(e) for e in data["submitScore"]["errors"]]


def _boards_held(conflicts: TransactionConflicts, table: str, boards: Sequence[str]) -> int:
    """How many transactions held a board's own item."""
    return sum(
        conflicts.held[ItemKey.of(table, **LEADERBOARD.key_attributes(leaderboard_id=b))]
        for b in boards
    )


def _is_shard(item: ItemKey) -> bool:
    """Whether an item is a count shard, of a board of either layout."""
    return entity_of(dict(item.key)) in (ENTRY_COUNT_SHARD, PARTITIONED_ENTRY_COUNT_SHARD)


def _not_shards(conflicts: TransactionConflicts) -> list[ItemKey]:
    """The conflicted items that are not count shards."""
    return [item for item in conflicts.conflicted if not _is_shard(item)]


async def _entries_on(api: Api, board_id: str) -> int:
    """The board's Score items, by a Query of their range on each of its partitions."""
    board = await get_leaderboard(api.db, board_id)
    assert board is not None
    count = 0
    for pk in score_partitions(board):
        items = await api.db.client.query(
            TableName=api.db.table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :score)",
            ExpressionAttributeValues=serialize({":pk": pk, ":score": SCORE.sk.prefix}),
            ConsistentRead=True,
            Select="COUNT",
        )
        count += items["Count"]
    return count


async def _entry_count(api: Api, board: str) -> int:
    data = await api.gql("query($b: ID!) { leaderboard(id: $b) { entryCount } }", {"b": board})
    count: int = data["leaderboard"]["entryCount"]
    return count


@each_layout
async def test_plays_of_entered_players_on_one_board_never_conflict(
    api: Api, settings: Settings, proxy: FaultProxy
) -> None:
    players = [f"p{n:02d}" for n in range(16)]
    await api.create_board("b")
    for p in players:
        await api.create_player(p)
        assert await _play(api, p, 1, leaderboardId="b") == []
    conflicts = proxy.emulate_conflicts(hold=HOLD)

    async def five(player: str) -> list[list[str]]:
        return [await _play(api, player, 10 + n, leaderboardId="b") for n in range(5)]

    outcomes = await asyncio.gather(*(five(p) for p in players))
    assert outcomes == [[[]] * 5] * 16
    # They were in flight together, and none was cancelled: no item is shared.
    assert conflicts.peak > 1
    assert conflicts.total == 0
    assert conflicts.admitted["TransactWriteItems"] == 80
    assert _boards_held(conflicts, settings.table, ["b"]) == 0
    assert await _entry_count(api, "b") == 16


@each_layout
async def test_plays_naming_several_boards_never_conflict(
    api: Api, settings: Settings, proxy: FaultProxy
) -> None:
    players = [f"p{n:02d}" for n in range(16)]
    boards = ["alltime", "laps", "coins"]
    for board in boards:
        await api.create_board(board)
    await api.gql(
        """mutation($n: Int!) { createLeaderboardFamily(input: {id: "arena", name: "Arena",
           period: DAILY, partitions: $n}) { errors { code } } }""",
        {"n": api.partitions},
    )
    api.clock.set("2026-11-21T10:00:00+00:00")
    named = {"leaderboardId": "alltime", "leaderboardIds": boards[1:], "familyIds": ["arena"]}
    for p in players:
        await api.create_player(p)
        assert await _play(api, p, 1, **named) == []
    conflicts = proxy.emulate_conflicts(hold=HOLD)

    async def three(player: str) -> list[list[str]]:
        return [await _play(api, player, 10 + n, **named) for n in range(3)]

    outcomes = await asyncio.gather(*(three(p) for p in players))
    assert outcomes == [[[]] * 3] * 16
    assert conflicts.peak > 1
    assert conflicts.total == 0
    daily = "arena.daily.2026-11-21"
    assert _boards_held(conflicts, settings.table, [*boards, daily]) == 0
    for board in [*boards, daily]:
        assert await _entry_count(api, board) == 16


async def _new_period(api: Api, players: Sequence[str]) -> None:
    """Players, and a daily family (of the test's partitions) whose board of 2026-11-21 no
    play has entered yet."""
    for p in players:
        await api.create_player(p)
    await api.gql(
        """mutation($n: Int!) { createLeaderboardFamily(input: {id: "duel", name: "Duel",
           period: DAILY, partitions: $n}) { errors { code } } }""",
        {"n": api.partitions},
    )


NEW_BOARD = "duel.daily.2026-11-21"


@each_layout
async def test_the_first_plays_of_a_new_period_meet_on_no_item_in_one_process(
    api: Api, settings: Settings, proxy: FaultProxy
) -> None:
    """Midnight on a daily family: every player's first play of the day is a first entry on a
    board that does not exist yet. One conditional PutItem creates it; the plays'
    transactions hold their players' items and count shards, and one process queues the first
    entries counted in one shard (on one partition the 32 players share 22 of its 32 shards;
    on four, 26 of their 128)."""
    players = [f"p{n:02d}" for n in range(32)]
    shards = {count_shard_key(NEW_BOARD, p, api.partitions) for p in players}
    assert len(shards) == {1: 22, 4: 26}[api.partitions]
    await _new_period(api, players)
    api.clock.set("2026-11-21T00:00:30+00:00")
    conflicts = proxy.emulate_conflicts(hold=HOLD)
    proxy.reset_counts()

    outcomes = await asyncio.gather(
        *(_play(api, p, n, familyIds=["duel"]) for n, p in enumerate(players))
    )
    assert outcomes == [[]] * 32
    assert await _entry_count(api, NEW_BOARD) == 32 == await _entries_on(api, NEW_BOARD)
    assert conflicts.peak > 1
    assert conflicts.total == 0
    assert proxy.received["TransactWriteItems"] == 32
    assert _boards_held(conflicts, settings.table, [NEW_BOARD]) == 0
    assert await check_table(api.db.client, api.db.table) == []


@each_layout
@pytest.mark.parametrize("instances", [CONFLICTS], indirect=True)
async def test_the_first_plays_of_a_new_period_through_several_instances_meet_only_on_count_shards(
    instances: list[Api], settings: Settings, proxy: FaultProxy
) -> None:
    """Between processes nothing queues them: first entries counted in one shard may meet
    there, and are retried unseen."""
    players = [f"p{n:02d}" for n in range(16)]
    await _new_period(instances[0], players)
    for instance in instances:
        instance.clock.set("2026-11-21T00:00:30+00:00")
    assert proxy.conflicts is not None
    conflicts = proxy.conflicts
    proxy.reset_counts()

    outcomes = await asyncio.gather(
        *(_play(instances[n % 3], p, n, familyIds=["duel"]) for n, p in enumerate(players))
    )
    assert outcomes == [[]] * 16
    api = instances[0]
    assert await _entry_count(api, NEW_BOARD) == 16 == await _entries_on(api, NEW_BOARD)
    # Whatever met, met on a count shard; never on the board's item, which no transaction
    # held. Each play's transaction was admitted once, after as many refusals as it met.
    assert _not_shards(conflicts) == []
    assert _boards_held(conflicts, settings.table, [NEW_BOARD]) == 0
    assert conflicts.admitted["TransactWriteItems"] == 16
    assert proxy.received["TransactWriteItems"] == 16 + conflicts.total
    assert await check_table(api.db.client, api.db.table) == []


@each_layout
async def test_a_first_entry_holds_one_key_of_the_board_its_players_score_key(
    api: Api, settings: Settings, proxy: FaultProxy
) -> None:
    """Of the board, a first entry's transaction holds its player's Score item and count
    shard, both under the player's Score key: the board's own key on a board of one
    partition, the player's partition key on a write-sharded board, whose first entries then
    spread over its N keys."""
    players = [f"p{n:02d}" for n in range(16)]
    await api.create_board("b")
    for p in players:
        await api.create_player(p)
    board = await get_leaderboard(api.db, "b", count=False)
    assert board is not None
    assert board.partitions == api.partitions
    conflicts = proxy.emulate_conflicts(hold=HOLD)

    outcomes = await asyncio.gather(*(_play(api, p, 5, leaderboardId="b") for p in players))
    assert outcomes == [[]] * 16
    assert conflicts.admitted["TransactWriteItems"] == 16
    keys = {*score_partitions(board), LEADERBOARD.pk.fill(leaderboard_id="b")}
    held = [dict(item.key) for item in conflicts.held if dict(item.key)["pk"] in keys]
    scores = sorted((k["pk"], k["sk"].rsplit("#", 1)[1]) for k in held if holds_score(k))
    assert scores == sorted((score_partition(board, p), p) for p in players)
    shards = {(k["pk"], k["sk"]) for k in held if entity_of(k) is not None and not holds_score(k)}
    assert shards == {count_shard_key("b", p, api.partitions) for p in players}
    assert len(held) == len(scores) + len(shards)  # nothing else of the board
    # Each player's count shard under its Score item's key: one key of the board each.
    for p in players:
        assert count_shard_key("b", p, api.partitions)[0] == score_partition(board, p)
    assert len({pk for pk, _ in scores}) == api.partitions
    assert await _entry_count(api, "b") == 16


@each_layout
async def test_the_count_stays_exact_through_entries_removals_bans_and_erasures_at_once(
    api: Api, proxy: FaultProxy
) -> None:
    standing = [f"s{n:02d}" for n in range(12)]
    newcomers = [f"n{n:02d}" for n in range(12)]
    await api.create_board("b")
    for p in [*standing, *newcomers]:
        await api.create_player(p)
    for n, p in enumerate(standing):
        assert await _play(api, p, 100 + n, leaderboardId="b") == []
    proxy.emulate_conflicts(hold=HOLD)

    async def remove(player: str) -> list[str]:
        payload = (await _remove(api, "b", player))["data"]["removeEntry"]
        return [e["code"] for e in payload["errors"]]

    async def banned(player: str) -> list[str]:
        payload = (await ban(api, player))["data"]["banPlayer"]
        return [e["code"] for e in payload["errors"]]

    async def erased(player: str) -> list[str]:
        payload = (await erase(api, player))["data"]["erasePlayer"]
        assert payload["complete"] is True
        return [e["code"] for e in payload["errors"]]

    outcomes = await asyncio.gather(
        *(_play(api, p, n, leaderboardId="b") for n, p in enumerate(newcomers)),
        *(remove(p) for p in standing[0:3]),
        *(banned(p) for p in standing[3:6]),
        *(erased(p) for p in standing[6:9]),
        *(_play(api, p, 1000, leaderboardId="b") for p in standing[9:12]),
        *(_play(api, p, 2000, leaderboardId="b") for p in standing[0:3]),
    )
    assert outcomes == [[]] * len(outcomes)
    # The newcomers and the three players only playing stand; each removed player stands
    # again if its play came after its removal.
    entries = await _entries_on(api, "b")
    assert 12 + 3 <= entries <= 12 + 3 + 3
    assert await _entry_count(api, "b") == entries
    assert await check_table(api.db.client, api.db.table) == []


async def test_a_board_counted_on_its_own_item_goes_on_counting_in_its_shards(
    api: Api,
) -> None:
    """A board created before the count shards holds its count on its own item: the count is
    that plus the shards', which new entries add to and removals take from."""
    await api.create_board("old")
    for p in ("ann", "bob", "cat", "dan"):
        await api.create_player(p)
    for p in ("ann", "bob", "cat"):
        assert await _play(api, p, 10, leaderboardId="old") == []
    # As the service left it before: the count on the board's item, no shards.
    client, table = api.db.client, api.db.table
    for item in await scan_items(api.db):
        if ENTRY_COUNT_SHARD.holds(item):
            await client.delete_item(
                TableName=table, Key=serialize({"pk": item["pk"], "sk": item["sk"]})
            )
    await client.update_item(
        TableName=table,
        Key=serialize(LEADERBOARD.key_attributes(leaderboard_id="old")),
        UpdateExpression="SET entryCount = :three",
        ExpressionAttributeValues=serialize({":three": 3}),
    )
    assert await _entry_count(api, "old") == 3

    assert await _play(api, "dan", 10, leaderboardId="old") == []
    assert await _entry_count(api, "old") == 4
    payload = (await _remove(api, "old", "ann"))["data"]["removeEntry"]
    assert payload["errors"] == []
    assert await _entry_count(api, "old") == 3 == await _entries_on(api, "old")
    shards = {
        i["sk"]: i["entryCount"] for i in await scan_items(api.db) if ENTRY_COUNT_SHARD.holds(i)
    }
    assert sum(shards.values()) == 0
    assert await check_table(api.db.client, api.db.table) == []
