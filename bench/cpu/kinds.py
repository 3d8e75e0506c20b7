"""The request kinds measured, and the service configuration each is sent to.

Every kind is one GraphQL document, the variables of its n-th request and a check of the
answer's data. The service is measured in two configurations: without Redis, where the
response cache is off and ranks are COUNT queries of the table, and with Redis, where the
response cache is on and a repeated top-100 page is answered from it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.core.workload import BOARD_ID, GAMES, Variables

__all__ = [
    "CACHED",
    "CONFIGURATION_OF",
    "KIND_KEYS",
    "REFERENCE",
    "UNCACHED",
    "Configuration",
    "Kind",
    "configurations_for",
    "kinds",
]


@dataclass(frozen=True)
class Configuration:
    """One way the service runs: ``cache`` on (with Redis, the rank index and its change
    feed) or off (no Redis: ranks from COUNT queries)."""

    key: str
    name: str
    cache: bool

    @property
    def environment(self) -> dict[str, str]:
        """What the service's environment adds: the response cache's size, 64 MB or 0."""
        return {"LEADERBOARD_CACHE_MB": "64" if self.cache else "0"}


UNCACHED = Configuration("uncached", "no Redis, response cache off", cache=False)
CACHED = Configuration("cached", "Redis, response cache on", cache=True)

REFERENCE = "typename"
"""The kind every other is compared with: ``{ __typename }`` with the cache off."""


@dataclass(frozen=True)
class Kind:
    """One kind of request: its key (``--profile KEY``), its name in the report, its
    document, the variables of its n-th request (from 0) and a check that an answer's data
    is what was asked for."""

    key: str
    name: str
    query: str
    variables: Callable[[int], Variables]
    check: Callable[[Any], bool]

    @property
    def configuration(self) -> Configuration:
        """The configuration the kind is sent to."""
        return CONFIGURATION_OF[self.key]


TYPENAME = "{ __typename }"
PLAYER = "query($id: ID!) { player(id: $id) { id name lifetimeScore } }"
RANK = (
    "query($id: ID!, $board: ID!) { player(id: $id) {"
    " rank(leaderboardId: $board) { rank total } } }"
)
SUBMIT = (
    "mutation($input: SubmitScoreInput!) { submitScore(input: $input) {"
    " improved session { id } errors { code message } } }"
)


def _top(first: int) -> str:
    return (
        f"query($id: ID!) {{ leaderboard(id: $id) {{ topScores(first: {first}) {{"
        " edges { node { rank score player { id name } } } } } }"
    )


def _page_check(size: int) -> Callable[[Any], bool]:
    def check(data: Any) -> bool:
        edges = data["leaderboard"]["topScores"]["edges"]
        return len(edges) == size and all(e["node"]["player"]["name"] for e in edges)

    return check


CONFIGURATION_OF: dict[str, Configuration] = {
    "typename": UNCACHED,
    "player": UNCACHED,
    "top20": UNCACHED,
    "top100": UNCACHED,
    "rank": UNCACHED,
    "submit": UNCACHED,
    "typename-cached": CACHED,
    "top100-hit": CACHED,
}
"""Every kind's key, in the report's order, and the configuration it is sent to."""
KIND_KEYS = tuple(CONFIGURATION_OF)


def configurations_for(keys: Sequence[str]) -> list[Configuration]:
    """The configurations the kinds ``keys`` are sent to (every kind's when empty)."""
    needed = {CONFIGURATION_OF[key].key for key in keys or KIND_KEYS}
    return [c for c in (UNCACHED, CACHED) if c.key in needed]


def kinds(players: Sequence[str], entries: int, seed: int) -> list[Kind]:
    """Every kind, in :data:`KIND_KEYS` order, on the main board of ``entries`` entries whose
    players are ``players``: reads of random players, and plays of each player in turn (one
    at a time, a fresh score in the board's range each)."""
    rng = random.Random(seed)
    top_score = max(1, entries // 3)

    def anyone(_: int) -> Variables:
        return {"id": rng.choice(players)}

    def board(_: int) -> Variables:
        return {"id": BOARD_ID}

    def ranked(_: int) -> Variables:
        return {"id": rng.choice(players), "board": BOARD_ID}

    def play(n: int) -> Variables:
        return {
            "input": {
                "playerId": players[n % len(players)],
                "leaderboardId": BOARD_ID,
                "gameId": rng.choice(GAMES),
                "score": rng.randint(0, top_score),
                "durationSec": rng.randint(30, 900),
            }
        }

    def typename(data: Any) -> bool:
        return bool(data == {"__typename": "Query"})

    top20, top100 = _page_check(min(20, entries)), _page_check(min(100, entries))
    return [
        Kind("typename", "`{ __typename }`", TYPENAME, lambda _: {}, typename),
        Kind(
            "player",
            "`player(id)` with 3 fields",
            PLAYER,
            anyone,
            lambda d: bool(d["player"]["name"]),
        ),
        Kind("top20", "top 20 with `rank score player { id name }`", _top(20), board, top20),
        Kind("top100", "top 100, the same fields", _top(100), board, top100),
        Kind(
            "rank",
            "`player.rank` by COUNT",
            RANK,
            ranked,
            lambda d: d["player"]["rank"]["total"] == entries,
        ),
        Kind(
            "submit",
            "`submitScore`",
            SUBMIT,
            play,
            lambda d: not d["submitScore"]["errors"] and d["submitScore"]["session"] is not None,
        ),
        Kind(
            "typename-cached",
            "`{ __typename }`, cache on (a cache hit too)",
            TYPENAME,
            lambda _: {},
            typename,
        ),
        Kind(
            "top100-hit",
            "top 100, the same fields, from the response cache",
            _top(100),
            board,
            top100,
        ),
    ]
