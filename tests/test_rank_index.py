"""The rank index: same ranks as the table's COUNT and a brute-force oracle, whatever the
order or repetition of the stream records it is fed."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from dynamo import ranks
from dynamo.items import serialize
from dynamo.leaderboards import LEADERBOARD, LeaderboardItem, get_leaderboard
from dynamo.scores import ScoreItem, holds_score
from rankindex.index import RankIndex
from rankindex.keys import READY, member
from rankindex.notices import notices
from rankindex.projection import BoardCreated, project_all
from rankindex.projector import Projector
from tests.conftest import Indexed, each_layout
from tests.scan import scan_items

CASES = [(op, order) for op in ("BEST", "LATEST", "INCREMENT") for order in ("DESC", "ASC")]


async def _entries(indexed: Indexed, board: str) -> list[ScoreItem]:
    items = await scan_items(indexed.api.db)
    return [
        ScoreItem.model_validate(i) for i in items if holds_score(i) and i["leaderboardId"] == board
    ]


def _oracle(board: LeaderboardItem, entries: list[ScoreItem]) -> dict[str, int]:
    def better(a: int, b: int) -> bool:
        return a > b if board.sort_order.value == "DESC" else a < b

    return {e.player_id: 1 + sum(better(o.score, e.score) for o in entries) for e in entries}


async def _check(indexed: Indexed, board_id: str) -> None:
    board = await get_leaderboard(indexed.api.db, board_id)
    assert board is not None
    entries = await _entries(indexed, board_id)
    expected = _oracle(board, entries)
    from_index = await indexed.index.better_counts(board, entries)
    from_count = await ranks.better_counts(indexed.api.db, board, entries)
    assert from_index is not None, "the index should answer for a board it saw created"
    for entry in entries:
        value = ranks._value(board, entry)
        assert from_index[value] + 1 == from_count[value] + 1 == expected[entry.player_id]


@each_layout
@pytest.mark.slow
@pytest.mark.parametrize(("operator", "order"), CASES)
async def test_index_count_and_oracle_agree_after_every_step(
    indexed: Indexed, operator: str, order: str
) -> None:
    api = indexed.api
    rng = random.Random(f"{operator}{order}")
    players = [f"p{i}" for i in range(8)]
    for p in players:
        await api.create_player(p)
    await api.create_board("b", operator=operator, sortOrder=order, scoreWidth=6)
    # After every play on one partition; on a write-sharded board, whose check asks each
    # partition, after every third play and the last (a disagreement, once there, stays).
    every = 1 if api.partitions == 1 else 3
    for step in range(1, 31):
        result = await api.submit(rng.choice(players), "b", rng.randint(0, 6) * 5)
        assert result["errors"] == []
        if step % every == 0:
            await indexed.projector.drain()
            await _check(indexed, "b")
    # Through GraphQL the index answers too, with the same ranks.
    ranked = await api.gql(
        '{ leaderboard(id: "b") { topScores(first: 8) { edges { node { rank player { id } } } } }}'
    )
    board = await get_leaderboard(api.db, "b")
    assert board is not None
    expected = _oracle(board, await _entries(indexed, "b"))
    for edge in ranked["leaderboard"]["topScores"]["edges"]:
        assert edge["node"]["rank"] == expected[edge["node"]["player"]["id"]]
    # Around-me windows not starting at the top take their ranks from ZREVRANK and ZCOUNT.
    indexed.api.reset_calls()
    for player in expected:
        window = await api.gql(
            """query($p: ID!) { leaderboard(id: "b") { around(playerId: $p, before: 1,
               after: 2) { rank score { player { id } } } } }""",
            {"p": player},
        )
        for row in window["leaderboard"]["around"]:
            assert row["rank"] == expected[row["score"]["player"]["id"]]
    # Each window: the entry (GSI1 Query), the board and two range Queries (on each
    # partition), and a write-sharded board's count shards for the window's total (one Query
    # per partition); no COUNT Query (which the table fallback would add, two per window, on
    # each partition).
    windows = 2 + 2 * api.partitions + (api.partitions if api.partitions > 1 else 0)
    assert indexed.api.calls["Query"] == windows * len(expected)


@each_layout
async def test_replayed_and_shuffled_records_leave_the_index_equal_to_the_table(
    indexed: Indexed, redis_url: str
) -> None:
    api = indexed.api
    rng = random.Random(5)
    for p in range(10):
        await api.create_player(f"p{p}")
    await api.create_board("b")
    for _ in range(60):
        await api.submit(f"p{rng.randint(0, 9)}", "b", rng.randint(0, 100))
    await indexed.projector.drain()
    records = await indexed.all_records()
    changes = project_all(records)
    # The board's creation, and every improvement of an entry (more than one per player).
    assert len(changes) > 11

    # The same records again, twice: nothing changes.
    assert await indexed.index.apply(changes) == 0
    assert await indexed.index.apply(changes) == 0
    assert (await indexed.index.verify(api.db, "b")).ok

    # A fresh index fed the records in a shuffled order, as shards might deliver them.
    shuffled = RankIndex(indexed.index.redis, f"{indexed.index.namespace}-shuffled")
    mixed = changes[:]
    rng.shuffle(mixed)
    await shuffled.apply(mixed)
    await shuffled.apply(list(reversed(mixed)))
    assert (await shuffled.verify(api.db, "b")).ok


async def test_a_killed_projector_resumes_from_its_checkpoint(indexed: Indexed) -> None:
    api = indexed.api
    for p in range(6):
        await api.create_player(f"p{p}")
    await api.create_board("b")
    for n in range(40):
        await api.submit(f"p{n % 6}", "b", n)
    # A projector that applied a few records and died.
    shard = (await indexed.stream.shards())[0]["ShardId"]
    first = await indexed.stream.read(shard, None, limit=30)
    await indexed.index.apply(project_all(first.records))
    await indexed.index.set_checkpoint(shard, first.records[-1]["dynamodb"]["SequenceNumber"])
    board = await get_leaderboard(api.db, "b")
    assert board is not None
    partial = await indexed.index.redis.zcard(f"rank:{indexed.index.namespace}:{{b}}")
    assert 0 < partial < 6

    # A new projector continues from the checkpoint (not from the start: the records before
    # it are not read again) and the index catches up exactly.
    reread = await indexed.stream.read(shard, await indexed.index.checkpoint(shard))
    assert (
        reread.records[0]["dynamodb"]["SequenceNumber"]
        > first.records[-1]["dynamodb"]["SequenceNumber"]
    )
    await indexed.projector.drain()
    for n in range(6):
        await api.submit(f"p{n}", "b", 100 + n)
    await indexed.projector.drain()
    assert (await indexed.index.verify(api.db, "b")).ok
    await _check(indexed, "b")


RANK = """query($p: ID!) { player(id: $p) { rank(leaderboardId: "b") {
    rank total percentile } } }"""


@each_layout
async def test_a_rank_in_sync_costs_one_index_round_trip_and_no_table_read(
    indexed: Indexed,
) -> None:
    api = indexed.api
    players = [f"p{i}" for i in range(6)]
    for p in players:
        await api.create_player(p)
    await api.create_board("b", operator="LATEST")
    for n, p in enumerate(players):
        await api.submit(p, "b", [30, 10, 30, 20, 10, 30][n])
    await indexed.projector.drain()
    board = await get_leaderboard(api.db, "b")
    assert board is not None
    expected = _oracle(board, await _entries(indexed, "b"))
    assert sorted(expected.values()) == [1, 1, 1, 4, 5, 5]

    for player in players:
        api.reset_calls()
        ranked = (await api.gql(RANK, {"p": player}))["player"]["rank"]
        total = len(players)
        assert ranked == {
            "rank": expected[player],
            "total": total,
            "percentile": 100.0 * (total - (expected[player] - 1)) / total,
        }
        assert api.calls == {}, "the index ranks the entry, and the entry proves the player"

    # A Redis that lost its scripts (restarted, flushed) gets the script again, once.
    await indexed.index.redis.script_flush()
    api.reset_calls()
    ranked = (await api.gql(RANK, {"p": "p3"}))["player"]["rank"]
    assert (ranked["rank"], api.calls) == (4, {})

    # The entry itself is read only when asked for.
    api.reset_calls()
    asked = await api.gql(
        '{ player(id: "p3") { rank(leaderboardId: "b") { rank score { score } } } }'
    )
    assert asked["player"]["rank"] == {"rank": 4, "score": {"score": 20}}
    assert api.calls == {"Query": 1}

    # Anything else asked of the player reads it.
    api.reset_calls()
    named = await api.gql('{ player(id: "p3") { name rank(leaderboardId: "b") { rank } } }')
    assert named["player"] == {"name": "p3", "rank": {"rank": 4}}
    assert api.calls == {"GetItem": 1}

    # A list of ranks too; a board the index does not hold is looked up in the table.
    api.reset_calls()
    listed = await api.gql(
        '{ player(id: "p3") { id ranks(leaderboardIds: ["b", "none"]) { rank } } }'
    )
    assert listed["player"] == {"id": "p3", "ranks": [{"rank": 4}, None]}
    assert api.calls == {"Query": 2}, "the entry and the board of 'none'"

    # A friends board: one Query for the board and its count, every rank from the index,
    # ties in the table's order (earlier attained first).
    api.reset_calls()
    friends = await api.gql(
        '{ leaderboard(id: "b") { ranksOf(playerIds: ["p5", "p1", "p0", "p4", "nobody"]) {'
        " rank score { player { id } } } } }"
    )
    assert [(r["rank"], r["score"]["player"]["id"]) for r in friends["leaderboard"]["ranksOf"]] == [
        (1, "p0"),
        (1, "p5"),
        (5, "p1"),
        (5, "p4"),
    ]
    assert "GetItem" not in api.calls
    assert api.calls["Query"] in (1, 2), "the board, and only the absent player's entry"


@each_layout
async def test_a_submission_is_ranked_as_written_while_the_index_holds_the_old_entry(
    indexed: Indexed,
) -> None:
    api = indexed.api
    for p in ("a", "b", "c", "d"):
        await api.create_player(p)
    await api.create_board("b", operator="LATEST")
    for p, score in (("a", 50), ("b", 40), ("c", 30), ("d", 20)):
        await api.submit(p, "b", score)
    await indexed.projector.drain()
    # a drops from first to third; the projector has not applied it yet.
    data = await api.gql(
        """mutation { submitScore(input: {playerId: "a", leaderboardId: "b", gameId: "g",
           score: 35}) { rank { rank total score { score } } errors { code } } }"""
    )
    assert data["submitScore"]["rank"] == {"rank": 2, "total": 4, "score": {"score": 35}}
    # A first entry that the index does not hold yet counts itself in the total.
    await indexed.projector.drain()
    await api.create_player("e")
    data = await api.gql(
        """mutation { submitScore(input: {playerId: "e", leaderboardId: "b", gameId: "g",
           score: 45}) { rank { rank total } errors { code } } }"""
    )
    assert data["submitScore"]["rank"] == {"rank": 1, "total": 5}
    # Until the projector applies them, a plain rank query answers from the table's entry
    # for a player the index does not hold, and from the index otherwise.
    fresh = await api.gql('{ player(id: "e") { rank(leaderboardId: "b") { rank total } } }')
    assert fresh["player"]["rank"] == {"rank": 1, "total": 5}
    await indexed.projector.drain()
    for player, rank in (("e", 1), ("b", 2), ("a", 3), ("c", 4), ("d", 5)):
        ranked = await api.gql(RANK, {"p": player})
        assert ranked["player"]["rank"]["rank"] == rank
        assert ranked["player"]["rank"]["total"] == 5


@each_layout
async def test_rebuild_verify_and_fallback(indexed: Indexed) -> None:
    api = indexed.api
    for p in range(5):
        await api.create_player(f"p{p}")
    await api.create_board("b")
    for n in range(5):
        await api.submit(f"p{n}", "b", 10 * n)
    await indexed.projector.drain()
    board = await get_leaderboard(api.db, "b")
    assert board is not None
    entries = await _entries(indexed, "b")

    # Damage the index behind its back: verify finds it and marks the board stale; readers
    # then fall back to the table until a rebuild.
    zset = f"rank:{indexed.index.namespace}:{{b}}"
    await indexed.index.redis.zadd(zset, {member("0000000000000", "ghost"): 999})
    report = await indexed.index.verify(api.db, "b")
    assert report.extra == ["0000000000000#ghost"]
    assert await indexed.index.better_counts(board, entries) is None
    rank = await api.gql('{ player(id: "p0") { rank(leaderboardId: "b") { rank total } } }')
    assert rank["player"]["rank"] == {"rank": 5, "total": 5}

    assert await indexed.index.rebuild(api.db, "b") == 5
    assert (await indexed.index.verify(api.db, "b")).ok
    assert await indexed.index.better_counts(board, entries) is not None

    # A board the index never saw created (an older board) is not answered until rebuilt.
    await indexed.index.redis.delete(f"rank:{indexed.index.namespace}:{{b}}:state")
    assert await indexed.index.better_counts(board, entries) is None
    assert await indexed.index.rebuild(api.db, "b") == 5
    assert await indexed.index.better_counts(board, entries) is not None


async def test_index_is_not_used_while_the_projector_is_behind(indexed: Indexed) -> None:
    api = indexed.api
    await api.create_player("p")
    await api.create_board("b")
    await api.submit("p", "b", 1)
    await indexed.projector.drain()
    board = await get_leaderboard(api.db, "b")
    assert board is not None
    entries = await _entries(indexed, "b")
    assert await indexed.index.better_counts(board, entries) is not None
    indexed.index.max_lag_ms = 0
    await indexed.index.redis.hset(f"rank:{indexed.index.namespace}:heartbeat", "caughtUpAt", 1)
    assert await indexed.index.better_counts(board, entries) is None
    lag = await indexed.index.lag()
    assert lag["inSync"] is False
    health = await (await api.http.get("/healthz")).json()
    assert health["rankIndex"]["inSync"] is False


async def test_the_lambda_handler_applies_stream_batches_idempotently(
    indexed: Indexed, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rankindex import lambda_handler

    api = indexed.api
    for p in range(4):
        await api.create_player(f"p{p}")
    await api.create_board("b")
    for n in range(12):
        await api.submit(f"p{n % 4}", "b", n * 3)
    records = await indexed.all_records()
    # Lambda's event for a stream is {"Records": [...]} with the same record format.
    namespace = f"{indexed.index.namespace}-lambda"
    monkeypatch.setenv("LEADERBOARD_REDIS_URL", redis_url)
    monkeypatch.setenv("LEADERBOARD_TABLE", namespace)
    for batch in (records[:20], records[20:], records):  # the last batch is a redelivery
        assert await lambda_handler.handle_batch({"Records": batch}) == {"batchItemFailures": []}
    assert (await RankIndex(indexed.index.redis, namespace).verify(api.db, "b")).ok
    # The change feed got each batch's notices: a redelivery repeats them (readers merge).
    told = notices(records)
    assert len(told) == 13  # the board, and 12 entry writes
    assert await indexed.index.redis.xlen(f"rank:{namespace}:feed") == 2 * len(told)


async def test_a_periodic_board_leaves_nothing_in_the_index_after_it_expires(
    indexed: Indexed,
) -> None:
    expires = 4_102_444_800  # 2100-01-01
    record = {
        "eventName": "INSERT",
        "dynamodb": {
            "Keys": serialize(LEADERBOARD.key_attributes(leaderboard_id="daily")),
            "NewImage": {"leaderboardId": {"S": "daily"}, "ttl": {"N": str(expires)}},
        },
    }
    changes = project_all([record])
    assert changes == [BoardCreated("daily", expires)]
    await indexed.index.apply(changes)
    state = f"rank:{indexed.index.namespace}:{{daily}}:state"
    assert await indexed.index.redis.get(state) == READY.encode()
    assert await indexed.index.redis.expiretime(state) == expires


@contextmanager
def _stream_calls(indexed: Indexed) -> Iterator[Counter[str]]:
    """The Streams calls the indexed service's stream client makes in the block, by name."""
    calls: Counter[str] = Counter()

    def count(model: Any, **_: Any) -> None:
        calls[model.name] += 1

    events = indexed.stream._streams.meta.events
    events.register("before-call.dynamodbstreams", count)
    try:
        yield calls
    finally:
        events.unregister("before-call.dynamodbstreams", count)


async def test_a_projector_round_reads_records_with_the_iterators_and_shards_it_holds(
    indexed: Indexed,
) -> None:
    api = indexed.api
    await api.create_player("p")
    await api.create_board("b")
    await api.submit("p", "b", 10)
    # A clock that stands still: the shard list never ages out during the test.
    projector = Projector(indexed.stream, indexed.index, clock=lambda: 0.0)
    with _stream_calls(indexed) as calls:
        await projector.drain()  # lists the shards, gets an iterator, applies
        assert calls["DescribeStream"] == 1
        assert calls["GetShardIterator"] == len(await indexed.stream.shards())
        # Later rounds, idle or not, go on with the iterators held: no DescribeStream, no
        # GetShardIterator, only GetRecords (one per open shard when nothing is new).
        for score in (None, 30, None, 50):
            if score is not None:
                await api.submit("p", "b", score)
            calls.clear()
            await projector.drain()
            assert set(calls) == {"GetRecords"}
        assert (await indexed.index.verify(api.db, "b")).ok
        await _check(indexed, "b")


async def test_a_read_of_the_stream_is_one_page_so_a_busy_stream_is_applied_as_it_comes(
    indexed: Indexed,
) -> None:
    """A read returns what one GetRecords call gives: the projector applies it (and sends its
    notices) before it asks for more, instead of reading on while new records keep coming."""
    api = indexed.api
    for p in range(4):
        await api.create_player(f"p{p}")
    await api.create_board("b")
    for n in range(20):
        await api.submit(f"p{n % 4}", "b", n)
    shard = (await indexed.stream.shards())[0]["ShardId"]
    with _stream_calls(indexed) as calls:
        read = await indexed.stream.read(shard, None)
        assert len(read.records) >= 20
        assert calls == {"GetShardIterator": 1, "GetRecords": 1}
        calls.clear()
        after = read.records[-1]["dynamodb"]["SequenceNumber"]
        assert (await indexed.stream.read(shard, after)).records == []
        assert calls == {"GetRecords": 1}  # goes on with the iterator it holds
