"""The close of a board whose period is over (dynamo/closing.py): final standings against an
independent model, ties included, on both layouts."""

from __future__ import annotations

import asyncio
import contextlib
import random
from datetime import datetime, timedelta
from typing import Any

import pytest

from dynamo.closing import close_board, due_boards
from dynamo.entry_guards import ENTRY_GUARD
from dynamo.errors import ErrorCode, LeaderboardError
from dynamo.items import stamp
from dynamo.leaderboards import BoardStatus, SortOrder, get_leaderboard
from dynamo.results import RESULT, ResultItem, board_results, get_results
from dynamo.scores import PARTITIONED_SCORE, SCORE
from soak.invariants import check_table
from tests.boards import T0, write_board
from tests.conftest import ADMIN_KEYS, Api, both_rules, each_layout
from tests.scan import scan_items

END = T0 + timedelta(days=1)
AFTER = END + timedelta(minutes=5)


def _model(scores: list[int], order: SortOrder) -> list[tuple[str, int, int, int]]:
    """(player, position, rank, score) in the board's order: better score first, then the
    earlier attainment (player p<i> attained at T0 + i s); rank = 1 + strictly better."""
    players = [(f"p{i:03d}", s, i) for i, s in enumerate(scores)]
    sign = -1 if order is SortOrder.DESC else 1
    ordered = sorted(players, key=lambda p: (sign * p[1], p[2]))
    found: list[tuple[str, int, int, int]] = []
    for position, (player, score, _) in enumerate(ordered, start=1):
        better = sum(1 for _, s, _ in players if sign * s < sign * score)
        found.append((player, position, better + 1, score))
    return found


@pytest.mark.slow
@each_layout
async def test_final_standings_are_the_models(api: Api, partitions: int) -> None:
    rng = random.Random(7)
    scores = [rng.randrange(0, 40) for _ in range(300)]  # many ties
    for order in (SortOrder.DESC, SortOrder.ASC):
        board_id = f"season-{order.value.lower()}"
        await write_board(
            api.db,
            board_id,
            scores,
            order,
            partitions=partitions,
            ends_at=END,
            players=order is SortOrder.DESC,
        )
    assert set(await due_boards(api.db, AFTER)) >= {"season-desc", "season-asc"}
    for order in (SortOrder.DESC, SortOrder.ASC):
        board_id = f"season-{order.value.lower()}"
        closed = await close_board(api.db, board_id, at=AFTER)
        assert closed.status(AFTER) is BoardStatus.FINAL
        assert closed.final_count == len(scores)
        results = sorted((await _results(api, board_id)).values(), key=lambda r: r.position)
        found = [(r.player_id, r.position, r.rank, r.score) for r in results]
        assert found == _model(scores, order)
        again = await close_board(api.db, board_id, at=AFTER)
        assert again.closed_at == closed.closed_at
    assert "season-desc" not in await due_boards(api.db, AFTER)
    board = await get_leaderboard(api.db, "season-desc")
    assert board is not None
    assert board.close_due is None


SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    score { score } errors { code message } } }"""
ADMIN = ADMIN_KEYS[0]


async def _closing_board(api: Api, board_id: str = "cup") -> None:
    await api.create_board(board_id, endsAt=stamp(END), startsAt=stamp(T0))


async def _results(api: Api, board_id: str) -> dict[str, ResultItem]:
    found: dict[str, ResultItem] = {}
    after = None
    while True:
        page = await board_results(api.db, board_id, 100, after)
        found.update((r.player_id, r) for r in page.items)
        if not page.has_next:
            return found
        after = page.end_cursor


async def _frozen_board(api: Api, board_id: str) -> list[dict[str, Any]]:
    """Every item of the board's partitions and its players' entry guards, once final."""
    return [
        i
        for i in await scan_items(api.db)
        if str(i.get("leaderboardId")) == board_id and not RESULT.holds(i)
    ]


@pytest.mark.slow
@each_layout
@both_rules
async def test_plays_racing_the_close_are_in_the_standings_or_refused(
    instances: list[Api],
) -> None:
    """Plays whose instances' clocks say the board is still open (a skewed clock, or a play
    in flight at endsAt) race its close: each one is acknowledged and in the final standings,
    or refused LEADERBOARD_CLOSED; none is written to the frozen board."""
    first = instances[0]
    players = [f"p{i:02d}" for i in range(18)]
    for p in players:
        await first.create_player(p)
    await _closing_board(first)
    for api in instances:
        api.clock.set(END - timedelta(minutes=1))
    for p in players[:12]:  # entered before the close; the six others enter during it
        assert (await first.submit(p, "cup", 10))["errors"] == []
    for api in instances:
        api.clock.set(END - timedelta(seconds=1))
    acknowledged: dict[str, int] = {p: 10 for p in players[:12]}
    refused: list[str] = []

    async def plays(player: str, n: int) -> None:
        for k in range(4):
            api = instances[(n + k) % len(instances)]
            answer = await api.submit(player, "cup", 100 + 10 * n + k)
            if answer["errors"]:
                assert [e["code"] for e in answer["errors"]] == ["LEADERBOARD_CLOSED"], answer
                refused.append(player)
            else:
                score = answer["score"]["score"]
                acknowledged[player] = max(acknowledged.get(player, 0), score)

    closing = asyncio.create_task(close_board(first.db, "cup", at=AFTER))
    await asyncio.gather(*(plays(p, n) for n, p in enumerate(players)))
    closed = await closing

    results = await _results(first, "cup")
    assert {p: r.score for p, r in results.items()} == acknowledged
    assert closed.final_count == len(acknowledged)
    assert sorted(r.position for r in results.values()) == list(range(1, len(results) + 1))
    items = await _frozen_board(first, "cup")
    scores = [i for i in items if SCORE.holds(i) or PARTITIONED_SCORE.holds(i)]
    assert len(scores) == len(acknowledged)
    assert all(i.get("frozen") for i in scores)
    guards = [i for i in items if ENTRY_GUARD.holds(i)]
    assert len(guards) == len(acknowledged)
    assert all(i.get("frozen") for i in guards)
    shards = [i for i in items if str(i["sk"]).startswith("#COUNT#")]
    assert len(shards) == 32 * closed.partitions
    assert all(i.get("frozen") for i in shards)
    assert sum(int(i.get("entryCount", 0)) for i in shards) == len(acknowledged)

    # Once final, a play stamped before the end is refused and writes nothing at all.
    before = await scan_items(first.db)
    late = await instances[1].submit(players[0], "cup", 999)
    assert [e["code"] for e in late["errors"]] == ["LEADERBOARD_CLOSED"]
    assert await scan_items(first.db) == before


@each_layout
async def test_moderation_after_the_close(api: Api) -> None:
    """A removal is refused on a closed board, a ban leaves the player's final standing,
    and an erasure takes the player's entry and result (the others keep theirs)."""
    for p in ("ann", "bob", "cat"):
        await api.create_player(p)
    await _closing_board(api)
    api.clock.set(END - timedelta(hours=1))
    for p, s in (("ann", 90), ("bob", 80), ("cat", 70)):
        assert (await api.submit(p, "cup", s))["errors"] == []
    await close_board(api.db, "cup", at=AFTER)
    api.clock.set(AFTER)

    removal = await api.raw(
        """mutation($i: RemoveEntryInput!) { removeEntry(input: $i) { errors { code } } }""",
        {"i": {"leaderboardId": "cup", "playerId": "ann", "reason": "cheated"}},
        key=ADMIN,
    )
    assert removal["data"]["removeEntry"]["errors"] == [{"code": "LEADERBOARD_CLOSED"}]
    ban = await api.raw(
        """mutation($i: BanPlayerInput!) { banPlayer(input: $i) {
            action { removedCount } errors { code } } }""",
        {"i": {"playerId": "bob", "reason": "cheated"}},
        key=ADMIN,
    )
    assert ban["data"]["banPlayer"] == {"action": {"removedCount": 0}, "errors": []}
    erase = await api.raw(
        """mutation($i: ErasePlayerInput!) { erasePlayer(input: $i) {
            complete errors { code } } }""",
        {"i": {"playerId": "cat"}},
        key=ADMIN,
    )
    assert erase["data"]["erasePlayer"] == {"complete": True, "errors": []}

    results = await _results(api, "cup")
    assert {p: (r.rank, r.total) for p, r in results.items()} == {"ann": (1, 3), "bob": (2, 3)}
    assert await get_results(api.db, [("cat", "cup")]) == [None]
    problems = await check_table(api.db.client, api.db.table)
    assert problems == [], "\n".join(map(str, problems))


@pytest.mark.slow
@each_layout
async def test_two_closes_at_once_and_an_interrupted_close(api: Api, partitions: int) -> None:
    """Closes cut off at random moments, then two at once, leave one result per entrant,
    the model's."""
    rng = random.Random(11)
    scores = [rng.randrange(0, 25) for _ in range(400)]
    await write_board(api.db, "cut", scores, partitions=partitions, ends_at=END)
    for _ in range(5):
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(close_board(api.db, "cut", at=AFTER), rng.uniform(0.05, 0.8))
    one, two = await asyncio.gather(
        close_board(api.db, "cut", at=AFTER), close_board(api.db, "cut", at=AFTER)
    )
    assert one.closed_at == two.closed_at is not None
    results = await _results(api, "cut")
    model = _model(scores, SortOrder.DESC)
    assert sorted((r.player_id, r.position, r.rank, r.score) for r in results.values()) == sorted(
        model
    )
    assert {r.total for r in results.values()} == {len(scores)}


async def test_a_board_closes_only_once_its_period_and_grace_are_over(api: Api) -> None:
    await _closing_board(api)
    with pytest.raises(LeaderboardError) as early:
        await close_board(api.db, "cup", at=END + timedelta(seconds=30))
    assert early.value.code is ErrorCode.INVALID_ARGUMENT
    assert await due_boards(api.db, END) == ["cup"]
    await api.create_board("forever")
    with pytest.raises(LeaderboardError) as endless:
        await close_board(api.db, "forever", at=AFTER)
    assert endless.value.code is ErrorCode.INVALID_ARGUMENT
    with pytest.raises(LeaderboardError) as missing:
        await close_board(api.db, "nowhere", at=AFTER)
    assert missing.value.code is ErrorCode.LEADERBOARD_NOT_FOUND
    closed = await close_board(api.db, "cup", at=AFTER)
    assert closed.final_count == 0
    assert closed.status(AFTER) is BoardStatus.FINAL
    assert closed.ttl is None  # kept for ever: no archiveDays


FAMILY = """mutation($i: CreateLeaderboardFamilyInput!) { createLeaderboardFamily(input: $i) {
    family { id } errors { code } } }"""
TOP = """query($id: ID!) { leaderboard(id: $id) { status entryCount
    topScores(first: 50) { edges { node { score player { id } } } } } }"""


@each_layout
async def test_the_season_goes_on_while_a_board_closes(api: Api) -> None:
    """While yesterday's board of a daily family closes, today's takes plays at once, and
    yesterday's reads stay what its entries were; once final, it answers the same."""
    day_one, day_two = "2026-11-21", "2026-11-22"
    data = await api.gql(
        FAMILY, {"i": {"id": "duel", "name": "Duel", "period": "DAILY", **api.board_fields}}
    )
    assert data["createLeaderboardFamily"]["errors"] == []
    players = [f"q{i:02d}" for i in range(30)]
    for p in players:
        await api.create_player(p)
    api.clock.set(f"{day_one}T20:00:00+00:00")
    for n, p in enumerate(players):
        answer = await api.gql(
            SUBMIT,
            {"i": {"playerId": p, "familyIds": ["duel"], "gameId": "g", "score": 10 * (n % 7)}},
        )
        assert answer["submitScore"]["errors"] == []
    yesterday = f"duel.daily.{day_one}"
    before = (await api.gql(TOP, {"id": yesterday}))["leaderboard"]
    api.clock.set(f"{day_two}T00:05:00+00:00")
    closing = asyncio.create_task(
        close_board(api.db, yesterday, at=datetime.fromisoformat(f"{day_two}T00:05:00+00:00"))
    )
    seen: list[dict[str, Any]] = []
    while not closing.done():
        today = await api.gql(
            SUBMIT,
            {
                "i": {
                    "playerId": players[len(seen) % 30],
                    "familyIds": ["duel"],
                    "gameId": "g",
                    "score": 5,
                }
            },
        )
        assert today["submitScore"]["errors"] == []
        seen.append((await api.gql(TOP, {"id": yesterday}))["leaderboard"])
    await closing
    after = (await api.gql(TOP, {"id": yesterday}))["leaderboard"]
    assert seen, "the close ended before a single read"
    for view in seen:
        assert view["status"] in ("CLOSING", "FINAL")
        assert (view["entryCount"], view["topScores"]) == (
            before["entryCount"],
            before["topScores"],
        )
    assert after["status"] == "FINAL"
    assert (after["entryCount"], after["topScores"]) == (before["entryCount"], before["topScores"])
    today_board = (await api.gql(TOP, {"id": f"duel.daily.{day_two}"}))["leaderboard"]
    assert today_board["status"] == "LIVE"
    assert today_board["entryCount"] == min(len(seen), 30)
