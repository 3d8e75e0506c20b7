"""Reward tiers, claims and the results feed through the API; a FINAL board answering from its
final standings once its live entries are gone; and the last push of a board that closes."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from dynamo.claims import get_claims
from dynamo.closing import close_board
from dynamo.db import Db
from dynamo.items import serialize
from dynamo.leaderboards import LEADERBOARD, LeaderboardItem
from dynamo.rewards import RewardTier, TierKind
from dynamo.scores import ScoreItem, score_item
from edge.auth import fingerprint
from leaderboard.app import FEED
from leaderboard.config import Settings
from tests.boards import T0, Entry, oracle, write_board
from tests.conftest import (
    ADMIN_KEYS,
    API_KEYS,
    WAIT,
    Api,
    Indexed,
    _serve,
    both_rules,
    each_layout,
)
from tests.test_final_results import AFTER, END, SCORES
from tests.test_subscriptions import _subscribed

TIERS: list[dict[str, Any]] = [
    {"kind": "RANKS", "rewardId": "gold", "fromRank": 1, "toRank": 1},
    {"kind": "RANKS", "rewardId": "silver", "quantity": 2, "fromRank": 2, "toRank": 3},
    {"kind": "TOP_PERCENT", "rewardId": "top.half", "topPercent": 50},
    {"kind": "SCORE", "rewardId": "badge:30", "quantity": 5, "score": 30},
]
"""The tiers of the tests' boards, as a client sends them."""
STORED_TIERS = [
    RewardTier(kind=TierKind.RANKS, reward_id="gold", from_rank=1, to_rank=1),
    RewardTier(kind=TierKind.RANKS, reward_id="silver", quantity=2, from_rank=2, to_rank=3),
    RewardTier(kind=TierKind.TOP_PERCENT, reward_id="top.half", top_percent=Decimal(50)),
    RewardTier(kind=TierKind.SCORE, reward_id="badge:30", quantity=5, score=30),
]
"""TIERS as the table holds them (for boards written by tests/boards.py)."""
REWARDS = {0: ("gold", 1), 1: ("silver", 2), 2: ("top.half", 1), 3: ("badge:30", 5)}
TIER_FIELDS = "kind rewardId quantity fromRank toRank topPercent score"

CREATE = f"""mutation($i: CreateLeaderboardInput!) {{ createLeaderboard(input: $i) {{
    leaderboard {{ id rewardTiers {{ {TIER_FIELDS} }} }} errors {{ code field }} }} }}"""
CREATE_FAMILY = f"""mutation($i: CreateLeaderboardFamilyInput!) {{
    createLeaderboardFamily(input: $i) {{
      family {{ id rewardTiers {{ {TIER_FIELDS} }} }} errors {{ code field }} }} }}"""
CLAIM = """mutation($b: ID!, $p: ID!) { claimReward(input: {leaderboardId: $b, playerId: $p}) {
    claim { leaderboardId playerId reward { id quantity } claimedAt }
    errors { code field message } } }"""
STANDINGS = """query($b: ID!) { leaderboard(id: $b) { status finalStandings(first: 100) {
    edges { node { player { id } position rank tier reward { id quantity }
      claim { claimedAt reward { id } } } } } } }"""
FEED_PAGE = """query($first: Int, $after: String) { resultFeed(first: $first, after: $after) {
    edges { cursor node { leaderboard { id } player { id } position rank total } }
    pageInfo { hasNextPage endCursor } } }"""


def _read_back(tier: dict[str, Any]) -> dict[str, Any]:
    """A tier as the API gives it back: every field, those its kind does not take null,
    quantity 1 by default, a percentage as a float."""
    found = {
        "quantity": 1,
        "fromRank": None,
        "toRank": None,
        "topPercent": None,
        "score": None,
        **tier,
    }
    if found["quantity"] is None:
        found["quantity"] = 1
    if found["topPercent"] is not None:
        found["topPercent"] = float(found["topPercent"])
    return found


async def _create(api: Api, board_id: str, tiers: Any, **fields: Any) -> dict[str, Any]:
    data = await api.gql(
        CREATE,
        {
            "i": {
                "id": board_id,
                "name": board_id,
                "period": "SEASON",
                "rewardTiers": tiers,
                **fields,
            }
        },
    )
    payload: dict[str, Any] = data["createLeaderboard"]
    return payload


async def _season(api: Api, board_id: str, scores: list[int], *, players: bool = True) -> None:
    """A board with TIERS ending at END on which player p<i> played scores[i] (at T0 + i s)
    through the API, closed; the clock at AFTER."""
    api.clock.set(T0)
    created = await _create(api, board_id, TIERS, endsAt=END.isoformat(), scoreWidth=3)
    assert created["errors"] == [], created
    for i, score in enumerate(scores):
        if players:
            await api.create_player(f"p{i}")
        api.clock.set(T0 + timedelta(seconds=i + 1))
        assert (await api.submit(f"p{i}", board_id, score))["errors"] == []
    await close_board(api.db, board_id, at=AFTER)
    api.clock.set(AFTER)


async def _tiered_board(
    db: Db, board_id: str, scores: list[int], **kwargs: Any
) -> tuple[LeaderboardItem, list[Entry]]:
    """tests/boards.py's board ending at END, with STORED_TIERS."""
    board, entries = await write_board(db, board_id, scores, ends_at=END, **kwargs)
    await db.client.update_item(
        TableName=db.table,
        Key=serialize(LEADERBOARD.key_attributes(leaderboard_id=board_id)),
        UpdateExpression="SET rewardTiers = :tiers",
        ExpressionAttributeValues=serialize({":tiers": [t.attributes() for t in STORED_TIERS]}),
    )
    return board, entries


async def _claim(api: Api, board_id: str, player_id: str, key: str | None = API_KEYS[0]) -> Any:
    body = await api.raw(CLAIM, {"b": board_id, "p": player_id}, key=key)
    assert "errors" not in body, body
    return body["data"]["claimReward"]


# Reward tiers


async def test_reward_tiers_round_trip_on_boards_and_families(api: Api) -> None:
    fine = [
        *TIERS,
        {"kind": "RANKS", "rewardId": "A-z_0.9:x", "fromRank": 11, "toRank": None},
        {"kind": "TOP_PERCENT", "rewardId": "p", "topPercent": 12.5, "quantity": 10**9},
        {"kind": "TOP_PERCENT", "rewardId": "q", "topPercent": 0.0001},
        {"kind": "TOP_PERCENT", "rewardId": "r", "topPercent": 100},
        {"kind": "SCORE", "rewardId": "s", "score": 999, "quantity": None},
        {"kind": "SCORE", "rewardId": "x" * 64, "score": 0},
    ]
    expected = [_read_back(t) for t in fine]
    created = await _create(api, "tiered", fine, scoreWidth=3)
    assert created == {"leaderboard": {"id": "tiered", "rewardTiers": expected}, "errors": []}
    data = await api.gql(f'{{ leaderboard(id: "tiered") {{ rewardTiers {{ {TIER_FIELDS} }} }} }}')
    assert data["leaderboard"]["rewardTiers"] == expected
    # The percentage is kept as the decimal written, not as a binary float.
    [board] = await _boards(api.db, "tiered")
    assert board.reward_tiers is not None
    percents = [t.top_percent for t in board.reward_tiers if t.top_percent is not None]
    assert [str(p) for p in percents] == ["50", "12.5", "0.0001", "100"]

    # None given, or none at all: an empty list.
    for board_id, given in (("plain", None), ("empty", [])):
        created = await _create(api, board_id, given)
        assert created == {"leaderboard": {"id": board_id, "rewardTiers": []}, "errors": []}
        [stored] = await _boards(api.db, board_id)
        assert stored.reward_tiers is None

    # A family's tiers are its boards'.
    family = await api.gql(
        CREATE_FAMILY,
        {"i": {"id": "duel", "name": "Duel", "period": "DAILY", "rewardTiers": TIERS}},
    )
    tiers = [_read_back(t) for t in TIERS]
    assert family["createLeaderboardFamily"] == {
        "family": {"id": "duel", "rewardTiers": tiers},
        "errors": [],
    }
    data = await api.gql(
        f"""{{ leaderboardFamily(id: "duel") {{ rewardTiers {{ {TIER_FIELDS} }}
            current {{ rewardTiers {{ {TIER_FIELDS} }} }} }} }}"""
    )
    assert data["leaderboardFamily"] == {"rewardTiers": tiers, "current": {"rewardTiers": tiers}}
    await api.create_player("ann")
    played = await api.gql(
        """mutation { submitScore(input: {playerId: "ann", familyIds: ["duel"], gameId: "g",
            score: 1}) { entries { leaderboard { id rewardTiers { rewardId } } }
            errors { code } } }"""
    )
    [entry] = played["submitScore"]["entries"]
    assert entry["leaderboard"]["rewardTiers"] == [{"rewardId": t["rewardId"]} for t in TIERS]


async def _boards(db: Db, *ids: str) -> list[LeaderboardItem]:
    from dynamo.leaderboards import get_leaderboards

    found = await get_leaderboards(db, list(ids), consistent=True, count=False)
    assert all(b is not None for b in found)
    return [b for b in found if b is not None]


def _rank(**fields: Any) -> dict[str, Any]:
    return {"kind": "RANKS", "rewardId": "r", "fromRank": 1, **fields}


def _percent(**fields: Any) -> dict[str, Any]:
    return {"kind": "TOP_PERCENT", "rewardId": "t", "topPercent": 10, **fields}


def _score(**fields: Any) -> dict[str, Any]:
    return {"kind": "SCORE", "rewardId": "s", "score": 10, **fields}


MALFORMED: dict[str, list[dict[str, Any]]] = {
    "too many tiers": [_rank(fromRank=n, toRank=n) for n in range(1, 22)],
    "RANKS without fromRank": [_rank(fromRank=None)],
    "RANKS from 0": [_rank(fromRank=0)],
    "RANKS ending before they begin": [_rank(fromRank=3, toRank=2)],
    "RANKS with a topPercent": [_rank(topPercent=10)],
    "RANKS with a score": [_rank(score=10)],
    "TOP_PERCENT without topPercent": [_percent(topPercent=None)],
    "TOP_PERCENT of 0": [_percent(topPercent=0)],
    "TOP_PERCENT below 0": [_percent(topPercent=-5)],
    "TOP_PERCENT above 100": [_percent(topPercent=100.5)],
    "TOP_PERCENT of 5 decimals": [_percent(topPercent=0.00001)],
    "TOP_PERCENT of 5 decimals above 1": [_percent(topPercent=12.34567)],
    "TOP_PERCENT with a fromRank": [_percent(fromRank=1)],
    "TOP_PERCENT with a toRank": [_percent(toRank=3)],
    "TOP_PERCENT with a score": [_percent(score=3)],
    "SCORE without score": [_score(score=None)],
    "SCORE over the width": [_score(score=1000)],
    "SCORE with a fromRank": [_score(fromRank=1)],
    "SCORE with a topPercent": [_score(topPercent=1)],
    "an empty rewardId": [_rank(rewardId="")],
    "a rewardId too long": [_rank(rewardId="x" * 65)],
    "a rewardId with a space": [_rank(rewardId="gold coin")],
    "a rewardId with a '#'": [_rank(rewardId="gold#1")],
    "a rewardId not ASCII": [_rank(rewardId="gold\u00e9")],
    "a quantity of 0": [_rank(quantity=0)],
    "a negative quantity": [_rank(quantity=-1)],
    "a quantity too large": [_rank(quantity=10**9 + 1)],
    "a bad tier after good ones": [*TIERS[:3], _score(score=999), _rank(quantity=0)],
}


@pytest.mark.parametrize("tiers", MALFORMED.values(), ids=MALFORMED.keys())
async def test_every_malformed_tier_is_refused_and_nothing_is_written(
    api: Api, tiers: list[dict[str, Any]]
) -> None:
    refused = await _create(api, "bad", tiers, scoreWidth=3)
    assert refused == {
        "leaderboard": None,
        "errors": [{"code": "INVALID_ARGUMENT", "field": "rewardTiers"}],
    }
    family = await api.gql(
        CREATE_FAMILY,
        {"i": {"id": "fam", "name": "f", "period": "DAILY", "scoreWidth": 3, "rewardTiers": tiers}},
    )
    assert family["createLeaderboardFamily"] == {
        "family": None,
        "errors": [{"code": "INVALID_ARGUMENT", "field": "rewardTiers"}],
    }
    gone = await api.raw(
        '{ b: leaderboard(id: "bad") { id } f: leaderboardFamily(id: "fam") { id } }'
    )
    assert gone["data"] == {"b": None, "f": None}


async def test_a_refusal_names_the_tier_and_why(api: Api) -> None:
    data = await api.gql(
        """mutation($t: [RewardTierInput!]) { createLeaderboard(input: {id: "b", name: "b",
            period: GLOBAL, scoreWidth: 3, rewardTiers: $t}) { errors { message } } }""",
        {"t": [_rank(), _score(score=1000)]},
    )
    [error] = data["createLeaderboard"]["errors"]
    assert error["message"].startswith("rewardTiers[1]: ")
    assert "999" in error["message"]


# Results and claims


async def test_a_closed_boards_results_carry_their_tier_and_reward(api: Api) -> None:
    # 7 entrants: top 50% is the first ceil(3.5) = 4 ranks; the SCORE tier takes 30 or more.
    await _season(api, "cup", [50, 40, 40, 30, 30, 20, 10])
    data = await api.gql(STANDINGS, {"b": "cup"})
    assert data["leaderboard"]["status"] == "FINAL"
    found = [
        (n["player"]["id"], n["rank"], n["tier"], n["reward"], n["claim"])
        for n in (e["node"] for e in data["leaderboard"]["finalStandings"]["edges"])
    ]
    gold, silver, half = ({"id": i, "quantity": q} for i, q in (REWARDS[0], REWARDS[1], REWARDS[2]))
    assert found == [
        ("p0", 1, 0, gold, None),
        ("p1", 2, 1, silver, None),
        ("p2", 2, 1, silver, None),  # ties share a rank, and with it a tier
        ("p3", 4, 2, half, None),
        ("p4", 4, 2, half, None),
        ("p5", 6, None, None, None),
        ("p6", 7, None, None, None),
    ]
    result = await api.gql(
        """{ leaderboard(id: "cup") { finalResult(playerId: "p3") { tier reward { id } } }
             player(id: "p4") { results { edges { node { tier reward { id quantity } } } } } }"""
    )
    assert result["leaderboard"]["finalResult"] == {"tier": 2, "reward": {"id": "top.half"}}
    assert result["player"]["results"]["edges"] == [{"node": {"tier": 2, "reward": half}}]


async def test_claim_reward_once_then_already_claimed_with_the_first_claims_time(
    api: Api,
) -> None:
    await _season(api, "cup", [50, 40, 30, 10])
    first_at = AFTER + timedelta(minutes=1)
    api.clock.set(first_at)
    api.reset_calls()
    claimed = await _claim(api, "cup", "p1")
    assert claimed == {
        "claim": {
            "leaderboardId": "cup",
            "playerId": "p1",
            "reward": {"id": "silver", "quantity": 2},
            "claimedAt": first_at.isoformat(),
        },
        "errors": [],
    }
    # The board read consistently, the result's consistent GetItem, the claim's transaction.
    assert api.calls == {"Query": 1, "GetItem": 1, "TransactWriteItems": 1}
    (stored,) = await get_claims(api.db, [("p1", "cup")], consistent=True)
    assert stored is not None
    assert stored.actor == fingerprint(API_KEYS[0])

    # Claimed again, later, with an admin key: the first claim, and nothing written.
    api.clock.set(first_at + timedelta(hours=1))
    again = await _claim(api, "cup", "p1", key=ADMIN_KEYS[0])
    assert again["claim"] == claimed["claim"]
    [error] = again["errors"]
    assert (error["code"], error["field"]) == ("ALREADY_CLAIMED", None)
    assert first_at.isoformat().replace("+00:00", "Z") in error["message"]
    assert await get_claims(api.db, [("p1", "cup")], consistent=True) == [stored]

    # The result shows its claim; the others none. A result with no reward reads no claim.
    api.reset_calls()
    data = await api.gql(STANDINGS, {"b": "cup"})
    claims = {
        e["node"]["player"]["id"]: e["node"]["claim"]
        for e in data["leaderboard"]["finalStandings"]["edges"]
    }
    assert claims == {
        "p0": None,
        "p1": {"claimedAt": first_at.isoformat(), "reward": {"id": "silver"}},
        "p2": None,
        "p3": None,
    }
    # The board, the standings, their players; the claims of the three results with a reward
    # in one batch (p3, 4th of 4 with 10 points, is in no tier).
    assert api.calls == {"Query": 2, "BatchGetItem": 2}


async def test_nothing_to_claim_is_no_reward_and_writes_nothing(api: Api) -> None:
    await _season(api, "cup", [50, 40, 30, 10])
    await api.create_player("zed")
    await _create(api, "running", TIERS, endsAt=(AFTER + timedelta(days=1)).isoformat())
    await _create(api, "ended", TIERS, endsAt=END.isoformat())
    api.clock.set(T0)
    await api.create_board("forever")
    for board_id in ("running", "forever"):
        assert (await api.submit("p0", board_id, 50))["errors"] == []
    api.clock.set(AFTER)
    cases = [
        ("cup", "p3", "has a final result with no reward"),  # in no tier
        ("cup", "zed", "has no final result"),  # no entry
        ("running", "p0", "is LIVE, not FINAL"),
        ("ended", "p0", "is CLOSING, not FINAL"),
        ("forever", "p0", "is LIVE, not FINAL"),
    ]
    for board_id, player, why in cases:
        refused = await _claim(api, board_id, player)
        assert refused["claim"] is None
        [error] = refused["errors"]
        assert (error["code"], error["field"]) == ("NO_REWARD", "playerId"), (board_id, player)
        assert why in error["message"], error
    pairs = [(p, b) for b, p, _ in cases]
    assert await get_claims(api.db, pairs, consistent=True) == [None] * len(pairs)

    unknown = await _claim(api, "nope", "p0")
    assert unknown["errors"][0]["code"] == "LEADERBOARD_NOT_FOUND"
    assert unknown["errors"][0]["field"] == "leaderboardId"
    for board_id, player, field in (("a#b", "p0", "leaderboardId"), ("cup", "a b", "playerId")):
        bad = await _claim(api, board_id, player)
        assert [(e["code"], e["field"]) for e in bad["errors"]] == [("INVALID_ID", field)]

    # A key is needed: without one, nothing is read or written.
    api.reset_calls()
    body = await api.raw(CLAIM, {"b": "cup", "p": "p0"}, key=None)
    assert [e["extensions"]["code"] for e in body["errors"]] == ["UNAUTHENTICATED"]
    assert body["data"] is None
    assert api.calls == {}
    assert await get_claims(api.db, [("p0", "cup")], consistent=True) == [None]


@both_rules
async def test_eight_concurrent_claims_on_three_instances_grant_once(instances: list[Api]) -> None:
    api = instances[0]
    await _tiered_board(api.db, "cup", [900, 800, 700, 600, 10])
    await close_board(api.db, "cup", at=AFTER)
    for n, instance in enumerate(instances):
        instance.clock.set(AFTER + timedelta(seconds=n + 1))

    claims = await asyncio.gather(*(_claim(instances[n % 3], "cup", "p000") for n in range(8)))
    codes = sorted(tuple(e["code"] for e in c["errors"]) for c in claims)
    assert codes == [(), *[("ALREADY_CLAIMED",)] * 7]
    [first] = [c["claim"] for c in claims if not c["errors"]]
    assert first["reward"] == {"id": "gold", "quantity": 1}
    # Every answer shows the one claim written, with its time.
    assert all(c["claim"] == first for c in claims)
    (stored,) = await get_claims(api.db, [("p000", "cup")], consistent=True)
    assert stored is not None
    assert stored.claimed_at.isoformat() == first["claimedAt"]
    stamp = first["claimedAt"].replace("+00:00", "Z")
    assert all(stamp in e["message"] for c in claims for e in c["errors"])


# The results feed


async def test_the_result_feed_pages_across_boards_and_resumes(api: Api) -> None:
    sizes = {"first": 5, "empty": 0, "second": 3, "third": 4}
    for n, (board_id, size) in enumerate(sizes.items()):
        await write_board(api.db, board_id, list(range(size, 0, -1)), ends_at=END, players=n == 0)
        await close_board(api.db, board_id, at=AFTER + timedelta(minutes=n))
    expected = [(b, f"p{i:03d}", i + 1) for b, size in sizes.items() for i in range(size)]
    api.clock.set(AFTER + timedelta(hours=1))
    for first in (1, 3, 100):
        found: list[tuple[str, str, int]] = []
        after = None
        while True:
            data = await api.gql(FEED_PAGE, {"first": first, "after": after})
            page = data["resultFeed"]
            nodes = [e["node"] for e in page["edges"]]
            found += [(n["leaderboard"]["id"], n["player"]["id"], n["position"]) for n in nodes]
            if not page["pageInfo"]["hasNextPage"]:
                break
            assert len(nodes) == first
            after = page["pageInfo"]["endCursor"]
        assert found == expected, first
    # Any edge's cursor resumes right after it, across boards.
    whole = (await api.gql(FEED_PAGE, {"first": 100}))["resultFeed"]
    cursor = whole["edges"][4]["cursor"]  # first's last result
    resumed = (await api.gql(FEED_PAGE, {"first": 2, "after": cursor}))["resultFeed"]
    assert [(e["node"]["leaderboard"]["id"], e["node"]["position"]) for e in resumed["edges"]] == [
        ("second", 1),
        ("second", 2),
    ]
    # A feed read to its end goes on, from its endCursor, with the boards closed since.
    end = whole["pageInfo"]["endCursor"]
    await write_board(api.db, "fourth", [2, 1], ends_at=END, players=False)
    await close_board(api.db, "fourth", at=AFTER + timedelta(minutes=10))
    later = (await api.gql(FEED_PAGE, {"after": end}))["resultFeed"]
    assert [(e["node"]["leaderboard"]["id"], e["node"]["position"]) for e in later["edges"]] == [
        ("fourth", 1),
        ("fourth", 2),
    ]
    # A board enters the feed 10 s after its close.
    api.clock.set(AFTER + timedelta(minutes=10, seconds=5))
    soon = (await api.gql(FEED_PAGE, {"after": end}))["resultFeed"]
    assert soon["edges"] == []
    assert soon["pageInfo"] == {"hasNextPage": False, "endCursor": None}


async def test_the_result_feed_needs_a_key_and_its_own_cursors(api: Api) -> None:
    await write_board(api.db, "season", SCORES, ends_at=END)
    await close_board(api.db, "season", at=AFTER)
    api.clock.set(AFTER + timedelta(minutes=1))
    api.reset_calls()
    body = await api.raw(FEED_PAGE, {}, key=None)
    assert [e["extensions"]["code"] for e in body["errors"]] == ["UNAUTHENTICATED"]
    assert body["data"] is None
    assert api.calls == {}
    admin = await api.raw(FEED_PAGE, {"first": 2}, key=ADMIN_KEYS[0])
    assert len(admin["data"]["resultFeed"]["edges"]) == 2

    standings = await api.gql(
        '{ leaderboard(id: "season") { finalStandings(first: 2) { pageInfo { endCursor } } } }'
    )
    other = standings["leaderboard"]["finalStandings"]["pageInfo"]["endCursor"]
    for after in ("garbage", other):
        body = await api.raw(FEED_PAGE, {"after": after})
        assert [
            (e["extensions"]["code"], e["extensions"].get("field")) for e in body["errors"]
        ] == [("INVALID_CURSOR", "after")]
    for first in (101, -1):
        body = await api.raw(FEED_PAGE, {"first": first})
        assert [e["extensions"] for e in body["errors"]] == [
            {"code": "INVALID_ARGUMENT", "field": "first"}
        ]


# A FINAL board answers from its final standings


async def _expire_live_entries(db: Db, board: LeaderboardItem, entries: list[Entry]) -> None:
    """Delete the board's Score items (BatchWriteItem), as their time to live would."""
    keys = []
    for e in entries:
        item = score_item(
            board,
            ScoreItem(
                leaderboard_id=board.leaderboard_id,
                player_id=e.player_id,
                score=e.score,
                attained_at=e.attained_at,
            ),
        )
        keys.append({"pk": item["pk"], "sk": item["sk"]})
    for i in range(0, len(keys), 25):
        request: Any = {
            db.table: [{"DeleteRequest": {"Key": serialize(k)}} for k in keys[i : i + 25]]
        }
        while request:
            response = await db.client.batch_write_item(RequestItems=request)
            request = response.get("UnprocessedItems") or {}


@each_layout
async def test_a_final_board_answers_from_its_results_once_its_entries_expire(
    api: Api, partitions: int
) -> None:
    board, entries = await write_board(api.db, "season", SCORES, partitions=partitions, ends_at=END)
    model = oracle(board, entries)  # (player, score, rank) in the board's order
    total = len(SCORES)
    await close_board(api.db, "season", at=AFTER)
    api.clock.set(AFTER)
    await _expire_live_entries(api.db, board, entries)
    live = await api.gql('{ leaderboard(id: "season") { status } }')
    assert live["leaderboard"]["status"] == "FINAL"

    api.reset_calls()
    data = await api.gql('{ leaderboard(id: "season") { entryCount } }')
    assert data["leaderboard"]["entryCount"] == total
    # The board's Query alone: its finalCount, whatever its partitions.
    assert api.calls == {"Query": 1}

    top = """query($after: String) { leaderboard(id: "season") {
        topScores(first: 5, after: $after) {
          edges { cursor node { score rank player { id name } } }
          pageInfo { hasNextPage endCursor } } } }"""
    found: list[tuple[str, int, int]] = []
    after = None
    while True:
        api.reset_calls()
        page = (await api.gql(top, {"after": after}))["leaderboard"]["topScores"]
        # The board's Query, one Query of its standings, their players in one batch.
        assert api.calls == {"Query": 2, "BatchGetItem": 1}
        found += [
            (e["node"]["player"]["id"], e["node"]["score"], e["node"]["rank"])
            for e in page["edges"]
        ]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert found == model
    # Its cursors are the final standings'.
    standings = await api.gql(
        '{ leaderboard(id: "season") { finalStandings(first: 5) { edges { cursor } } } }'
    )
    first_page = await api.gql(top, {"after": None})
    assert [e["cursor"] for e in first_page["leaderboard"]["topScores"]["edges"]] == [
        e["cursor"] for e in standings["leaderboard"]["finalStandings"]["edges"]
    ]

    ranks = {player: rank for player, _, rank in model}
    api.reset_calls()
    data = await api.gql(
        """{ leaderboard(id: "season") { rankOf(playerId: "p006") { rank total percentile
             score { score rank } } } }"""
    )
    assert data["leaderboard"]["rankOf"] == {
        "rank": ranks["p006"],
        "total": total,
        "percentile": 100.0 * (total - (ranks["p006"] - 1)) / total,
        "score": {"score": SCORES[6], "rank": ranks["p006"]},
    }
    # The board's Query and the result's GetItem.
    assert api.calls == {"Query": 1, "GetItem": 1}

    api.reset_calls()
    data = await api.gql(
        """{ leaderboard(id: "season") { ranksOf(playerIds: ["p003", "p005", "p012", "zed"]) {
             rank total score { score } } } }"""
    )
    assert data["leaderboard"]["ranksOf"] == [
        {"rank": ranks[p], "total": total, "score": {"score": SCORES[int(p[1:])]}}
        for p in ("p005", "p012", "p003")
    ]
    # The board's Query and the results in one BatchGetItem.
    assert api.calls == {"Query": 1, "BatchGetItem": 1}

    api.reset_calls()
    data = await api.gql(
        '{ player(id: "p001") { id rank(leaderboardId: "season") { rank total } } }'
    )
    assert data["player"] == {"id": "p001", "rank": {"rank": ranks["p001"], "total": total}}
    # The entry (none left) and the board at once, then the result: the player itself is not
    # read, its result proves it.
    assert api.calls == {"Query": 2, "GetItem": 1}

    api.reset_calls()
    data = await api.gql(
        """{ leaderboard(id: "season") { around(playerId: "p002", before: 2, after: 3) {
             rank total score { score player { id } } } } }"""
    )
    at = [p for p, _, _ in model].index("p002")
    window = model[max(0, at - 2) : at + 4]
    assert data["leaderboard"]["around"] == [
        {"rank": rank, "total": total, "score": {"score": score, "player": {"id": player}}}
        for player, score, rank in window
    ]
    # The board's Query, the result's GetItem, then one Query of the standings each way
    # and the window's players.
    assert api.calls == {"Query": 3, "GetItem": 1, "BatchGetItem": 1}
    data = await api.gql(
        '{ leaderboard(id: "season") { around(playerId: "zed", before: 0, after: 0) { rank } } }'
    )
    assert data["leaderboard"]["around"] is None
    edge = await api.gql(
        """{ leaderboard(id: "season") { top: around(playerId: "p005", before: 3, after: 0)
             { rank } last: around(playerId: "p003", before: 0, after: 3) { rank } } }"""
    )
    assert edge["leaderboard"] == {"top": [{"rank": 1}], "last": [{"rank": total}]}


# The final push


WATCH = """subscription { leaderboardChanged(leaderboardId: "b", first: 3) {
    leaderboardId entries { rank score player { id } } leaderboard { status } } }"""


async def _push(ws: Any) -> tuple[str, list[tuple[str, int, int]]]:
    message: dict[str, Any] = await ws.receive_json(timeout=WAIT)
    assert message["type"] == "next", message
    top = message["payload"]["data"]["leaderboardChanged"]
    entries = [(e["player"]["id"], e["score"], e["rank"]) for e in top["entries"]]
    return top["leaderboard"]["status"], entries


async def _completed(ws: Any) -> None:
    message: dict[str, Any] = await ws.receive_json(timeout=WAIT)
    assert message == {"id": "1", "type": "complete"}, message


async def _podium(api: Api) -> None:
    api.clock.set(T0)
    await api.create_board("b", endsAt=END.isoformat(), period="SEASON")
    for n, (p, s) in enumerate((("ann", 50), ("bob", 40), ("cat", 40), ("dan", 10))):
        await api.create_player(p)
        api.clock.set(T0 + timedelta(seconds=n + 1))
        assert (await api.submit(p, "b", s))["errors"] == []


async def test_a_board_that_closes_pushes_once_more_final_and_completes(indexed: Indexed) -> None:
    """The close changes the board's item; the change feed carries that change to the
    instance, whose subscriber reads the board FINAL, pushes it and completes."""
    api = indexed.api
    feed = api.http.app[FEED]
    async with asyncio.timeout(WAIT):
        while not feed.connected:  # noqa: ASYNC110 - a flag of the reader's, not an event
            await asyncio.sleep(0.02)
    await _podium(api)
    top = [("ann", 50, 1), ("bob", 40, 2), ("cat", 40, 2)]
    async with _subscribed(api, WATCH) as ws:
        assert await _push(ws) == ("LIVE", top)
        await close_board(api.db, "b", at=AFTER)
        api.clock.set(AFTER)
        await indexed.projector.drain()
        assert await _push(ws) == ("FINAL", top)
        await _completed(ws)


async def test_without_a_change_feed_the_refresh_brings_the_final_push(
    settings: Settings,
) -> None:
    """Without a change feed, the broker's refresh of a quiet board wakes its subscribers,
    which find the board FINAL. A subscription to a FINAL board whose live entries are gone
    sends its final standings' top once and completes."""
    async with _serve(replace(settings, subscription_refresh_seconds=1), None) as api:
        await _podium(api)
        top = [("ann", 50, 1), ("bob", 40, 2), ("cat", 40, 2)]
        async with _subscribed(api, WATCH) as ws:
            assert await _push(ws) == ("LIVE", top)
            await close_board(api.db, "b", at=AFTER)
            api.clock.set(AFTER)
            assert await _push(ws) == ("FINAL", top)
            await _completed(ws)
        [board] = await _boards(api.db, "b")
        entries = [
            Entry(p, s, T0 + timedelta(seconds=n + 1))
            for n, (p, s) in enumerate((("ann", 50), ("bob", 40), ("cat", 40), ("dan", 10)))
        ]
        await _expire_live_entries(api.db, board, entries)
        async with _subscribed(api, WATCH) as ws:
            assert await _push(ws) == ("FINAL", top)
            await _completed(ws)
