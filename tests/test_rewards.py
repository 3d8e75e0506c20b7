"""Reward tiers given at a board's close, and claims that grant each reward exactly once."""

from __future__ import annotations

import asyncio
import random
from datetime import timedelta
from decimal import Decimal

import pytest

from dynamo.claims import claim_reward, get_claims
from dynamo.closing import close_board
from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.items import serialize
from dynamo.leaderboards import LEADERBOARD, SortOrder
from dynamo.result_feed import result_feed
from dynamo.results import ResultItem, board_results
from dynamo.rewards import RewardTier, TierKind, tier_of
from tests.boards import T0, write_board
from tests.conftest import Api, both_rules, each_layout

END = T0 + timedelta(days=1)
AFTER = END + timedelta(minutes=5)

TIERS = [
    RewardTier(kind=TierKind.RANKS, from_rank=1, to_rank=1, reward_id="gold"),
    RewardTier(kind=TierKind.RANKS, from_rank=2, to_rank=3, reward_id="silver", quantity=2),
    RewardTier(kind=TierKind.TOP_PERCENT, top_percent=Decimal("10"), reward_id="top10"),
    RewardTier(kind=TierKind.SCORE, score=500, reward_id="badge", quantity=5),
]


def _model_tier(rank: int, total: int, score: int, order: SortOrder) -> int | None:
    """The first tier an entrant is in, written out case by case."""
    if rank == 1:
        return 0
    if 2 <= rank <= 3:
        return 1
    if rank <= max(1, -(-total // 10)):  # the first ceil(10% of total) ranks
        return 2
    good = score >= 500 if order is SortOrder.DESC else score <= 500
    return 3 if good else None


def test_each_kind_of_tier() -> None:
    assert [tier_of(TIERS, r, 50, 0, higher_is_better=True) for r in (1, 2, 3, 4, 5, 6)] == [
        0,
        1,
        1,
        2,
        2,
        None,
    ]
    # top 10% of 5 is the first rank alone; of 11, the first two ranks (ceil(1.1))
    top = [TIERS[2]]
    assert [tier_of(top, r, 5, 0, higher_is_better=True) for r in (1, 2)] == [0, None]
    assert [tier_of(top, r, 11, 0, higher_is_better=True) for r in (2, 3)] == [0, None]
    # a fractional share is exact: top 0.1% of 1,000 is the first rank
    tenth = [RewardTier(kind=TierKind.TOP_PERCENT, top_percent=Decimal("0.1"), reward_id="x")]
    assert [tier_of(tenth, r, 1000, 0, higher_is_better=True) for r in (1, 2)] == [0, None]
    # a score threshold counts as "at least as good": >= where higher is better, <= on ASC
    score = [TIERS[3]]
    assert tier_of(score, 40, 50, 500, higher_is_better=True) == 0
    assert tier_of(score, 40, 50, 499, higher_is_better=True) is None
    assert tier_of(score, 40, 50, 500, higher_is_better=False) == 0
    assert tier_of(score, 40, 50, 501, higher_is_better=False) is None


async def _tiered_board(api: Api, board_id: str, scores: list[int], **kwargs: object) -> None:
    await write_board(api.db, board_id, scores, ends_at=END, **kwargs)  # type: ignore[arg-type]
    await api.db.client.update_item(
        TableName=api.db.table,
        Key=serialize(LEADERBOARD.key_attributes(leaderboard_id=board_id)),
        UpdateExpression="SET rewardTiers = :tiers",
        ExpressionAttributeValues=serialize({":tiers": [t.attributes() for t in TIERS]}),
    )


async def _all_results(api: Api, board_id: str) -> list[ResultItem]:
    found: list[ResultItem] = []
    after = None
    while True:
        page = await board_results(api.db, board_id, 100, after)
        found.extend(page.items)
        if not page.has_next:
            return found
        after = page.end_cursor


@each_layout
async def test_results_carry_their_tier_and_reward_ties_included(api: Api, partitions: int) -> None:
    rng = random.Random(3)
    scores = [990, 990, 700, *(rng.randrange(300, 600, 10) for _ in range(57))]
    for order in (SortOrder.DESC, SortOrder.ASC):
        board_id = f"tiers-{order.value.lower()}"
        await _tiered_board(
            api,
            board_id,
            scores,
            order=order,
            partitions=partitions,
            players=order is SortOrder.DESC,
        )
        await close_board(api.db, board_id, at=AFTER)
        results = await _all_results(api, board_id)
        assert len(results) == len(scores)
        for r in results:
            tier = _model_tier(r.rank, r.total, r.score, order)
            assert r.tier == tier, r
            assert r.reward_id == (TIERS[tier].reward_id if tier is not None else None)
            assert r.reward_quantity == (TIERS[tier].quantity if tier is not None else None)
        if order is SortOrder.DESC:
            # the two tied at the top share rank 1 and gold; the next is 3rd: silver
            assert [(r.rank, r.reward_id) for r in results[:3]] == [
                (1, "gold"),
                (1, "gold"),
                (3, "silver"),
            ]


@both_rules
async def test_concurrent_claims_grant_once(instances: list[Api]) -> None:
    api = instances[0]
    await _tiered_board(api, "cup", [900, 800, 700, 600, 10])
    await close_board(api.db, "cup", at=AFTER)

    async def claim(n: int) -> tuple[bool, object]:
        outcome = await claim_reward(
            instances[n % 3].db,
            player_id="p000",
            leaderboard_id="cup",
            actor=f"k{n}",
            at=AFTER + timedelta(seconds=n),
        )
        return outcome.first, outcome.claim

    outcomes = await asyncio.gather(*(claim(n) for n in range(8)))
    firsts = [c for first, c in outcomes if first]
    assert len(firsts) == 1
    assert {c for _, c in outcomes} == {firsts[0]}  # every other call sees the first claim
    (stored,) = await get_claims(api.db, [("p000", "cup")], consistent=True)
    assert stored == firsts[0]
    assert stored is not None
    assert (stored.reward_id, stored.quantity) == ("gold", 1)

    # p004 (5th of 5, 10 points) is in no tier; p999 has no result: nothing to claim or write
    for player in ("p004", "p999"):
        with pytest.raises(LeaderboardError) as none:
            await claim_reward(api.db, player_id=player, leaderboard_id="cup", actor="k", at=AFTER)
        assert none.value.code is ErrorCode.NO_REWARD
    assert await get_claims(api.db, [("p004", "cup"), ("p999", "cup")]) == [None, None]


async def test_the_results_feed_goes_board_after_board_and_resumes(api: Api) -> None:
    """The feed lists every result of the boards closed SETTLE before, in close order and
    each board's order, and a cursor resumes it exactly, across boards."""
    sizes = {"first": 7, "empty": 0, "second": 5, "third": 3}
    for n, (board_id, size) in enumerate(sizes.items()):
        await write_board(api.db, board_id, list(range(size, 0, -1)), ends_at=END, players=n == 0)
        await close_board(api.db, board_id, at=AFTER + timedelta(minutes=n))
    expected = [(board_id, f"p{i:03d}") for board_id, size in sizes.items() for i in range(size)]
    late = AFTER + timedelta(hours=1)
    for first in (1, 4, 100):
        found: list[tuple[str, str]] = []
        after = None
        while True:
            page = await result_feed(api.db, first, after, at=late)
            found.extend((r.leaderboard_id, r.player_id) for r in page.items)
            if not page.has_next:
                break
            after = page.end_cursor
        assert found == expected, first
    # a board is in the feed only SETTLE after it closed
    soon = await result_feed(api.db, 100, None, at=AFTER + timedelta(minutes=3, seconds=5))
    assert {r.leaderboard_id for r in soon.items} == {"first", "second"}
