"""Faults between the service and DynamoDB: throttling, 5xx answers, dropped connections and
delays injected by a proxy (faultproxy/) in front of the real DynamoDB Local.

The contract checked on the table itself (read directly, not through the proxy): every
acknowledged submission is recorded exactly once; a submission refused with any error but
OUTCOME_UNKNOWN left nothing; an OUTCOME_UNKNOWN one is there at most once, and sending it
again with the same submissionId records it exactly once. The players' statistics, entries and
entry counts always agree with the sessions recorded.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
from botocore.retries.standard import ExponentialBackoff

from dynamo.db import Db
from dynamo.entry_guards import ENTRY_GUARD
from dynamo.leaderboards import LEADERBOARD
from dynamo.moderation import MODERATION, remove_entry
from dynamo.play_writes import MAX_ATTEMPTS
from dynamo.players import PLAYER
from dynamo.scores import SCORE
from dynamo.sessions import SESSION
from faultproxy import Fault, FaultProxy, Rule
from leaderboard.backend import LOCAL_CREDENTIALS, open_table
from leaderboard.config import Settings
from soak.invariants import check_table as check_invariants
from tests import test_bans as _bans
from tests import test_erasure as _erasure
from tests.conftest import API_KEYS, WAIT, Api, _serve
from tests.scan import entry_counts, scan_items

ATTEMPTS = 4
"""botocore's attempts per call in the service's client config, the first one included."""
TRANSACT = "TransactWriteItems"
PLAYERS = [f"p{n}" for n in range(5)]
BEST, TOTAL = "best", "total"

SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    duplicate session { id } errors { code message } } }"""


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's standard backoff (up to 1, 2 and 4 s) scaled down a hundred times: the same
    attempts and jitter, in milliseconds, so that the file runs in seconds."""
    original = ExponentialBackoff.delay_amount

    def quicker(self: ExponentialBackoff, context: Any) -> float:
        return float(original(self, context)) / 100

    monkeypatch.setattr(ExponentialBackoff, "delay_amount", quicker)


@pytest.fixture
async def api(settings: Settings, proxy: FaultProxy) -> AsyncIterator[Api]:
    """The service, talking to DynamoDB through the proxy."""
    async with _serve(replace(settings, endpoint_url=proxy.url), None) as served:
        yield served


@pytest.fixture
async def direct(settings: Settings) -> AsyncIterator[Db]:
    """The same table, straight from DynamoDB Local (no proxy)."""
    async with open_table(settings, LOCAL_CREDENTIALS) as db:
        yield db


@dataclass
class Outcome:
    player: str
    score: int
    submission_id: str | None
    status: int
    session_id: str | None = None
    """Set when the submission was acknowledged."""
    code: str | None = None
    """The error's code when it was not."""
    message: str = ""
    duplicate: bool = False


async def post(api: Api, query: str, variables: dict[str, Any] | None = None) -> Any:
    response = await api.http.post(
        "/graphql",
        json={"query": query, "variables": variables},
        headers={"Authorization": f"Bearer {API_KEYS[0]}"},
    )
    return response.status, await response.json()


async def submit(api: Api, player: str, score: int, submission_id: str | None) -> Outcome:
    play: dict[str, Any] = {
        "playerId": player,
        "leaderboardIds": [BEST, TOTAL],
        "gameId": "g",
        "score": score,
    }
    if submission_id is not None:
        play["submissionId"] = submission_id
    status, body = await post(api, SUBMIT, {"i": play})
    outcome = Outcome(player, score, submission_id, status)
    payload = (body.get("data") or {}).get("submitScore")
    errors = payload["errors"] if payload else body["errors"]
    if payload and not errors:
        assert status == 200
        outcome.session_id = payload["session"]["id"]
        outcome.duplicate = payload["duplicate"]
    else:
        error = errors[0]
        outcome.code = error.get("code") or error["extensions"]["code"]
        outcome.message = error["message"]
    return outcome


async def prepare(api: Api) -> None:
    for player in PLAYERS:
        await api.create_player(player)
    await api.create_board(BEST)
    await api.create_board(TOTAL, operator="INCREMENT", scoreWidth=12)


async def check_table(db: Db, outcomes: list[Outcome]) -> dict[tuple[str, int], str]:
    """Assert the contract on the table; returns the recorded plays' session ids."""
    items = await scan_items(db)
    sessions = [i for i in items if SESSION.holds(i)]
    counted = Counter((s["playerId"], int(s["score"])) for s in sessions)
    assert all(n == 1 for n in counted.values()), counted
    recorded = {(s["playerId"], int(s["score"])): s["sessionId"] for s in sessions}
    acknowledged = {o.session_id for o in outcomes}
    for o in outcomes:
        play = (o.player, o.score)
        if o.session_id is not None:
            assert recorded.get(play) == o.session_id, o
        elif o.code != "OUTCOME_UNKNOWN":
            assert play not in recorded, o
        elif play in recorded and recorded[play] not in acknowledged:
            # Recorded by the unconfirmed write itself: under the session the error named.
            assert recorded[play] in o.message, o

    by_key = {(i["pk"], i["sk"]): i for i in items}
    plays = {p: [score for (q, score) in recorded if q == p] for p in PLAYERS}
    for player, scores in plays.items():
        stats = by_key[*PLAYER.key(player_id=player)]
        assert (stats["gamesPlayed"], stats["lifetimeScore"]) == (len(scores), sum(scores))
        for board, expected in ((BEST, max(scores, default=None)), (TOTAL, sum(scores))):
            guard = by_key.get(ENTRY_GUARD.key(player_id=player, leaderboard_id=board))
            listed = [
                i
                for i in items
                if SCORE.holds(i) and i["leaderboardId"] == board and i["playerId"] == player
            ]
            if not scores:
                assert guard is None
                assert listed == []
                continue
            assert guard is not None
            assert guard["score"] == expected
            assert [i["score"] for i in listed] == [expected]
    counts = entry_counts(items)
    for board in (BEST, TOTAL):
        assert counts[board] == sum(1 for scores in plays.values() if scores)
    return recorded


def plays(rounds: int) -> list[tuple[str, int, str | None]]:
    """Distinct scores per player, every other one with a submissionId."""
    return [
        (player, 1000 * n + p + 1, str(uuid.uuid4()) if (n + p) % 2 else None)
        for n in range(rounds)
        for p, player in enumerate(PLAYERS)
    ]


async def settle(api: Api, db: Db, outcomes: list[Outcome]) -> list[Outcome]:
    """Check the table, send every OUTCOME_UNKNOWN submission that has a submissionId again,
    and check again: each is then recorded exactly once."""
    await check_table(db, outcomes)
    unknown = [o for o in outcomes if o.code == "OUTCOME_UNKNOWN" and o.submission_id]
    again = [await submit(api, o.player, o.score, o.submission_id) for o in unknown]
    assert all(a.session_id is not None for a in again), again
    await check_table(db, outcomes + again)
    return again


MIXES = {
    # Rates apply to some 35 requests or more, so that each rule surely fires; rarer faults
    # come on a fixed schedule instead.
    "throttle": [Rule(Fault.THROTTLE, rate=0.3), Rule(Fault.PROVISIONED, every=5)],
    "server-errors": [Rule(Fault.SERVER_ERROR, rate=0.3)],
    "drop-before": [Rule(Fault.DROP_BEFORE, rate=0.3)],
    "drop-after": [Rule(Fault.DROP_AFTER, TRANSACT, rate=0.5)],
    "delay": [Rule(Fault.DELAY, rate=0.5, delay=0.05)],
    "everything": [
        Rule(Fault.DROP_AFTER, TRANSACT, every=4),
        Rule(Fault.THROTTLE, every=7),
        Rule(Fault.SERVER_ERROR, every=9),
        Rule(Fault.DROP_BEFORE, every=11),
        Rule(Fault.DELAY, every=5, delay=0.02),
    ],
}


@pytest.mark.parametrize("mix", MIXES)
async def test_concurrent_submissions_under_faults_keep_the_contract(
    api: Api, proxy: FaultProxy, direct: Db, mix: str
) -> None:
    await prepare(api)
    rules = [replace(rule) for rule in MIXES[mix]]
    proxy.inject(*rules)
    outcomes = list(
        await asyncio.gather(*(submit(api, p, s, sid) for p, s, sid in plays(rounds=3)))
    )
    proxy.clear()
    for rule in rules:  # every fault of the mix really happened
        assert rule.fired > 0, (rule, proxy.injected)
    acknowledged = [o for o in outcomes if o.session_id is not None]
    assert len(acknowledged) >= len(outcomes) // 2, outcomes
    assert all(o.code in (None, "BACKEND_UNAVAILABLE", "OUTCOME_UNKNOWN") for o in outcomes)
    await settle(api, direct, outcomes)


async def test_throttled_reads_are_retried_within_the_budget(api: Api, proxy: FaultProxy) -> None:
    await api.create_player("ann")
    query = '{ player(id: "ann") { id } }'

    proxy.inject(Rule(Fault.THROTTLE, "GetItem", times=ATTEMPTS - 1))
    status, body = await post(api, query)
    assert (status, body["data"]) == (200, {"player": {"id": "ann"}})
    # One call for the request's budget, however many attempts it took on the wire.
    assert body["extensions"]["cost"]["dynamodbCalls"] == 1
    assert proxy.received["GetItem"] == ATTEMPTS
    assert proxy.faults(Fault.THROTTLE) == ATTEMPTS - 1

    for fault in (Fault.PROVISIONED, Fault.SERVER_ERROR, Fault.DROP_BEFORE):
        proxy.inject(Rule(fault, "GetItem"))
        status, body = await post(api, query)
        assert body["errors"][0]["extensions"]["code"] == "BACKEND_UNAVAILABLE", body
        assert proxy.received["GetItem"] == ATTEMPTS, fault  # the budget, and no more
        proxy.clear()
        assert (await post(api, query))[1]["data"] == {"player": {"id": "ann"}}


async def test_a_lost_answer_is_settled_by_the_retry_with_the_same_token(
    api: Api, proxy: FaultProxy, direct: Db
) -> None:
    await prepare(api)
    proxy.inject(Rule(Fault.DROP_AFTER, TRANSACT, times=1))
    outcome = await submit(api, "p0", 10, None)
    # DynamoDB applied the first attempt; botocore's retry carries the same token and is
    # answered with success, without applying it again.
    assert outcome.session_id is not None, outcome
    assert (proxy.received[TRANSACT], proxy.forwarded[TRANSACT]) == (2, 2)
    await check_table(direct, [outcome])


@pytest.mark.parametrize(
    "submission_id", ["0b4f3c1e-8a52-4d7e-9f61-2c3a5e7d9b10", None], ids=["submissionId", "none"]
)
async def test_a_write_never_confirmed_is_outcome_unknown(
    api: Api, proxy: FaultProxy, direct: Db, submission_id: str | None
) -> None:
    await prepare(api)
    # Applied by the first attempt; no answer reaches the service, whatever it tries.
    proxy.inject(Rule(Fault.DROP_AFTER, TRANSACT, times=1), Rule(Fault.THROTTLE, TRANSACT))
    outcome = await submit(api, "p0", 10, submission_id)
    assert outcome.code == "OUTCOME_UNKNOWN", outcome
    assert (proxy.received[TRANSACT], proxy.forwarded[TRANSACT]) == (ATTEMPTS, 1)
    proxy.clear()
    recorded = await check_table(direct, [outcome])
    assert recorded[("p0", 10)] in outcome.message  # the client can look its session up
    if submission_id is not None:
        again = await settle(api, direct, [outcome])
        assert again[0].duplicate is True
        assert again[0].session_id == recorded[("p0", 10)]


REFUSALS = [
    (Fault.THROTTLE, "BACKEND_UNAVAILABLE"),
    (Fault.PROVISIONED, "BACKEND_UNAVAILABLE"),
    # The service cannot tell these from an applied write that lost its answer:
    (Fault.SERVER_ERROR, "OUTCOME_UNKNOWN"),
    (Fault.DROP_BEFORE, "OUTCOME_UNKNOWN"),
]


async def test_a_refused_write_leaves_nothing(api: Api, proxy: FaultProxy, direct: Db) -> None:
    await prepare(api)
    outcomes = []
    for player, (fault, code) in zip(PLAYERS, REFUSALS, strict=False):
        proxy.inject(Rule(fault, TRANSACT))
        outcome = await submit(api, player, 10, str(uuid.uuid4()))
        assert (outcome.status, outcome.code) == (200, code), (fault, outcome)
        assert (proxy.received[TRANSACT], proxy.forwarded[TRANSACT]) == (ATTEMPTS, 0), fault
        outcomes.append(outcome)
    proxy.clear()
    assert await check_table(direct, outcomes) == {}
    await settle(api, direct, outcomes)


@pytest.fixture
async def hasty(settings: Settings, proxy: FaultProxy) -> AsyncIterator[Api]:
    """The service with a short request deadline. Tests set up their data, and check it
    afterwards, through the patient ``api`` on the same table, not under that deadline."""
    async with _serve(
        replace(
            settings,
            endpoint_url=proxy.url,
            limits=replace(settings.limits, request_deadline=1.5),
        ),
        None,
    ) as served:
        yield served


async def test_a_deadline_during_a_write_is_outcome_unknown(
    api: Api, hasty: Api, settings: Settings, proxy: FaultProxy, direct: Db
) -> None:
    await prepare(api)
    submission_id = str(uuid.uuid4())
    # The play's transaction is held at the proxy until the service has given up on it: its
    # reads before it have a deadline of 10 s to be done in, however loaded the machine.
    limits = replace(settings.limits, request_deadline=10.0)
    async with _serve(replace(settings, endpoint_url=proxy.url, limits=limits), None) as writer:
        release = asyncio.Event()
        proxy.inject(Rule(Fault.HOLD, TRANSACT, times=1, released=release))
        try:
            outcome = await submit(writer, "p0", 10, submission_id)
        finally:
            release.set()
    assert (outcome.status, outcome.code) == (503, "OUTCOME_UNKNOWN"), outcome
    # The write the service gave up on still reaches DynamoDB, and is applied.
    await asyncio.wait_for(proxy.wait_forwarded(TRANSACT, 1), WAIT)
    recorded = await check_table(direct, [outcome])
    assert recorded[("p0", 10)] in outcome.message
    again = await settle(api, direct, [outcome])
    assert again[0].duplicate is True

    # A request cut off before it wrote anything is plainly BACKEND_UNAVAILABLE: its first
    # read is held until the service has answered.
    release = asyncio.Event()
    proxy.inject(Rule(Fault.HOLD, "BatchGetItem", times=1, released=release))
    try:
        late = await submit(hasty, "p1", 20, str(uuid.uuid4()))
    finally:
        release.set()
    assert (late.status, late.code) == (503, "BACKEND_UNAVAILABLE"), late
    assert proxy.received[TRANSACT] == 0


CREATE_FAMILY = """mutation($i: CreateLeaderboardFamilyInput!) {
    createLeaderboardFamily(input: $i) { family { id } errors { code } } }"""


async def test_a_creation_whose_answer_was_lost_succeeds_once(
    api: Api, proxy: FaultProxy, direct: Db
) -> None:
    # createPlayer is a TransactWriteItems (botocore gives it a token), the boards PutItems.
    proxy.inject(Rule(Fault.DROP_AFTER, TRANSACT, times=1))
    await api.create_player("ann")
    assert proxy.received[TRANSACT] == 2
    proxy.inject(Rule(Fault.DROP_AFTER, "PutItem", times=1))
    await api.create_board("b")
    assert proxy.received["PutItem"] == 2
    proxy.inject(Rule(Fault.DROP_AFTER, "PutItem", times=1))
    created = await api.gql(CREATE_FAMILY, {"i": {"id": "fam", "name": "f", "period": "DAILY"}})
    assert created["createLeaderboardFamily"]["errors"] == []
    assert proxy.received["PutItem"] == 2
    # Someone else's board of the same id is still refused.
    again = await api.gql(
        """mutation { createLeaderboard(input: {id: "b", name: "other", period: GLOBAL}) {
            errors { code } } }"""
    )
    assert again["createLeaderboard"]["errors"] == [{"code": "LEADERBOARD_EXISTS"}]
    keys = Counter((i["pk"], i["sk"]) for i in await scan_items(direct))
    assert keys[PLAYER.key(player_id="ann")] == 1
    assert keys[LEADERBOARD.key(leaderboard_id="b")] == 1


async def test_a_creation_never_confirmed_is_outcome_unknown(
    api: Api, proxy: FaultProxy, direct: Db
) -> None:
    player = """mutation { createPlayer(input: {id: "bob", name: "Bob", email: "b@x.example"}) {
        errors { code } } }"""
    board = """mutation { createLeaderboard(input: {id: "c", name: "c", period: GLOBAL}) {
        errors { code } } }"""
    for query, operation, exists in (
        (player, TRANSACT, "PLAYER_EXISTS"),
        (board, "PutItem", "LEADERBOARD_EXISTS"),
    ):
        proxy.inject(Rule(Fault.DROP_AFTER, operation))
        (unknown,) = (await api.gql(query)).values()
        assert unknown["errors"] == [{"code": "OUTCOME_UNKNOWN"}]
        assert proxy.forwarded[operation] == ATTEMPTS
        proxy.clear()
        (again,) = (await api.gql(query)).values()
        assert again["errors"] == [{"code": exists}]  # it had been created, once
    keys = Counter((i["pk"], i["sk"]) for i in await scan_items(direct))
    assert keys[PLAYER.key(player_id="bob")] == 1
    assert keys[LEADERBOARD.key(leaderboard_id="c")] == 1


async def test_a_throttled_transaction_is_retried_then_refused(
    api: Api, proxy: FaultProxy, direct: Db
) -> None:
    await prepare(api)
    proxy.inject(Rule(Fault.CANCEL_THROTTLED, TRANSACT, times=2))
    passed = await submit(api, "p0", 10, None)
    assert passed.session_id is not None, passed
    assert proxy.received[TRANSACT] == 3
    proxy.inject(Rule(Fault.CANCEL_THROTTLED, TRANSACT))
    refused = await submit(api, "p1", 20, str(uuid.uuid4()))
    assert refused.code == "BACKEND_UNAVAILABLE", refused
    assert proxy.received[TRANSACT] == MAX_ATTEMPTS  # the submission's own retries
    await check_table(direct, [passed, refused])
    _, body = await post(
        api,
        """mutation { createPlayer(input: {id: "cy", name: "Cy", email: "c@x.example"}) {
            errors { code } } }""",
    )
    assert body["errors"][0]["extensions"]["code"] == "BACKEND_UNAVAILABLE", body


async def test_a_players_ranks_are_looked_up_while_the_player_is_read(
    api: Api, proxy: FaultProxy
) -> None:
    """A profile asking for the player and its rank does not wait for the player's GetItem to
    start on the rank: the entry's Query and the board's go out while the player's GetItem is
    held at the proxy."""
    await api.create_player("p")
    await api.create_board("b")
    await api.submit("p", "b", 5)
    release = asyncio.Event()
    proxy.inject(Rule(Fault.HOLD, "GetItem", released=release))
    asked = asyncio.create_task(
        api.gql('{ player(id: "p") { name rank(leaderboardId: "b") { rank total } } }')
    )
    try:
        # The timeout only keeps a failure from hanging: one after the other, the Query would
        # never be sent while the player's GetItem is held.
        await asyncio.wait_for(proxy.wait_received("Query", 2), timeout=30)
        assert proxy.received["GetItem"] == 1
        assert not asked.done()
    finally:
        release.set()
    data = await asked
    assert data["player"] == {"name": "p", "rank": {"rank": 1, "total": 1}}
    # The player; the entry (AP4), the board with its count, and the rank's COUNT.
    assert proxy.received == Counter({"GetItem": 1, "Query": 3})


async def test_a_ban_cut_part_way_is_in_force_and_completes_when_sent_again(
    api: Api, proxy: FaultProxy, direct: Db
) -> None:
    boards = await _bans._boards(api, 30)
    # The ban's mark and its first 25 removals go through; every later write fails.
    proxy.inject(Rule(Fault.SERVER_ERROR, TRANSACT, after=2))
    cut = (await _bans.ban(api, "ann"))["data"]["banPlayer"]
    # (A transaction answered 500 may have been applied: OUTCOME_UNKNOWN.)
    assert [e["code"] for e in cut["errors"]] == ["OUTCOME_UNKNOWN"]
    assert "send it again" in cut["errors"][0]["message"]
    proxy.clear()
    standing = [i for i in await scan_items(direct) if SCORE.holds(i) and i["playerId"] == "ann"]
    assert len(standing) == 30 - 25
    # Already in force: the player's plays are refused, and write nothing.
    refused = await api.submit("ann", boards[-1], 1000)
    assert [e["code"] for e in refused["errors"]] == ["PLAYER_BANNED"]

    done = (await _bans.ban(api, "ann"))["data"]["banPlayer"]
    assert done["errors"] == []
    assert done["action"]["removedCount"] == 30
    items = await scan_items(direct)
    assert [i for i in items if SCORE.holds(i) and i["playerId"] == "ann"] == []
    assert len([i for i in items if MODERATION.holds(i)]) == 1
    assert await check_invariants(direct.client, direct.table, single_writer=True) == []


@pytest.mark.slow
async def test_an_erasure_cut_part_way_finishes_when_sent_again(
    api: Api, proxy: FaultProxy, direct: Db
) -> None:
    boards = [f"b{i}" for i in range(30)]
    await _erasure._player_on_boards(api, boards)
    await _erasure._sessions(api, _erasure.ERIN, 400, boards)
    proxy.inject(Rule(Fault.SERVER_ERROR, "BatchWriteItem", after=3))
    cut = (await _erasure.erase(api))["data"]["erasePlayer"]
    assert [e["code"] for e in cut["errors"]] == ["BACKEND_UNAVAILABLE"]
    assert "send it again" in cut["errors"][0]["message"]
    proxy.clear()
    left = _erasure.traces(await scan_items(direct), _erasure.ERIN)
    assert 0 < len(left) < 400
    refused = await api.submit(_erasure.ERIN, "b0", 1)
    assert [e["code"] for e in refused["errors"]] == ["PLAYER_NOT_FOUND"]

    answers = await _erasure.erase_fully(api)
    assert answers[-1]["action"]["removedCount"] == 30
    assert _erasure.traces(await scan_items(direct), _erasure.ERIN) == []
    counts = entry_counts(await scan_items(direct))
    assert {b: counts[b] for b in boards} == {b: 1 for b in boards}
    assert await check_invariants(direct.client, direct.table, single_writer=True) == []


@pytest.mark.parametrize("score", [95, 10])
async def test_a_play_that_read_an_entry_then_removed_reads_again_and_enters_afresh(
    api: Api, proxy: FaultProxy, direct: Db, score: int
) -> None:
    """A play reads the standing entry; an operator removes it (on another instance) before
    the play's transaction arrives. The transaction's condition on the guard refuses the play
    as read, and it is read again: it enters the board afresh, counted once."""
    for player in ("ann", "bob"):
        await api.create_player(player)
    await api.create_board("b")
    assert (await api.submit("ann", "b", 50))["errors"] == []
    assert (await api.submit("bob", "b", 40))["errors"] == []
    release = asyncio.Event()
    proxy.inject(Rule(Fault.HOLD, TRANSACT, times=1, released=release))
    sent = proxy.received[TRANSACT]
    play = asyncio.create_task(api.submit("ann", "b", score))
    try:
        await asyncio.wait_for(proxy.wait_received(TRANSACT, sent + 1), timeout=30)
        await remove_entry(direct, leaderboard_id="b", player_id="ann", reason="x", actor="t")
    finally:
        release.set()
    payload = await play
    assert payload["errors"] == []
    assert payload["improved"]  # a first entry (95 would improve on 50, 10 would not)
    assert proxy.received[TRANSACT] == sent + 2  # the held attempt, refused; then one more
    items = await scan_items(direct)
    assert entry_counts(items) == {"b": 2}
    entry = next(i for i in items if SCORE.holds(i) and i["playerId"] == "ann")
    assert entry["score"] == score
    # (Two writers: the play's time is before the removal's, yet it landed after it.)
    assert await check_invariants(direct.client, direct.table) == []
