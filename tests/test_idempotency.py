"""Client submission ids: a repeated submission is recorded once and answered alike."""

from __future__ import annotations

import asyncio
from typing import Any

from dynamo.play_records import PLAY_RECORD
from dynamo.sessions import SESSION
from tests.conftest import Api, both_rules
from tests.scan import scan_items

SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    duplicate improved session { id submissionId } score { score attainedAt }
    entries { leaderboardId improved score { score } }
    errors { code field } } }"""
ULID = "01JD3Q8Z6X4M2K7N9P5R8T1V3W"
UUID = "3F2504E0-4F89-11D3-9A0C-0305E82C3301"


def _play(score: int, submission_id: str = ULID, **extra: Any) -> dict[str, Any]:
    return {
        "i": {
            "playerId": "ann",
            "leaderboardId": "b",
            "gameId": "g",
            "score": score,
            "submissionId": submission_id,
            **extra,
        }
    }


@both_rules
async def test_twenty_concurrent_repeats_record_once(instances: list[Api]) -> None:
    api = instances[0]
    await api.create_player("ann")
    await api.create_board("b", operator="INCREMENT")
    results = await asyncio.gather(*(instances[i % 3].gql(SUBMIT, _play(7)) for i in range(20)))
    payloads = [r["submitScore"] for r in results]
    assert all(p["errors"] == [] for p in payloads)
    assert sorted(p["duplicate"] for p in payloads) == [False] + [True] * 19
    first = next(p for p in payloads if not p["duplicate"])
    for p in payloads:
        assert p["session"] == {"id": first["session"]["id"], "submissionId": ULID}
        assert p["score"] == first["score"]
        assert p["entries"] == [{"leaderboardId": "b", "improved": True, "score": {"score": 7}}]
        assert p["improved"] is True

    player = await api.gql(
        '{ player(id: "ann") { gamesPlayed lifetimeScore '
        'bestScore(leaderboardId: "b") { score } } }'
    )
    assert player["player"] == {"gamesPlayed": 1, "lifetimeScore": 7, "bestScore": {"score": 7}}
    items = await scan_items(api.db)
    assert sum(1 for i in items if SESSION.holds(i)) == 1
    record = next(i for i in items if PLAY_RECORD.holds(i))
    assert (record["pk"], record["sk"]) == PLAY_RECORD.key(player_id="ann", submission_id=ULID)
    assert record["ttl"] > 0


async def test_reused_id_with_other_content_is_refused(api: Api) -> None:
    await api.create_player("ann")
    await api.create_board("b")
    assert (await api.gql(SUBMIT, _play(7, UUID)))["submitScore"]["errors"] == []
    before = await scan_items(api.db)
    for changed in (
        _play(8, UUID),
        _play(7, UUID.lower(), gameId="other"),
        _play(7, UUID, durationSec=5),
    ):
        payload = (await api.gql(SUBMIT, changed))["submitScore"]
        assert payload["errors"] == [{"code": "SUBMISSION_ID_REUSED", "field": "submissionId"}]
    same = (await api.gql(SUBMIT, _play(7, UUID.lower())))["submitScore"]
    assert same["duplicate"] is True
    assert same["session"]["submissionId"] == UUID.lower()
    assert len(await scan_items(api.db)) == len(before)


async def test_submission_ids_are_checked_and_scoped_to_the_player(api: Api) -> None:
    await api.create_player("ann")
    await api.create_player("bob")
    await api.create_board("b")
    bad = await api.gql(SUBMIT, _play(1, "not#an-id"))
    assert bad["submitScore"]["errors"] == [{"code": "INVALID_ID", "field": "submissionId"}]
    ann = await api.gql(SUBMIT, _play(1))
    bob = await api.gql(SUBMIT, _play(1, playerId="bob"))
    assert ann["submitScore"]["duplicate"] is False
    assert bob["submitScore"]["duplicate"] is False
