"""The floor of the mixed workload sends, for every kind of request, exactly the DynamoDB calls
the service sends for it, and answers what the service answers (real DynamoDB Local and
Redis, one loaded table, the rank index in sync), on boards of one partition and on
write-sharded boards."""

from __future__ import annotations

import random
import uuid
from collections import Counter
from typing import Any

from bench.core.load.floor import FloorCalls
from bench.core.load.loadgen import MIX, WorkerPlan, kinds
from bench.core.loading import load_boards_with_batch_writes
from bench.core.workload import PROFILE_BOARDS, new_boards, plays
from dynamo.reads import query_items
from dynamo.scores import SCORE
from tests.conftest import Indexed, each_layout

PLAYERS = 60


async def _loaded(indexed: Indexed) -> WorkerPlan:
    db = indexed.api.db
    boards = [b.model_copy(update={"partitions": indexed.api.partitions}) for b in new_boards()]
    loaded = await load_boards_with_batch_writes(
        db, boards, plays(PLAYERS, random.Random(3), extra_boards=True)
    )
    for board in boards:
        await indexed.index.rebuild(db, board.leaderboard_id)
    await indexed.projector.drain()
    return WorkerPlan(
        url="",
        api_key="",
        clients=1,
        first_client=0,
        start_at=0.0,
        warmup_seconds=0.0,
        duration_seconds=0.0,
        seed=1,
        players=[p.player_id for p in loaded],
        profile_players=[p.player_id for p in loaded if p.board_ids == PROFILE_BOARDS],
        top_score=PLAYERS // 3,
    )


def _spent(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    return {name: n for name, n in (Counter(after) - Counter(before)).items() if n}


@each_layout
async def test_each_kind_sends_the_service_s_own_dynamodb_calls(indexed: Indexed) -> None:
    plan = await _loaded(indexed)
    floor = FloorCalls(indexed.api.db, indexed.index)
    sends = {
        "leaderboard page": floor.leaderboard_page,
        "profile page": floor.profile_page,
        "around me": floor.around_me,
        "sessions": floor.sessions,
        "rank": floor.rank,
        "submitScore": floor.submit_score,
    }
    assert set(sends) == {name for name, _ in MIX}
    for name, kind in kinds(plan).items():
        # One request of each kind (a first one: the service's response cache cannot answer
        # it), then its raw calls with the same variables (a submission with another id).
        service_vars = kind.variables(random.Random(1))
        raw_vars = kind.variables(random.Random(2 if name == "submitScore" else 1))
        await indexed.projector.drain()
        before = indexed.api.calls
        body: dict[str, Any] = await indexed.api.raw(kind.query, service_vars)
        served = _spent(before, indexed.api.calls)
        assert "errors" not in body, (name, body)
        assert kind.check(body["data"]) is None, (name, body)
        await indexed.projector.drain()
        before = indexed.api.calls
        assert await sends[name](raw_vars) is None, name
        assert _spent(before, indexed.api.calls) == served, (name, raw_vars)


async def test_a_raw_submission_writes_the_play(indexed: Indexed) -> None:
    plan = await _loaded(indexed)
    floor = FloorCalls(indexed.api.db, indexed.index)
    player = plan.profile_players[0]
    top = PLAYERS  # above every loaded score: the play improves the player's entry
    variables = {
        "playerId": player,
        "gameId": "arena",
        "score": top,
        "durationSec": 60,
        "submissionId": str(uuid.uuid4()),
        "leaderboardIds": list(PROFILE_BOARDS),
    }
    assert await floor.submit_score(variables) is None
    for board in PROFILE_BOARDS:
        best = await query_items(
            indexed.api.db,
            key_condition="pk = :pk AND begins_with(sk, :prefix)",
            values={":pk": SCORE.pk.fill(leaderboard_id=board), ":prefix": SCORE.sk.prefix},
            limit=1,
        )
        assert best[0]["playerId"]["S"] == player
        assert int(best[0]["score"]["N"]) == top
    data = await indexed.api.gql(
        "query($p: ID!) { player(id: $p) { gamesPlayed sessions(first: 1) { edges { node {"
        " score } } } } }",
        {"p": player},
    )
    assert data["player"]["gamesPlayed"] == 2
    assert data["player"]["sessions"]["edges"][0]["node"]["score"] == top
