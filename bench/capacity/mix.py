"""The benchmark's mix (:data:`bench.core.load.loadgen.MIX`), request by request: the same kinds,
documents and variables the load generator draws, sent one at a time, and the units of each."""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import partial

from bench.capacity.probe import Measured, Probe, measured
from bench.capacity.units import CallUnits
from bench.core.load.loadgen import MIX, WorkerPlan, kinds
from bench.core.measure import BenchError
from bench.core.stack import API_KEY
from bench.core.workload import PROFILE_BOARDS, LoadedPlayer

__all__ = ["run_mix"]


async def run_mix(
    probe: Probe, players: Sequence[LoadedPlayer], requests: int, rng: random.Random
) -> tuple[Measured, list[Measured]]:
    """Send ``requests`` requests drawn from the mix; the units of all of them, and of each
    kind."""
    plan = WorkerPlan(
        url=probe.url,
        api_key=API_KEY,
        clients=1,
        first_client=0,
        start_at=0.0,
        warmup_seconds=0.0,
        duration_seconds=0.0,
        seed=0,
        players=[p.player_id for p in players],
        profile_players=[p.player_id for p in players if p.board_ids == PROFILE_BOARDS],
        top_score=max(p.score for p in players),
    )
    catalogue = kinds(plan)
    names = [name for name, _ in MIX]
    weights = [weight for _, weight in MIX]
    total = CallUnits()
    by_kind: dict[str, CallUnits] = {name: CallUnits() for name in names}
    counts = dict.fromkeys(names, 0)
    for _ in range(requests):
        kind = catalogue[rng.choices(names, weights)[0]]
        variables = kind.variables(rng)
        data, units = await probe.units_of(partial(probe.gql, kind.query, variables))
        problem = kind.check(data)
        if problem is not None:
            raise BenchError(f"{kind.name}: {problem}", code=problem)
        total.add(units)
        by_kind[kind.name].add(units)
        counts[kind.name] += 1
    per_kind = [
        measured(f"mix: {name}", by_kind[name], requests=counts[name])
        for name in names
        if counts[name]
    ]
    return measured("the mix, per request", total, requests=requests), per_kind
