"""After submissions through GraphQL, the table holds exactly the keys of the design."""

from __future__ import annotations

import hashlib
import re
from collections import Counter

from dynamo.leaderboards import (
    LeaderboardItem,
    Period,
    count_shard,
    count_shard_key,
    player_partition,
)
from dynamo.scores import score_partition, score_partitions
from tests.boards import T0
from tests.conftest import Api
from tests.scan import scan_items

ULID = r"[0-9A-HJKMNP-TV-Z]{26}"


async def test_scan_shows_the_designed_keys(api: Api) -> None:
    await api.create_player("alice")
    await api.create_board("global", scoreWidth=6)
    await api.create_board("laps", sortOrder="ASC", scoreWidth=5)
    first = await api.submit("alice", "global", 1234, game_id="arena")
    await api.submit("alice", "global", 99, game_id="arena")
    lap = await api.submit("alice", "laps", 4321, game_id="racer")

    rows = {(i["pk"], i["sk"]): i for i in await scan_items(api.db)}
    sessions = {k: v for k, v in rows.items() if k[1].startswith("SESSION#")}
    assert len(sessions) == 3
    for (pk, sk), item in sessions.items():
        assert pk == "PLAYER#alice"
        assert re.fullmatch(f"SESSION#{ULID}", sk)
        assert item["gsi2pk"] == f"GAME#{item['gameId']}"
        assert item["gsi2sk"] == sk
        assert "gsi1pk" not in item

    player = rows[("PLAYER#alice", "#METADATA")]
    assert (player["gsi1pk"], player["gsi1sk"]) == (
        "PLAYER_EMAIL#alice@x.example",
        "PLAYER#alice",
    )
    assert (player["lifetimeScore"], player["gamesPlayed"]) == (1234 + 99 + 4321, 3)

    # The board's item is as created; its count is in the count shard of alice's first entry.
    shard = f"#COUNT#{count_shard('alice', 1)}"
    assert re.fullmatch(r"#COUNT#\d{2}", shard)
    for board in ("global", "laps"):
        meta = rows[(f"LEADERBOARD#{board}", "#METADATA")]
        assert meta["entryCount"] == 0
        assert not {"gsi1pk", "gsi2pk"} & set(meta)
        count = rows[(f"LEADERBOARD#{board}", shard)]
        assert count == {
            "pk": f"LEADERBOARD#{board}",
            "sk": shard,
            "leaderboardId": board,
            "shard": shard.removeprefix("#COUNT#"),
            "entryCount": 1,
        }

    scores = {k: v for k, v in rows.items() if k[1].startswith("SCORE#")}
    assert len(scores) == 2
    ((global_key, global_score),) = [(k, v) for k, v in scores.items() if "global" in k[0]]
    ((laps_key, laps_score),) = [(k, v) for k, v in scores.items() if "laps" in k[0]]
    # DESC board: the score padded to width 6. ASC board: 10^5 - 1 - 4321 padded to width 5.
    assert re.fullmatch(r"SCORE#001234#\d{13}#alice", global_key[1])
    assert re.fullmatch(r"SCORE#95678#\d{13}#alice", laps_key[1])
    assert (global_score["gsi1pk"], global_score["gsi1sk"]) == ("PLAYER#alice", "SCORE#global")
    assert (laps_score["gsi1pk"], laps_score["gsi1sk"]) == ("PLAYER#alice", "SCORE#laps")
    assert global_score["sessionId"] == first["session"]["id"]
    assert laps_score["sessionId"] == lap["session"]["id"]
    tie = int(global_key[1].split("#")[2])
    assert 9_999_999_999_999 - tie == global_score_millis(global_score["attainedAt"])

    guards = {k: v for k, v in rows.items() if k[1].startswith("ENTRY#")}
    assert set(guards) == {("PLAYER#alice", "ENTRY#global"), ("PLAYER#alice", "ENTRY#laps")}
    assert guards[("PLAYER#alice", "ENTRY#global")]["scoreSk"] == global_key[1]
    # A board of one partition: its Score items under its own key, which the guard needs not
    # hold.
    assert "scorePk" not in guards[("PLAYER#alice", "ENTRY#global")]
    assert rows[("PLAYER_EMAIL#alice@x.example", "#CLAIM")]["playerId"] == "alice"

    designed = (
        set(sessions)
        | set(scores)
        | set(guards)
        | {
            ("PLAYER#alice", "#METADATA"),
            ("LEADERBOARD#global", "#METADATA"),
            ("LEADERBOARD#laps", "#METADATA"),
            ("LEADERBOARD#global", shard),
            ("LEADERBOARD#laps", shard),
            ("PLAYER_EMAIL#alice@x.example", "#CLAIM"),
        }
    )
    assert set(rows) == designed


def global_score_millis(attained_at: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(attained_at).timestamp() * 1000)


async def test_a_write_sharded_board_keeps_each_score_item_in_its_player_partition(
    api: Api,
) -> None:
    """``partitions: 4``: each Score item under ``LEADERBOARD#<id>#<shard>``, the shard the
    player's BLAKE2b hash (8 bytes, big-endian) mod 4, and its guard holding that partition;
    each player's count shard under the same key, shard (hash // 4) mod 32; the board's item
    and every other item where a board of one partition has them."""
    players = [f"p{n}" for n in range(12)]
    for p in players:
        await api.create_player(p)
    await api.create_board("wide", scoreWidth=6, partitions=4)
    for n, p in enumerate(players):
        assert (await api.submit(p, "wide", 100 + n))["errors"] == []
    assert (await api.submit("p0", "wide", 500))["errors"] == []  # moves p0's Score item

    def hashed(player: str) -> int:
        return int.from_bytes(hashlib.blake2b(player.encode(), digest_size=8).digest(), "big")

    def shard(player: str) -> str:
        return f"{hashed(player) % 4:02d}"

    def counter(player: str) -> tuple[str, str]:
        return f"LEADERBOARD#wide#{shard(player)}", f"#COUNT#{hashed(player) // 4 % 32:02d}"

    rows = {(i["pk"], i["sk"]): i for i in await scan_items(api.db)}
    scores = {k: v for k, v in rows.items() if k[1].startswith("SCORE#")}
    assert sorted((v["playerId"], pk) for (pk, _), v in scores.items()) == sorted(
        (p, f"LEADERBOARD#wide#{shard(p)}") for p in players
    )
    assert len({pk for pk, _ in scores}) == 4  # the twelve players fall in all four
    assert rows[("LEADERBOARD#wide#" + shard("p0"), scores_sk(scores, "p0"))]["score"] == 500
    for p in players:
        guard = rows[(f"PLAYER#{p}", "ENTRY#wide")]
        assert (guard["scorePk"], guard["scoreSk"]) == (
            f"LEADERBOARD#wide#{shard(p)}",
            scores_sk(scores, p),
        )
    board = rows[("LEADERBOARD#wide", "#METADATA")]
    assert (board["partitions"], board["entryCount"]) == (4, 0)
    counted = {k: v for k, v in rows.items() if k[1].startswith("#COUNT#")}
    assert {k: v["entryCount"] for k, v in counted.items()} == Counter(map(counter, players))
    for (pk, sk), item in counted.items():
        assert item == {
            "pk": pk,
            "sk": sk,
            "leaderboardId": "wide",
            "partition": pk.removeprefix("LEADERBOARD#wide#"),
            "shard": sk.removeprefix("#COUNT#"),
            "entryCount": item["entryCount"],
        }
    # No count shard under the board's own key, which no first entry wrote.
    assert not any(pk == "LEADERBOARD#wide" for pk, _ in counted)


def scores_sk(scores: dict[tuple[str, str], dict[str, object]], player: str) -> str:
    ((sk,),) = [(sk,) for (_, sk), v in scores.items() if v["playerId"] == player]
    return sk


def test_a_board_has_32_count_shards_under_each_partition_key_each_of_one_partition() -> None:
    """A player's count shard is under its Score key: on N partitions the board has 32·N
    shards, and no two players of different partitions ever share one; on one partition the
    shard is the one of the board's key that the player's hash mod 32 picks."""
    players = [f"player-{n:06d}" for n in range(1, 20_001)]
    for n in (1, 2, 4, 16, 64):
        board = LeaderboardItem(
            leaderboard_id="b", name="b", period=Period.GLOBAL, partitions=n, created_at=T0
        )
        by_shard: dict[tuple[str, str], set[str]] = {}
        for p in players:
            key = count_shard_key("b", p, n)
            assert key[0] == score_partition(board, p)
            by_shard.setdefault(key, set()).add(player_partition(p, n))
        assert all(len(partitions) == 1 for partitions in by_shard.values())
        # 20,000 players fill every shard of 64 partitions (2,048), ten to a shard on average.
        assert len(by_shard) == 32 * n
        assert {pk for pk, _ in by_shard} == set(score_partitions(board))
    for p in players[:100]:
        digest = hashlib.blake2b(p.encode(), digest_size=8).digest()
        shard = f"#COUNT#{int.from_bytes(digest, 'big') % 32:02d}"
        assert count_shard_key("b", p, 1) == ("LEADERBOARD#b", shard)
