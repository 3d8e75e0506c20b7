"""One operation's fan-out keeps at most max_dynamodb_in_flight calls awaiting their answers at
once, and still answers in full."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

import pytest

from leaderboard.config import Settings
from tests.conftest import Api, _serve

PLAYERS = [f"fan-{n:02d}" for n in range(24)]
FAN_OUT = """query($ids: [ID!]!) {
  players(ids: $ids) { id sessions(first: 1) { edges { node { id } } } }
}"""


@dataclass
class InFlight:
    """The calls sent and not yet answered, and the most there were at once."""

    now: int = 0
    most: int = 0

    def sent(self, **_: Any) -> None:
        self.now += 1
        self.most = max(self.most, self.now)

    def answered(self, **_: Any) -> None:
        self.now -= 1


@pytest.fixture(params=[2, 0], ids=["bounded to 2", "unbounded"])
async def bounded(
    request: pytest.FixtureRequest, settings: Settings
) -> AsyncIterator[tuple[Api, int]]:
    bound: int = request.param
    limits = replace(settings.limits, max_dynamodb_in_flight=bound)
    async with _serve(replace(settings, limits=limits), None) as served:
        yield served, bound


async def test_a_fan_out_keeps_its_calls_in_flight_within_the_bound(
    bounded: tuple[Api, int],
) -> None:
    api, bound = bounded
    for player_id in PLAYERS:
        await api.create_player(player_id)
    counting = InFlight()
    events = api.db.client.meta.events
    events.register("before-send.dynamodb", counting.sent)
    events.register("after-call.dynamodb", counting.answered)
    events.register("after-call-error.dynamodb", counting.answered)
    api.reset_calls()

    data = await api.gql(FAN_OUT, {"ids": PLAYERS})

    assert [p["id"] for p in data["players"]] == PLAYERS
    assert all(p["sessions"]["edges"] == [] for p in data["players"])
    assert api.calls == {"BatchGetItem": 1, "Query": len(PLAYERS)}
    assert counting.now == 0
    if bound:
        assert counting.most == bound
    else:
        assert counting.most > 2
