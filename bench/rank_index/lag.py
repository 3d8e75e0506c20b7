"""The stream lag measurement of the rank index benchmark: submitScore mutations improving
probes' entries through the index instance, and how long after each response the index holds
the new entry (and its new score)."""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import time

import aiohttp

from bench.core.measure import BenchError, percentiles, post_graphql
from bench.core.workload import GAMES
from bench.rank_index.results import BoardData, LagResult
from bench.rank_index.stack import API_KEY, Stack
from dynamo.scores import rank_value
from rankindex.keys import board_keys, member, member_parts

__all__ = [
    "LAG_TIMEOUT_SECONDS",
    "POLL_SECONDS",
    "SUBMIT_MUTATION",
    "measure_lag",
]

SUBMIT_MUTATION = (
    "mutation Play($input: SubmitScoreInput!) { submitScore(input: $input) {"
    " improved score { score } errors { code message } } }"
)
POLL_SECONDS = 0.005
LAG_TIMEOUT_SECONDS = 10.0


async def measure_lag(
    stack: Stack, http: aiohttp.ClientSession, board: BoardData, count: int, rng: random.Random
) -> LagResult:
    """submitScore mutations improving probes' entries, one at a time: how long after each
    response the index holds the new entry (the player's record at the new version, polled
    through :meth:`RankIndex.record`: the layout, then the bucket)."""
    zset = board_keys(stack.table, board.item.leaderboard_id)[0]
    players = rng.sample(board.probes, min(count, len(board.probes)))
    top = max(1, board.entries // 10)
    lags: list[float] = []
    submits: list[float] = []
    timed_out = score_checked = 0
    for n in range(count):
        player = players[n % len(players)]
        score = min(board.scores[player] + rng.randint(1, top), board.item.width_max)
        variables = {
            "input": {
                "playerId": player,
                "leaderboardId": board.item.leaderboard_id,
                "gameId": rng.choice(GAMES),
                "score": score,
                "durationSec": rng.randint(30, 900),
            }
        }
        started = time.perf_counter()
        data = await post_graphql(http, stack.index_url, SUBMIT_MUTATION, variables, key=API_KEY)
        answered = time.perf_counter()
        submits.append((answered - started) * 1000)
        payload = data["submitScore"]
        if payload["errors"] or not payload["improved"]:
            raise BenchError(f"submitScore did not improve {player}: {json.dumps(payload)}")
        version = board.versions.get(player, 1) + 1
        board.versions[player], board.scores[player] = version, score
        held: str | None = None
        while time.perf_counter() - answered < LAG_TIMEOUT_SECONDS:
            found = await stack.index.record(board.item.leaderboard_id, player)
            if found is not None and found[0] >= version and found[1] is not None:
                lags.append((time.perf_counter() - answered) * 1000)
                held = found[1]
                break
            await asyncio.sleep(POLL_SECONDS)
        if held is None:
            timed_out += 1
            continue
        tie, _ = member_parts(held)
        indexed = await stack.redis.zscore(zset, member(tie, player))
        expected = int(rank_value(score, board.item.score_width, board.item.sort_order))
        if indexed is not None and int(indexed) == expected:
            score_checked += 1
    p50, p95, p99 = percentiles(lags) if lags else (float("nan"),) * 3
    return LagResult(
        submissions=count,
        p50_ms=p50,
        p95_ms=p95,
        p99_ms=p99,
        max_ms=max(lags) if lags else float("nan"),
        submit_p50_ms=statistics.median(submits),
        timed_out=timed_out,
        score_checked=score_checked,
    )
