"""The table every fuzz test starts from: players, boards of each sort order and operator,
daily, weekly and season families, a session per player and board, and a real cursor for every
paginated list (the ``world`` fixture)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import Api
from tests.fuzz.answers import assert_keys_well_formed, by_key, strings_in
from tests.fuzz.inputs import BOARDS, GAME, PLAYERS
from tests.fuzz.operations import CREATE_FAMILY, CURSOR_LISTS
from tests.scan import scan_items


@dataclass(repr=False)
class World:
    api: Api
    cursors: dict[str, str]
    sessions: list[tuple[str, str]]
    """(player id, session id) of every session written by the fixture."""
    items: list[dict[str, Any]] | None = None
    """The table as the last example that passed left it (None: not known)."""

    def __repr__(self) -> str:
        # Hypothesis prints the arguments of a failing example, this fixture among them: its
        # table (thousands of characters) would drown the example's own values.
        return f"World({len(self.sessions)} sessions)"

    async def scan(self) -> list[dict[str, Any]]:
        """The table's items, sorted by key; from the last passing example when known."""
        items, self.items = self.items, None
        return items if items is not None else by_key(await scan_items(self.api.db))


async def mutate_ok(api: Api, query: str, variables: dict[str, Any]) -> dict[str, Any]:
    data = await api.gql(query, variables)
    payload: dict[str, Any] = next(iter(data.values()))
    assert payload["errors"] == [], payload
    return payload


@pytest.fixture(name="world")
async def world_fixture(api: Api) -> World:
    """The table every fuzz test starts from (imported by each test module that uses it)."""
    for player in PLAYERS:
        await api.create_player(player)
    await api.create_board("fz-best", scoreWidth=4)
    await api.create_board("fz-asc", sortOrder="ASC", operator="LATEST", scoreWidth=2)
    await api.create_board("fz-inc", operator="INCREMENT", scoreWidth=3)
    families: list[dict[str, Any]] = [
        {"id": "fz-day", "period": "DAILY", "scoreWidth": 5},
        {"id": "fz-week", "period": "WEEKLY", "timezone": "Pacific/Kiritimati"},
        {
            "id": "fz-season",
            "period": "SEASON",
            "seasonStart": "2020-01-01T00:00:00Z",
            "seasonDays": 30,
        },
    ]
    for fields in families:
        await mutate_ok(api, CREATE_FAMILY, {"i": {"name": fields["id"], **fields}})
    sessions: list[tuple[str, str]] = []
    for n, player in enumerate(PLAYERS):
        for board in BOARDS:
            payload = await api.submit(player, board, 3 + n, game_id=GAME)
            sessions.append((player, payload["session"]["id"]))
    cursors = {}
    for name, query in CURSOR_LISTS.items():
        found = [v for v in strings_in(await api.gql(query, {"c": None})) if "." in v]
        assert len(found) == 1, found
        cursors[name] = found[0]
    await assert_keys_well_formed(api)
    return World(api, cursors, sessions)
