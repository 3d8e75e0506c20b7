"""A player's sums stay within their GraphQL types: a play that would overflow them is refused
and writes nothing, and a sum stored past them (before that rule) never breaks a read."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from botocore.exceptions import ClientError

from dynamo.errors import LeaderboardError, Subject
from dynamo.items import now, serialize
from dynamo.play_player import count_play
from dynamo.play_writes import _raise_for_cancellation
from dynamo.players import MAX_GAMES_PLAYED, MAX_LIFETIME_SCORE, PLAYER
from dynamo.plays import Play
from dynamo.sessions import SESSION
from gql.scalars import MAX_LONG
from tests.conftest import Api, both_rules
from tests.scan import scan_items

BIG = 999_999_999_999_999

SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    improved session { id score player { id lifetimeScore gamesPlayed } }
    entries { leaderboardId score { score } }
    errors { code message field } } }"""

READS = """query { player(id: "p") { id lifetimeScore gamesPlayed }
    leaderboard(id: "wide") { id topScores(first: 10) { edges { node { score
        player { id lifetimeScore gamesPlayed } } } } }
    gameSessions(gameId: "g", first: 10) { edges { node { score
        player { id lifetimeScore } } } } }"""


def _play(score: int, *boards: str, **extra: Any) -> dict[str, Any]:
    return {
        "i": {
            "playerId": "p",
            "gameId": "g",
            "score": score,
            "leaderboardIds": list(boards),
            **extra,
        }
    }


async def _setup(api: Api) -> None:
    await api.create_player("p")
    await api.create_board("wide", scoreWidth=15)
    await api.create_board("other", scoreWidth=15)


def test_the_sum_bound_is_what_long_carries() -> None:
    assert MAX_LIFETIME_SCORE == MAX_LONG == BIG
    assert MAX_GAMES_PLAYED == 2**31 - 1


async def test_second_big_play_is_refused_and_writes_nothing(api: Api) -> None:
    await _setup(api)
    first = (await api.gql(SUBMIT, _play(BIG, "wide")))["submitScore"]
    assert first["errors"] == []
    assert first["session"]["player"] == {"id": "p", "lifetimeScore": BIG, "gamesPlayed": 1}

    before = await scan_items(api.db)
    api.reset_calls()
    body = await api.raw(SUBMIT, _play(BIG, "wide"))
    assert "errors" not in body
    second = body["data"]["submitScore"]
    assert [(e["code"], e["field"]) for e in second["errors"]] == [("SCORE_OUT_OF_RANGE", "score")]
    assert str(MAX_LIFETIME_SCORE) in second["errors"][0]["message"]
    assert "nothing was recorded" in second["errors"][0]["message"]
    assert second["session"] is None
    # The consistent read of the play (the player and its guard, and beside them the board)
    # finds the sum full: no transaction is even sent.
    assert api.calls == {"BatchGetItem": 1, "Query": 1}
    assert await scan_items(api.db) == before

    reads = await api.raw(READS)
    assert "errors" not in reads
    assert reads["data"]["player"] == {"id": "p", "lifetimeScore": BIG, "gamesPlayed": 1}
    assert [e["node"]["score"] for e in reads["data"]["leaderboard"]["topScores"]["edges"]] == [BIG]
    assert [
        e["node"]["player"]["lifetimeScore"] for e in reads["data"]["gameSessions"]["edges"]
    ] == [BIG]


async def test_a_play_that_fits_exactly_is_recorded(api: Api) -> None:
    await _setup(api)
    assert (await api.gql(SUBMIT, _play(BIG - 5, "wide")))["submitScore"]["errors"] == []
    fits = (await api.gql(SUBMIT, _play(5, "wide")))["submitScore"]
    assert fits["errors"] == []
    assert fits["session"]["player"]["lifetimeScore"] == BIG
    over = (await api.gql(SUBMIT, _play(1, "other")))["submitScore"]
    assert [e["code"] for e in over["errors"]] == ["SCORE_OUT_OF_RANGE"]
    # A zero play still fits: it adds nothing to the sum, one game to the count.
    zero = (await api.gql(SUBMIT, _play(0, "other")))["submitScore"]
    assert zero["errors"] == []
    assert zero["session"]["player"] == {"id": "p", "lifetimeScore": BIG, "gamesPlayed": 3}


async def test_multi_board_and_idempotent_plays_are_refused_whole(api: Api) -> None:
    await _setup(api)
    assert (await api.gql(SUBMIT, _play(BIG, "wide")))["submitScore"]["errors"] == []
    before = await scan_items(api.db)
    submission = "01JD0000000000000000000000"
    for _ in range(2):  # a repeat of a refused submission is refused again, not replayed
        refused = (await api.gql(SUBMIT, _play(7, "wide", "other", submissionId=submission)))[
            "submitScore"
        ]
        assert [(e["code"], e["field"]) for e in refused["errors"]] == [
            ("SCORE_OUT_OF_RANGE", "score")
        ]
        assert refused["entries"] is None or refused["entries"] == []
    assert await scan_items(api.db) == before


@both_rules
async def test_racing_plays_cannot_overflow_the_sum(instances: list[Api]) -> None:
    """Instances do not share their per-player queues: the plays race on the table, and the
    transaction's condition on the sum refuses every one but the first to commit."""
    await _setup(instances[0])
    results = await asyncio.gather(
        *(api.gql(SUBMIT, _play(BIG - 10, "wide")) for api in instances * 2)
    )
    codes = sorted(
        (r["submitScore"]["errors"][0]["code"] if r["submitScore"]["errors"] else "OK")
        for r in results
    )
    assert codes == ["OK"] + ["SCORE_OUT_OF_RANGE"] * 5
    player = (await instances[0].gql('{ player(id: "p") { lifetimeScore gamesPlayed } }'))["player"]
    assert player == {"lifetimeScore": BIG - 10, "gamesPlayed": 1}
    sessions = [i for i in await scan_items(instances[0].db) if SESSION.holds(i)]
    assert len(sessions) == 1


async def test_the_transaction_refuses_a_sum_raised_since_the_read(api: Api) -> None:
    """The condition itself, without the read's check: the player's Update item of a play,
    sent after the sum was raised by another writer, cancels the transaction with the old
    item, which the play reports as SCORE_OUT_OF_RANGE."""
    await _setup(api)
    sub = Play(player_id="p", game_id="g", score=10, leaderboard_ids=("wide",))
    update = count_play(api.db.table, sub, now())
    await _set_sums(api, BIG - 9, 1)
    with pytest.raises(ClientError) as cancelled:
        await api.db.client.transact_write_items(TransactItems=[update])  # type: ignore[list-item]
    assert cancelled.value.response["CancellationReasons"][0]["Code"] == "ConditionalCheckFailed"
    with pytest.raises(LeaderboardError) as refused:
        _raise_for_cancellation(cancelled.value, ["player"], sub)
    assert (refused.value.code, refused.value.subject) == ("SCORE_OUT_OF_RANGE", Subject.SCORE)
    player = (await api.gql('{ player(id: "p") { lifetimeScore } }'))["player"]
    assert player == {"lifetimeScore": BIG - 9}


async def _set_sums(api: Api, lifetime: int, games: int) -> None:
    await api.db.client.update_item(
        TableName=api.db.table,
        Key=serialize(PLAYER.key_attributes(player_id="p")),
        UpdateExpression="SET lifetimeScore = :s, gamesPlayed = :g",
        ExpressionAttributeValues=serialize({":s": lifetime, ":g": games}),
    )


async def test_sums_stored_past_their_types_read_clamped(api: Api) -> None:
    await _setup(api)
    assert (await api.gql(SUBMIT, _play(5, "wide")))["submitScore"]["errors"] == []
    # Data written before plays were bounded: twice the largest Long, and a count past Int.
    await _set_sums(api, 2 * BIG, 2**40)
    reads = await api.raw(READS)
    assert "errors" not in reads, reads["errors"]
    clamped = {"id": "p", "lifetimeScore": BIG, "gamesPlayed": MAX_GAMES_PLAYED}
    assert reads["data"]["player"] == clamped
    [top] = reads["data"]["leaderboard"]["topScores"]["edges"]
    assert top["node"] == {"score": 5, "player": clamped}
    [session] = reads["data"]["gameSessions"]["edges"]
    assert session["node"]["player"]["lifetimeScore"] == BIG
    # Such a player can still play nothing more that adds to the sum, and is told so.
    over = (await api.gql(SUBMIT, _play(1, "wide")))["submitScore"]
    assert [e["code"] for e in over["errors"]] == ["SCORE_OUT_OF_RANGE"]


async def test_a_committed_play_repeated_with_a_full_sum_answers_as_recorded(api: Api) -> None:
    """The repeat of a recorded submission replays its result even though the sum it filled
    leaves no room: a committed play never answers as an error."""
    await _setup(api)
    submission = "01JD0000000000000000000001"
    first = (await api.gql(SUBMIT, _play(BIG, "wide", "other", submissionId=submission)))[
        "submitScore"
    ]
    assert first["errors"] == []
    before = await scan_items(api.db)
    repeat = (await api.gql(SUBMIT, _play(BIG, "wide", "other", submissionId=submission)))[
        "submitScore"
    ]
    assert repeat["errors"] == []
    assert repeat["session"]["id"] == first["session"]["id"]
    assert repeat["session"]["player"] == {"id": "p", "lifetimeScore": BIG, "gamesPlayed": 1}
    assert repeat["entries"] == first["entries"]
    assert await scan_items(api.db) == before
