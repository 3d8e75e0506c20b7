"""A short soak: plays, reads and every kind of moderation racing on two instances while the
rank index follows the table, then the table checked exactly, every promise to the clients
kept and every board's index equal to its entries."""

from __future__ import annotations

import pytest

from soak.moderation import ModerationConfig
from soak.report import SoakResult
from soak.run import SoakConfig, soak
from tests.conftest import PATIENT

SHORT = SoakConfig(
    seconds=12.0,
    clients=8,
    instances=2,
    players=40,
    hot_players=4,
    write_share=0.3,
    progress_every=60.0,
    moderation=ModerationConfig(
        removal_share=0.15, ban_every=3.0, unban_after=(0.2, 0.6), erasures=3
    ),
    index_reads=True,
    limits=PATIENT,
)
"""Small enough for two slow cores, with moderation frequent enough that every kind of it
happens several times. The rank index follows the table, answers the ranks and is verified
at the end, as in ``make soak``; with the tests' patient limits, since what is checked here is
exactness, not speed."""


def _summary(result: SoakResult) -> str:
    found = [*result.invariant_violations, *result.ledger_violations][:30]
    return "\n".join(
        [
            f"unexpected errors: {dict(result.stats.unexpected_errors)}",
            *result.stats.error_samples,
            *(str(v) for v in found),
        ]
    )


@pytest.mark.slow
async def test_a_short_soak_with_moderation_keeps_every_invariant(
    dynamodb_endpoint: str, redis_url: str
) -> None:
    result = await soak(SHORT, dynamodb_endpoint, {}, redis_url=redis_url)
    summary = _summary(result)
    assert result.invariant_violations == [], summary
    assert result.ledger_violations == [], summary
    assert not result.stats.unexpected_errors, summary
    assert result.rank_index is not None
    assert result.index_differences == [], result.rank_index
    assert result.rank_index["boards"] >= 8, result.rank_index
    done = result.moderation
    assert done.get("removals", 0) >= 1, done
    assert done.get("bans", 0) >= 1, done
    assert done.get("unbans", 0) >= 1, done
    assert done.get("erasures", 0) >= 1, done
    assert result.submissions["acknowledged"] > 0, result.submissions
    assert result.passed
