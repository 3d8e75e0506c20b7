"""The game-server clients: each sends the plays of its own players, one at a time (closed
loop), so that no player ever has two plays in flight; and what one phase of them measured.

A play is ``submitScore`` on a family's board of the day, with a fresh ``submissionId`` (as a
game server sends it, so that a retried send is idempotent), a random game and a random score
on a BEST board. Its answer asks for the entries' boards and whether they improved, not their
ranks: a rank's reads grow with the board, and would weigh on one board more than on sixteen.

Two phases: the **burst**, in which each client plays each of its players once (on a new
board, every play a first entry: a daily board at midnight), and the **steady** state, in
which each client plays its players in turn for a number of seconds, every player having an
entry.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import aiohttp

from bench.core.measure import BenchError, percentiles, post_graphql
from bench.core.workload import GAMES
from bench.hot_board.cases import Seat

__all__ = [
    "MAX_SCORE",
    "PLAY",
    "Outcome",
    "PhaseStats",
    "burst",
    "phase_stats",
    "steady",
]

PLAY = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    duplicate entries { leaderboardId improved } errors { code } } }"""
MAX_SCORE = 1_000_000
"""Scores are drawn from 0 to this."""


@dataclass(frozen=True)
class Outcome:
    """One play as its client saw it."""

    player_id: str
    done_at: float
    """Seconds from the start of the phase to the answer."""
    ms: float
    error: str | None
    """The first error's code (the payload's, GraphQL's, ``HTTP_<status>``, or the client's
    exception), None when the play was acknowledged."""
    boards: tuple[str, ...] = ()
    """The boards its acknowledgement named."""


async def _play(
    http: aiohttp.ClientSession, url: str, player_id: str, family_id: str, rng: random.Random
) -> tuple[str | None, tuple[str, ...]]:
    variables = {
        "i": {
            "playerId": player_id,
            "gameId": rng.choice(GAMES),
            "score": rng.randint(0, MAX_SCORE),
            "durationSec": rng.randint(30, 900),
            "submissionId": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            "familyIds": [family_id],
        }
    }
    try:
        data = await post_graphql(http, url, PLAY, variables)
    except BenchError as error:
        return error.code, ()
    except (aiohttp.ClientError, TimeoutError) as error:
        return type(error).__name__, ()
    payload = data["submitScore"]
    codes = [e["code"] for e in payload["errors"]]
    if codes:
        return str(codes[0]), ()
    return None, tuple(str(e["leaderboardId"]) for e in payload["entries"])


async def _client(
    http: aiohttp.ClientSession,
    url: str,
    seat: Seat,
    rng: random.Random,
    started: float,
    go_on: Callable[[int, float], bool],
    out: list[Outcome],
) -> None:
    """Play the seat's players in turn while ``go_on(plays so far, seconds so far)``."""
    played = 0
    while True:
        player_id, family_id = seat[played % len(seat)]
        sent = time.perf_counter()
        error, boards = await _play(http, url, player_id, family_id, rng)
        done = time.perf_counter()
        out.append(Outcome(player_id, done - started, (done - sent) * 1000, error, boards))
        played += 1
        if not go_on(played, done - started):
            return


async def _phase(
    http: aiohttp.ClientSession,
    url: str,
    seats: Sequence[Seat],
    seed: int,
    go_on: Callable[[Seat], Callable[[int, float], bool]],
) -> list[Outcome]:
    out: list[Outcome] = []
    started = time.perf_counter()
    await asyncio.gather(
        *(
            _client(http, url, seat, random.Random(seed * 1000 + n), started, go_on(seat), out)
            for n, seat in enumerate(seats)
        )
    )
    return out


async def burst(
    http: aiohttp.ClientSession, url: str, seats: Sequence[Seat], *, seed: int
) -> list[Outcome]:
    """Every client plays each of its players once, all clients at once."""
    return await _phase(http, url, seats, seed, lambda seat: lambda n, _: n < len(seat))


async def steady(
    http: aiohttp.ClientSession, url: str, seats: Sequence[Seat], *, seconds: float, seed: int
) -> list[Outcome]:
    """Every client plays its players in turn until ``seconds`` have passed (each at least
    once; the play in flight then is finished)."""
    return await _phase(http, url, seats, seed, lambda seat: lambda _, t: t < seconds)


@dataclass(frozen=True)
class PhaseStats:
    """The plays of one phase."""

    plays: int
    acknowledged: int
    seconds: float
    """From the start of the phase to its last answer."""
    plays_per_second: float
    """Acknowledged plays over ``seconds``."""
    p50_ms: float
    p99_ms: float
    """Latency of the acknowledged plays."""
    errors: dict[str, int]
    """Failed plays by code."""
    boards: list[str]
    """The boards the acknowledged plays entered."""
    entered: dict[str, int]
    """Per board: the players with an acknowledged play on it."""


def phase_stats(outcomes: Sequence[Outcome]) -> PhaseStats:
    """What ``outcomes`` measured."""
    acknowledged = [o for o in outcomes if o.error is None]
    seconds = max((o.done_at for o in outcomes), default=0.0)
    p50, _, p99 = percentiles([o.ms for o in acknowledged])
    players: dict[str, set[str]] = {}
    for o in acknowledged:
        for board in o.boards:
            players.setdefault(board, set()).add(o.player_id)
    errors = Counter(o.error for o in outcomes if o.error is not None)
    return PhaseStats(
        plays=len(outcomes),
        acknowledged=len(acknowledged),
        seconds=seconds,
        plays_per_second=len(acknowledged) / seconds if seconds > 0 else 0.0,
        p50_ms=p50,
        p99_ms=p99,
        errors=dict(errors.most_common()),
        boards=sorted(players),
        entered={board: len(ids) for board, ids in sorted(players.items())},
    )
