"""Rank through GraphQL from the Redis rank index and from the table's COUNT, and the lag from a
play to the index.

``python -m bench.rank_index [--entries 10000 100000 1000000] [--requests 300]``

For each board size N the benchmark starts a fresh in-memory DynamoDB Local and redis-server
(:class:`~leaderboard.redis_server.EmbeddedRedis`), creates a table with its stream, and serves
two instances of the real application on loopback TCP ports, both on that table:

- the *index* instance, configured with the Redis URL and running the stream projector in its
  own process (``create_app(..., project_ranks=True)``, as ``leaderboard serve`` does in
  embedded mode), so its ranks come from the index;
- the *COUNT* instance, configured without Redis, so its ranks come from the table's
  ``Select=COUNT`` Queries.

**Loading.** Boards up to ``--bulk-max`` entries are written whole into the table with
BatchWriteItem, item for item what a player's creation and first play write
(:func:`bench.items.bulk_items`: guards and Score items at version 1, guards with their rank and
tie values); the index is then built with :meth:`RankIndex.rebuild`, and the benchmark waits
until the projector has read everything the stream holds. Larger boards are not written whole:
the table gets the board item (``entryCount`` = N) and ``--probes`` players with their player,
Score, entry guard and session items, while the index is loaded directly into Redis with the
members, scores and meta fields it holds for all N entries (``rankindex/keys.py``), consistent
with the probes' table items; then the board's state is set to ``ready``. Scores are uniform in
0..N/10, so many players tie.

**Rank latency.** ``query($p: ID!) { player(id: $p) { rank(leaderboardId: ...) { rank total
percentile } } }`` over HTTP for random probe players, one request at a time: ``--requests``
to the index instance after ``--warmup`` unrecorded ones, each alternating with the same calls
sent without HTTP and GraphQL (the raw floor); ``--count-requests`` to the COUNT instance after
``--count-warmup``, where the table holds every entry and N is at most ``--count-max``, each
followed by the same probe asked of the index instance. Every answer is checked against the rank
computed from the generated scores (standard competition ranking). Reported: p50/p95/p99, the
DynamoDB calls of a request (the app's :data:`~leaderboard.app.CALLS` counter), the server time
of ZCOUNT (``INFO commandstats``) and the round trip of the index's own lookup
(:meth:`RankIndex.ranks`) from this process.

**Stream lag.** ``--lag-submissions`` submitScore mutations, each improving a probe's entry: the
time from the mutation's response until the index's meta hash holds the entry's new version
(polled every 5 ms), and that the sorted set then holds the new score.

It prints Markdown tables and writes ``rank_index.json`` and ``rank_index.md`` in ``--out``.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import os
import random
import statistics
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aioboto3
import aiohttp
from aiobotocore.config import AioConfig
from aiohttp import web
from redis.asyncio import Redis

from bench.items import bulk_items
from bench.loading import batch_write, load_with_batch_writes
from bench.measure import BenchError, format_calls, post_graphql
from bench.report import log, machine_info, machine_lines
from bench.stack import CREDENTIALS, CURSOR_SECRET, REGION
from bench.workload import GAMES, new_board
from dynamo.cursors import CursorCodec
from dynamo.ids import new_session_id
from dynamo.leaderboards import LeaderboardItem, board_key, create_leaderboard
from dynamo.metrics import CallCounter
from dynamo.players import get_player
from dynamo.plays import Submission
from dynamo.scores import rank_value, tie_value
from dynamo.table import Db, create_table, serialize
from leaderboard.app import CALLS, create_app
from leaderboard.config import Settings, default_cache_dir
from leaderboard.embedded import DynamoDBLocal
from leaderboard.redis_server import EmbeddedRedis
from rankindex.index import MAX_LAG_MS, RankIndex
from rankindex.keys import HEARTBEAT, board_keys, member

__all__ = [
    "BoardData",
    "LagResult",
    "RankLatency",
    "SizeResult",
    "main",
    "run",
]

API_KEY = "bench-rank-index-key"
RANK_QUERY = (
    'query Rank($p: ID!) { player(id: $p) { rank(leaderboardId: "%s") { rank total percentile } } }'
)
SUBMIT_MUTATION = (
    "mutation Play($input: SubmitScoreInput!) { submitScore(input: $input) {"
    " improved score { score } errors { code message } } }"
)
REDIS_CHUNK = 10_000
"""Entries per pipeline when the index is loaded directly into Redis."""
TIE_SPREAD_MS = 90 * 24 * 3600 * 1000
"""Plays of a directly loaded board are spread over the 90 days before the run."""
POLL_SECONDS = 0.005
LAG_TIMEOUT_SECONDS = 10.0
SYNC_TIMEOUT_SECONDS = 900.0
_LOADER_CONFIG = AioConfig(
    retries={"mode": "standard", "max_attempts": 10},
    connect_timeout=5,
    read_timeout=120,
    max_pool_connections=64,
)
"""The benchmark's own client (loading, rebuild, verify): patient, so that a bulk write that
DynamoDB Local answers slowly is waited for rather than failed."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# -- results -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RankLatency:
    """The rank query against one instance of the app on one board size."""

    source: str
    """``index`` or ``COUNT``."""
    requests: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    mean_ms: float
    calls: dict[str, int]
    """Every pattern of DynamoDB calls seen over the measured requests, with how often."""
    calls_per_request: float
    """The mean number of DynamoDB calls of a measured request."""
    exact: int
    """Responses equal to the rank computed from the generated scores."""
    failed: int = 0
    """Requests that failed (COUNT only)."""
    raw_p50_ms: float = 0.0
    """The same calls sent from the benchmark's process without HTTP and GraphQL (index only,
    see raw_rank)."""
    raw_p99_ms: float = 0.0
    zcount_calls: int = 0
    """ZCOUNTs the Redis server ran during the measured requests and their raw counterparts
    (index only)."""
    zcount_server_us: float = 0.0
    """The server's mean time per ZCOUNT over them."""
    lookup_p50_ms: float = 0.0
    """RankIndex.ranks (heartbeat and one script: state, meta, ZSCORE, ZCOUNT, ZCARD) timed
    from the benchmark's process: the index's share of a request (index only)."""
    lookup_p99_ms: float = 0.0


@dataclass(frozen=True)
class Contract:
    """The same probes asked of both instances."""

    sample: int
    same: int
    """Probes whose rank, total and percentile were equal from both instances."""
    exact: int
    """Probes whose answers from both also equal the rank computed from the scores."""


@dataclass(frozen=True)
class LagResult:
    submissions: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float
    submit_p50_ms: float
    """The submitScore request itself, for scale."""
    timed_out: int
    score_checked: int
    """Entries whose score in the sorted set equalled the submitted one once visible."""


@dataclass(frozen=True)
class SizeResult:
    entries: int
    load_method: str
    load_seconds: float
    index_method: str
    index_seconds: float
    sync_seconds: float
    """From the end of the index build until a complete projector pass over the stream."""
    table_items: int
    redis_used_memory: int
    latencies: list[RankLatency]
    count_skipped: str | None
    contract: Contract | None
    lag: LagResult | None
    verified: str
    total_seconds: float
    load_average: tuple[float, float]
    """The machine's 1-minute load average when the size started and when it ended (other
    processes on the machine included)."""


# -- the board -----------------------------------------------------------------------------


@dataclass
class BoardData:
    """The loaded board as the benchmark knows it: the probes' scores, and every score (for
    the expected ranks)."""

    item: LeaderboardItem
    entries: int
    probes: list[str]
    scores: dict[str, int]
    """Each probe's current score."""
    sorted_scores: list[int]
    """Every entry's score at load time, ascending."""
    versions: dict[str, int] = field(default_factory=dict)
    """Each probe's entry version, where it changed since loading (else 1)."""

    def expected(self, player_id: str) -> dict[str, Any]:
        """Standard competition rank of the player's loaded score: 1 + strictly better."""
        score = self.scores[player_id]
        total = len(self.sorted_scores)
        rank = 1 + total - bisect.bisect_right(self.sorted_scores, score)
        return {"rank": rank, "total": total, "percentile": 100.0 * (total - (rank - 1)) / total}


def _play(player_id: str, board_id: str, score: int, rng: random.Random) -> Submission:
    return Submission(
        player_id=player_id,
        game_id=rng.choice(GAMES),
        score=score,
        leaderboard_ids=(board_id,),
        duration_sec=rng.randint(30, 900),
    )


def _player_id(n: int) -> str:
    return f"player-{n:07d}"


# -- the served stack ----------------------------------------------------------------------


@dataclass(frozen=True)
class Stack:
    """Both instances of the app on one table, and the benchmark's own handles on the table
    (its own DynamoDB client) and the index (its own Redis client)."""

    table: str
    index_url: str
    count_url: str
    db: Db
    index_calls: CallCounter
    count_calls: CallCounter
    redis: Redis
    index: RankIndex


async def _create_table(db: Db) -> None:
    await create_table(db.client, db.table)


@asynccontextmanager
async def _serve(app: web.Application) -> AsyncIterator[str]:
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = int(runner.addresses[0][1])
        yield f"http://127.0.0.1:{port}/graphql"
    finally:
        await runner.cleanup()


@asynccontextmanager
async def rank_stack(endpoint_url: str, redis_url: str, table: str) -> AsyncIterator[Stack]:
    """Serve the index instance (which creates ``table``) and the COUNT instance on it."""
    settings = Settings(
        endpoint_url=endpoint_url,
        region=REGION,
        table=table,
        cursor_secret=CURSOR_SECRET,
        api_keys=(API_KEY,),
    )
    with_index = create_app(
        replace(settings, redis_url=redis_url),
        credentials=CREDENTIALS,
        prepare=_create_table,
        project_ranks=True,
    )
    count_only = create_app(settings, credentials=CREDENTIALS)
    redis = Redis.from_url(redis_url)
    try:
        async with (
            _serve(with_index) as index_url,
            _serve(count_only) as count_url,
            aioboto3.Session().client(
                "dynamodb",
                endpoint_url=endpoint_url,
                region_name=REGION,
                config=_LOADER_CONFIG,
                aws_access_key_id=CREDENTIALS[0],
                aws_secret_access_key=CREDENTIALS[1],
            ) as client,
        ):
            yield Stack(
                table=table,
                index_url=index_url,
                count_url=count_url,
                db=Db(client=client, table=table, cursors=CursorCodec(CURSOR_SECRET)),
                index_calls=with_index[CALLS],
                count_calls=count_only[CALLS],
                redis=redis,
                index=RankIndex(redis, table),
            )
    finally:
        await redis.aclose()


def _now_ms() -> int:
    return int(time.time() * 1000)


async def wait_in_sync(stack: Stack) -> float:
    """Wait until the projector has made a complete pass over the stream that started after
    this call (two ``caughtUpAt`` updates); the seconds waited."""
    started = time.perf_counter()
    heartbeat = HEARTBEAT.format(ns=stack.table)
    seen = _now_ms()
    for _ in range(2):
        while True:
            value = await stack.redis.hget(heartbeat, "caughtUpAt")
            if value is not None and int(value) > seen:
                seen = int(value)
                break
            if time.perf_counter() - started > SYNC_TIMEOUT_SECONDS:
                raise BenchError("the projector did not catch up with the stream")
            await asyncio.sleep(0.05)
    return time.perf_counter() - started


# -- loading -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Loaded:
    board: BoardData
    load_method: str
    load_seconds: float
    index_method: str
    index_seconds: float
    table_items: int


async def load_whole(stack: Stack, entries: int, rng: random.Random) -> Loaded:
    """Every entry in the table (BatchWriteItem), then RankIndex.rebuild."""
    board = new_board()
    top = max(1, entries // 10)
    plays = [
        _play(_player_id(n), board.leaderboard_id, rng.randint(0, top), rng)
        for n in range(1, entries + 1)
    ]
    started = time.perf_counter()
    await load_with_batch_writes(stack.db, board, plays)
    load_seconds = time.perf_counter() - started
    log(f"[{entries:,}] table loaded in {load_seconds:.1f} s; rebuilding the index ...")
    started = time.perf_counter()
    built = await stack.index.rebuild(stack.db, board.leaderboard_id)
    index_seconds = time.perf_counter() - started
    if built != entries:
        raise BenchError(f"the rebuild indexed {built} entries, not {entries}")
    scores = {p.player_id: p.score for p in plays}
    data = BoardData(
        item=board.model_copy(update={"entry_count": entries}),
        entries=entries,
        probes=list(scores),
        scores=scores,
        sorted_scores=sorted(scores.values()),
    )
    return Loaded(
        data,
        "BatchWriteItem (every entry)",
        load_seconds,
        "RankIndex.rebuild",
        index_seconds,
        1 + 5 * entries,
    )


async def load_direct(stack: Stack, entries: int, probes: int, rng: random.Random) -> Loaded:
    """The index loaded directly into Redis for every entry; the board item and the probes'
    items in the table, consistent with it; then the board's state set to ready."""
    board = new_board()
    width, order = board.score_width, board.sort_order
    top = max(1, entries // 10)
    now_ms = _now_ms()
    scores = [rng.randint(0, top) for _ in range(entries)]
    attained = [
        _EPOCH + timedelta(milliseconds=now_ms - rng.randrange(TIE_SPREAD_MS)) for _ in scores
    ]
    zset, meta, state, _ = board_keys(stack.table, board.leaderboard_id)

    started = time.perf_counter()
    for start in range(0, entries, REDIS_CHUNK):
        part = range(start, min(entries, start + REDIS_CHUNK))
        members = {i: member(tie_value(attained[i]), _player_id(i + 1)) for i in part}
        async with stack.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(zset, {members[i]: int(rank_value(scores[i], width, order)) for i in part})
            pipe.hset(meta, mapping={_player_id(i + 1): f"1|{members[i]}" for i in part})
            await pipe.execute()
    index_seconds = time.perf_counter() - started
    log(f"[{entries:,}] index loaded into Redis in {index_seconds:.1f} s; writing the table ...")

    started = time.perf_counter()
    await create_leaderboard(stack.db, board)
    chosen = sorted(rng.sample(range(entries), min(probes, entries)))
    items: list[dict[str, Any]] = []
    for i in chosen:
        play = _play(_player_id(i + 1), board.leaderboard_id, scores[i], rng)
        items.extend(bulk_items(board, play, attained[i], new_session_id()))
    await batch_write(stack.db, items)
    pk, sk = board_key(board.leaderboard_id)
    await stack.db.client.update_item(
        TableName=stack.db.table,
        Key=serialize({"pk": pk, "sk": sk}),
        UpdateExpression="SET entryCount = :count",
        ConditionExpression="attribute_exists(pk)",
        ExpressionAttributeValues=serialize({":count": entries}),
    )
    load_seconds = time.perf_counter() - started
    await stack.redis.set(state, "ready")

    probe_scores = {_player_id(i + 1): scores[i] for i in chosen}
    data = BoardData(
        item=board.model_copy(update={"entry_count": entries}),
        entries=entries,
        probes=list(probe_scores),
        scores=probe_scores,
        sorted_scores=sorted(scores),
    )
    return Loaded(
        data,
        f"board item + {len(chosen):,} probes' items (BatchWriteItem)",
        load_seconds,
        "loaded directly into Redis",
        index_seconds,
        1 + len(items),
    )


# -- measuring -----------------------------------------------------------------------------


def percentiles(samples: Sequence[float]) -> tuple[float, float, float]:
    """p50, p95 and p99 (inclusive method, as bench.measure)."""
    if len(samples) == 1:
        return samples[0], samples[0], samples[0]
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49], cuts[94], cuts[98]


async def ask_rank(
    http: aiohttp.ClientSession, url: str, board: BoardData, player_id: str
) -> dict[str, Any]:
    data = await post_graphql(
        http, url, RANK_QUERY % board.item.leaderboard_id, {"p": player_id}, key=None
    )
    rank: dict[str, Any] | None = (data.get("player") or {}).get("rank")
    if rank is None:
        raise BenchError(f"no rank for {player_id}: {json.dumps(data)}")
    return rank


async def _zcount_stats(redis: Redis) -> tuple[int, int]:
    stats: dict[str, Any] = await redis.info("commandstats")
    zcount = stats.get("cmdstat_zcount", {})
    return int(zcount.get("calls", 0)), int(zcount.get("usec", 0))


async def measure_index(
    stack: Stack,
    http: aiohttp.ClientSession,
    board: BoardData,
    *,
    requests: int,
    warmup: int,
    rng: random.Random,
) -> RankLatency:
    """The rank query to the index instance for random probes, one at a time, each answer
    checked; each request alternates with its raw counterpart (:func:`raw_rank`) on the same
    probe, swapping which goes first on every iteration."""
    samples: list[float] = []
    raw: list[float] = []
    patterns: Counter[str] = Counter()
    exact = calls = 0
    before = (0, 0)
    for i in range(warmup + requests):
        if i == warmup:
            before = await _zcount_stats(stack.redis)
        player = rng.choice(board.probes)
        expected = board.expected(player)
        for via_service in (True, False) if i % 2 == 0 else (False, True):
            stack.index_calls.reset()
            started = time.perf_counter()
            if via_service:
                rank = await ask_rank(http, stack.index_url, board, player)
            else:
                raw_answer = await raw_rank(stack, board, player)
            elapsed = (time.perf_counter() - started) * 1000
            if i < warmup:
                continue
            if not via_service:
                raw.append(elapsed)
                if raw_answer != expected["rank"]:
                    raise BenchError(f"raw rank of {player}: {raw_answer}, expected {expected}")
                continue
            samples.append(elapsed)
            snapshot = stack.index_calls.snapshot()
            patterns[format_calls(snapshot)] += 1
            calls += sum(snapshot.values())
            if rank == expected:
                exact += 1
            else:
                log(f"  index: {player} got {rank}, expected {expected}")
    after = await _zcount_stats(stack.redis)
    zcalls, zusec = after[0] - before[0], after[1] - before[1]

    lookups: list[float] = []
    for _ in range(requests):
        player = rng.choice(board.probes)
        started = time.perf_counter()
        await index_lookup(stack, board, player)
        lookups.append((time.perf_counter() - started) * 1000)

    p50, p95, p99 = percentiles(samples)
    raw_p50, _, raw_p99 = percentiles(raw)
    lookup_p50, _, lookup_p99 = percentiles(lookups)
    return RankLatency(
        source="index",
        requests=requests,
        p50_ms=p50,
        p95_ms=p95,
        p99_ms=p99,
        mean_ms=statistics.fmean(samples),
        calls=dict(patterns.most_common()),
        calls_per_request=calls / requests,
        exact=exact,
        raw_p50_ms=raw_p50,
        raw_p99_ms=raw_p99,
        zcount_calls=zcalls,
        zcount_server_us=zusec / zcalls if zcalls else 0.0,
        lookup_p50_ms=lookup_p50,
        lookup_p99_ms=lookup_p99,
    )


async def measure_count(
    stack: Stack,
    http: aiohttp.ClientSession,
    board: BoardData,
    *,
    requests: int,
    warmup: int,
    rng: random.Random,
) -> tuple[RankLatency, Contract]:
    """The rank query to the COUNT instance for random probes, one at a time, each answer
    checked; the index instance is asked for the same probe right after (untimed) and the two
    answers compared. A request that fails (a COUNT over a large board can outlast the app's
    DynamoDB read timeout) is counted, not fatal."""
    samples: list[float] = []
    patterns: Counter[str] = Counter()
    exact = same = both_exact = failed = calls = 0
    for i in range(warmup + requests):
        player = rng.choice(board.probes)
        expected = board.expected(player)
        stack.count_calls.reset()
        started = time.perf_counter()
        try:
            rank = await ask_rank(http, stack.count_url, board, player)
        except (BenchError, aiohttp.ClientError, TimeoutError) as error:
            if i >= warmup:
                failed += 1
                log(f"  COUNT: {player} failed: {error}")
            continue
        elapsed = (time.perf_counter() - started) * 1000
        if i < warmup:
            continue
        samples.append(elapsed)
        snapshot = stack.count_calls.snapshot()
        patterns[format_calls(snapshot)] += 1
        calls += sum(snapshot.values())
        exact += rank == expected
        from_index = await ask_rank(http, stack.index_url, board, player)
        if from_index == rank:
            same += 1
            both_exact += rank == expected
        else:
            log(f"  contract: {player} index {from_index} != COUNT {rank}")
    p50, p95, p99 = percentiles(samples) if samples else (float("nan"),) * 3
    latency = RankLatency(
        source="COUNT",
        requests=requests,
        p50_ms=p50,
        p95_ms=p95,
        p99_ms=p99,
        mean_ms=statistics.fmean(samples) if samples else float("nan"),
        calls=dict(patterns.most_common()),
        calls_per_request=calls / len(samples) if samples else float("nan"),
        exact=exact,
        failed=failed,
    )
    return latency, Contract(sample=len(samples), same=same, exact=both_exact)


async def raw_rank(stack: Stack, board: BoardData, player_id: str) -> int:
    """The calls a rank request makes, sent from the benchmark's process: the player (GetItem),
    then the index's lookup of the player's indexed entry and its rank (one round trip)."""
    await get_player(stack.db, player_id)
    return await index_lookup(stack, board, player_id)


async def index_lookup(stack: Stack, board: BoardData, player_id: str) -> int:
    """The index's answer for the player's entry: :meth:`RankIndex.ranks`, one round trip."""
    board_id = board.item.leaderboard_id
    found = await stack.index.ranks({board_id: [(player_id, None)]})
    answer = (found or {}).get(board_id, [None])[0]
    if answer is None:
        raise BenchError(f"the index declined to rank {player_id} on {board_id}")
    return answer.better + 1


async def measure_lag(
    stack: Stack, http: aiohttp.ClientSession, board: BoardData, count: int, rng: random.Random
) -> LagResult:
    """submitScore mutations improving probes' entries, one at a time: how long after each
    response the index holds the new entry."""
    _, meta, _, _ = board_keys(stack.table, board.item.leaderboard_id)
    zset = board_keys(stack.table, board.item.leaderboard_id)[0]
    players = rng.sample(board.probes, min(count, len(board.probes)))
    top = max(1, board.entries // 10)
    lags: list[float] = []
    submits: list[float] = []
    timed_out = score_checked = 0
    for n in range(count):
        player = players[n % len(players)]
        score = min(board.scores[player] + rng.randint(1, top), board.item.max_score)
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
            raw = await stack.redis.hget(meta, player)
            text = raw.decode() if isinstance(raw, bytes) else None
            if text is not None and int(text.split("|", 1)[0]) >= version:
                lags.append((time.perf_counter() - answered) * 1000)
                held = text.split("|", 1)[1]
                break
            await asyncio.sleep(POLL_SECONDS)
        if held is None:
            timed_out += 1
            continue
        indexed = await stack.redis.zscore(zset, held)
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


# -- one size, and the run -----------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    requests: int
    warmup: int
    count_requests: int
    count_warmup: int
    probes: int
    bulk_max: int
    count_max: int
    lag_submissions: int


async def bench_size(
    endpoint_url: str, redis_url: str, entries: int, options: Options, rng: random.Random
) -> SizeResult:
    """One board of ``entries`` on a fresh table, served with and without the index."""
    began = time.perf_counter()
    load_before = os.getloadavg()[0]
    table = f"bench-ranks-{entries}-{uuid.uuid4().hex[:8]}"
    async with rank_stack(endpoint_url, redis_url, table) as stack:
        if entries <= options.bulk_max:
            log(f"[{entries:,}] writing every entry into the table ...")
            loaded = await load_whole(stack, entries, rng)
        else:
            loaded = await load_direct(stack, entries, options.probes, rng)
        board = loaded.board
        sync_seconds = await wait_in_sync(stack)
        log(f"[{entries:,}] projector caught up {sync_seconds:.1f} s after the index build")
        used_memory = int((await stack.redis.info("memory"))["used_memory"])

        whole = entries <= options.bulk_max
        count_skipped: str | None = None
        if not whole:
            count_skipped = "not measured: the table holds only the probes' entries"
        elif entries > options.count_max:
            count_skipped = f"not measured: above --count-max {options.count_max:,}"
        latencies: list[RankLatency] = []
        contract: Contract | None = None
        async with aiohttp.ClientSession() as http:
            index = await measure_index(
                stack, http, board, requests=options.requests, warmup=options.warmup, rng=rng
            )
            log(
                f"[{entries:,}] index: p50 {index.p50_ms:.2f} ms, p99 {index.p99_ms:.2f} ms,"
                f" {index.exact}/{index.requests} exact"
            )
            latencies.append(index)
            if count_skipped is None:
                count, contract = await measure_count(
                    stack,
                    http,
                    board,
                    requests=options.count_requests,
                    warmup=options.count_warmup,
                    rng=rng,
                )
                log(
                    f"[{entries:,}] COUNT: p50 {count.p50_ms:.2f} ms, p99 {count.p99_ms:.2f} ms,"
                    f" {count.exact}/{count.requests} exact, {count.failed} failed;"
                    f" index = COUNT on {contract.same}/{contract.sample}"
                )
                latencies.append(count)
            lag: LagResult | None = None
            if options.lag_submissions:
                lag = await measure_lag(stack, http, board, options.lag_submissions, rng)
                log(f"[{entries:,}] lag: p50 {lag.p50_ms:.1f} ms, p99 {lag.p99_ms:.1f} ms")
        if whole:
            checked = await stack.index.verify(stack.db, board.item.leaderboard_id)
            verified = (
                f"index equals table ({checked.entries:,} entries)"
                if checked.ok
                else f"DIFFERS: {len(checked.missing)} missing, {len(checked.extra)} extra,"
                f" {len(checked.wrong_score)} wrong score"
            )
        else:
            verified = "not run (the table holds only the probes)"
    return SizeResult(
        entries=entries,
        load_method=loaded.load_method,
        load_seconds=loaded.load_seconds,
        index_method=loaded.index_method,
        index_seconds=loaded.index_seconds,
        sync_seconds=sync_seconds,
        table_items=loaded.table_items,
        redis_used_memory=used_memory,
        latencies=latencies,
        count_skipped=count_skipped,
        contract=contract,
        lag=lag,
        verified=verified,
        total_seconds=time.perf_counter() - began,
        load_average=(load_before, os.getloadavg()[0]),
    )


async def _redis_version(url: str) -> str:
    client = Redis.from_url(url)
    try:
        info: dict[str, Any] = await client.info("server")
        return str(info.get("redis_version", "unknown"))
    finally:
        await client.aclose()


def run(
    sizes: Sequence[int], options: Options, seed: int
) -> tuple[list[SizeResult], dict[str, Any]]:
    """Every board size in turn, each with its own in-memory DynamoDB Local and redis-server;
    the results, and the machine they ran on. (In one DynamoDB Local, writes to a second table
    with a stream slow down with the number of records in the first one's stream.)"""
    rng = random.Random(seed)
    results: list[SizeResult] = []
    machine: dict[str, Any] = {}
    for entries in sizes:
        with DynamoDBLocal(default_cache_dir()) as local, EmbeddedRedis() as redis:
            if not machine:
                machine = machine_info(local)
                machine["redis"] = asyncio.run(_redis_version(redis.url))
            result = asyncio.run(bench_size(local.endpoint_url, redis.url, entries, options, rng))
        results.append(result)
    return results, machine


# -- the report ----------------------------------------------------------------------------


def _calls(latency: RankLatency, shown: int = 3) -> str:
    """The most common call patterns with how often, and the mean number of calls."""
    patterns = list(latency.calls.items())
    text = ", ".join(f"{pattern} ({n})" for pattern, n in patterns[:shown])
    if len(patterns) > shown:
        text += f", {len(patterns) - shown} more patterns"
    return f"{text}; mean {latency.calls_per_request:.1f} calls"


def report(
    machine: Mapping[str, Any],
    options: Options,
    results: Sequence[SizeResult],
    total_seconds: float,
) -> str:
    """The whole report in Markdown."""
    lines = [
        "# Rank index: rank through GraphQL from the Redis index and from the table's COUNT",
        "",
        *machine_lines(machine),
        f"- Redis {machine['redis']} (EmbeddedRedis, in memory), on the same machine; one"
        " process serves both app instances, runs the projector and drives the requests",
        f"- Query: `{RANK_QUERY % 'bench'}` over HTTP on loopback, one request at a time,"
        f" random probe players: {options.requests} measured requests to the index instance"
        f" after {options.warmup} unrecorded ones (each size starts a fresh, cold DynamoDB"
        f" Local), {options.count_requests} to the COUNT instance after"
        f" {options.count_warmup}; scores uniform in 0..N/10 (many ties)",
        f"- Targets: exact rank at 1,000,000 entries with p50 under 5 ms through GraphQL;"
        f" stream lag p99 under 1 s (the index answers only while its projector caught up"
        f" within {MAX_LAG_MS:,} ms)",
        "",
        "## Rank latency",
        "",
        "| entries | source | p50 ms | p95 ms | p99 ms | exact | DynamoDB calls / request"
        " | raw p50 / p99 ms | ZCOUNT server µs | index lookup p50 / p99 ms |",
        "|--:|---|--:|--:|--:|--:|---|--:|--:|--:|",
    ]
    for r in results:
        for lat in r.latencies:
            extra = (
                f"{lat.raw_p50_ms:.2f} / {lat.raw_p99_ms:.2f} | {lat.zcount_server_us:.1f} |"
                f" {lat.lookup_p50_ms:.2f} / {lat.lookup_p99_ms:.2f}"
                if lat.source == "index"
                else "- | - | -"
            )
            lines.append(
                f"| {r.entries:,} | {lat.source} | {lat.p50_ms:.2f} | {lat.p95_ms:.2f} |"
                f" {lat.p99_ms:.2f} | {lat.exact}/{lat.requests}"
                f"{f' ({lat.failed} failed)' if lat.failed else ''} | {_calls(lat)} | {extra} |"
            )
        if r.count_skipped:
            lines.append(
                f"| {r.entries:,} | COUNT | - | - | - | - | {r.count_skipped} | - | - | - |"
            )
    lines += [
        "",
        "exact: answers equal to the rank computed from the generated scores (rank, total and"
        " percentile). Raw: the same calls (GetItem player, then `RankIndex.ranks`) sent from"
        " the benchmark's process without HTTP and GraphQL, alternating with the requests on the"
        " same probes. ZCOUNT server µs: the Redis server's mean time per ZCOUNT over the"
        " measured phase (`INFO commandstats`). Index lookup: `RankIndex.ranks` alone (the"
        " heartbeat and one script reading state, meta hash, ZSCORE, ZCOUNT and ZCARD, in one"
        " pipeline), timed from the benchmark's process.",
        "",
        "## Contract: the same probes asked of both instances",
        "",
        "Each probe measured against the COUNT instance is asked of the index instance too.",
        "",
        "| entries | probes | index = COUNT | both = expected |",
        "|--:|--:|--:|--:|",
    ]
    for r in results:
        if r.contract is None:
            lines.append(f"| {r.entries:,} | - | - | - (no COUNT: {r.count_skipped}) |")
        else:
            c = r.contract
            lines.append(f"| {r.entries:,} | {c.sample} | {c.same} | {c.exact} |")
    lines += [
        "",
        "## Stream lag: submitScore response to the entry in the index",
        "",
        "| entries | submissions | p50 ms | p95 ms | p99 ms | max ms | timed out"
        " | score in index | submitScore p50 ms |",
        "|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in results:
        if r.lag is None:
            continue
        g = r.lag
        lines.append(
            f"| {r.entries:,} | {g.submissions} | {g.p50_ms:.1f} | {g.p95_ms:.1f} |"
            f" {g.p99_ms:.1f} | {g.max_ms:.1f} | {g.timed_out} | {g.score_checked} |"
            f" {g.submit_p50_ms:.1f} |"
        )
    lines += [
        "",
        "Each mutation improves a probe's entry; the lag runs from its response until the"
        " index's meta hash holds the entry's new version (polled every"
        f" {POLL_SECONDS * 1000:.0f} ms); the projector polls the stream every 100 ms.",
        "",
        "## Set-up",
        "",
        "| entries | table | table s | items | index | index s | in sync after s"
        " | Redis used_memory MB | verify | size total s | load avg start / end |",
        "|--:|---|--:|--:|---|--:|--:|--:|---|--:|--:|",
    ]
    for r in results:
        lines.append(
            f"| {r.entries:,} | {r.load_method} | {r.load_seconds:.1f} | {r.table_items:,} |"
            f" {r.index_method} | {r.index_seconds:.1f} | {r.sync_seconds:.1f} |"
            f" {r.redis_used_memory / 2**20:.0f} | {r.verified} | {r.total_seconds:.1f} |"
            f" {r.load_average[0]:.1f} / {r.load_average[1]:.1f} |"
        )
    lines += ["", *_verdict(results), "", f"Total run time: {total_seconds:.1f} s."]
    return "\n".join(lines)


def _verdict(results: Sequence[SizeResult]) -> list[str]:
    lines = ["## Against the targets", ""]
    largest = max(results, key=lambda r: r.entries)
    index = next((lat for lat in largest.latencies if lat.source == "index"), None)
    if index is not None:
        met = index.p50_ms < 5 and index.exact == index.requests
        lines.append(
            f"- Rank at {largest.entries:,} entries through GraphQL: p50 {index.p50_ms:.2f} ms,"
            f" {index.exact}/{index.requests} exact: {'met' if met else 'NOT met'}"
            " (target: exact, p50 under 5 ms)"
        )
    lags = [r.lag for r in results if r.lag is not None]
    if lags:
        worst = max(g.p99_ms for g in lags)
        met = worst < 1000 and not any(g.timed_out for g in lags)
        lines.append(
            f"- Stream lag p99, worst over the sizes: {worst:.1f} ms:"
            f" {'met' if met else 'NOT met'} (target: under 1 s)"
        )
    return lines


def write_results(
    out: Path,
    *,
    machine: Mapping[str, Any],
    settings: Mapping[str, Any],
    results: Sequence[SizeResult],
    total_seconds: float,
    markdown: str,
) -> None:
    """``rank_index.json`` (every number) and ``rank_index.md`` (the printed report)."""
    out.mkdir(parents=True, exist_ok=True)
    document = {
        "machine": machine,
        "settings": settings,
        "sizes": [asdict(r) for r in results],
        "total_seconds": round(total_seconds, 1),
    }
    (out / "rank_index.json").write_text(json.dumps(document, indent=2) + "\n")
    (out / "rank_index.md").write_text(markdown + "\n")
    log(f"wrote {out / 'rank_index.json'} and {out / 'rank_index.md'}")


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.rank_index",
        description="Rank latency through GraphQL from the Redis rank index and from the"
        " table's COUNT, and the stream's lag to the index.",
    )
    parser.add_argument(
        "--entries",
        type=int,
        nargs="+",
        default=[10_000, 100_000, 1_000_000],
        help="board sizes",
    )
    parser.add_argument(
        "--requests", type=int, default=300, help="measured requests to the index instance"
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=200,
        help="unrecorded requests to the index instance first (each size starts a cold JVM)",
    )
    parser.add_argument(
        "--count-requests",
        type=int,
        default=50,
        help="measured requests to the COUNT instance (one takes seconds at 100,000 entries)",
    )
    parser.add_argument(
        "--count-warmup", type=int, default=5, help="unrecorded requests to the COUNT instance"
    )
    parser.add_argument(
        "--bulk-max",
        type=int,
        default=100_000,
        help="largest board written whole into the table; larger ones are loaded into Redis",
    )
    parser.add_argument(
        "--count-max", type=int, default=100_000, help="largest board measured with COUNT"
    )
    parser.add_argument(
        "--probes", type=int, default=2_000, help="players in the table of a directly loaded board"
    )
    parser.add_argument(
        "--lag-submissions", type=int, default=200, help="submissions timed to the index"
    )
    parser.add_argument("--seed", type=int, default=42, help="seed of every random choice")
    parser.add_argument("--out", type=Path, default=Path("bench/results"), help="output folder")
    args = parser.parse_args(argv)
    if min(*args.entries, args.requests, args.count_requests, args.probes) < 1:
        parser.error("--entries, --requests, --count-requests and --probes must be positive")
    if args.warmup < 0 or args.count_warmup < 0:
        parser.error("--warmup and --count-warmup must not be negative")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark as the command line ``argv`` asks; the exit status."""
    args = _parse(argv)
    options = Options(
        requests=args.requests,
        warmup=args.warmup,
        count_requests=args.count_requests,
        count_warmup=args.count_warmup,
        probes=args.probes,
        bulk_max=args.bulk_max,
        count_max=args.count_max,
        lag_submissions=args.lag_submissions,
    )
    started = time.perf_counter()
    results, machine = run(args.entries, options, args.seed)
    total = time.perf_counter() - started
    markdown = report(machine, options, results, total)
    print(markdown, flush=True)
    write_results(
        args.out,
        machine=machine,
        settings={"entries": args.entries, "seed": args.seed, **asdict(options)},
        results=results,
        total_seconds=total,
        markdown=markdown,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
