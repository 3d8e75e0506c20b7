"""The soak's staleness judgement over synthetic probes and answers: what it measures, and
that it catches a subscriber or a cached answer that stayed stale past the bound; and the
change feed's delay as the report reads it from a scraped histogram; and that the soak's
moderators leave the probes alone."""

from __future__ import annotations

import math
import random
from typing import cast

from soak.client import GraphQLClient
from soak.ledger import Ack, Ledger, Play
from soak.moderation import Moderation, ModerationConfig
from soak.staleness import Kind, Observation, Probe, judge
from soak.watch import PROBE_BOARD, bucket_quantile

BOUND = 2.0


def _read(observer: str, began: float, top: int | None, *, instance: str = "a") -> Observation:
    return Observation(Kind.READ, instance, observer, "b", began, began + 0.05, top)


def _push(observer: str, at: float, top: int, *, instance: str = "a") -> Observation:
    return Observation(Kind.PUSH, instance, observer, "b", at, at, top)


PROBES = [Probe("b", 1000, acked_at=10.0), Probe("b", 1001, acked_at=12.0)]


def test_answers_that_show_each_probe_within_the_bound_pass_with_their_delays() -> None:
    seen = [
        _read("r", 9.0, 5),  # before any probe: shows the workload's best
        _read("r", 9.9, 1000),  # began before the acknowledgement arrived: no delay
        _read("r", 11.0, 1000),
        _read("r", 12.3, 1000),
        _read("r", 12.5, 1001),
        _push("s", 10.4, 1000),
        _push("s", 13.0, 1001),
    ]
    result = judge(PROBES, seen, bound=BOUND)
    assert result.failures == []
    # The read begun at 12.3 s still showed probe 1000 when 1001 was 0.3 s old.
    assert [round(d, 3) for d in result.delays[(Kind.READ, "a")]] == [0.0, 0.3]
    assert [round(d, 3) for d in result.delays[(Kind.PUSH, "a")]] == [0.4, 1.0]
    document = result.document()
    assert document["failures"] == 0
    reads = next(r for r in document["by_instance"] if r["kind"] == "cached read")
    assert (reads["observers"], reads["observations"], reads["reflections"]) == (1, 5, 2)
    assert (reads["max_ms"], reads["p50_ms"]) == (300.0, 150.0)


def test_a_cached_answer_older_than_the_bound_is_a_failure() -> None:
    seen = [_read("r", 10.1, 5), _read("r", 11.0, 5), _read("r", 12.5, 5), _read("r", 12.6, 1001)]
    result = judge(PROBES, seen, bound=BOUND)
    assert result.failures == [
        "cached read r on a, board b: an answer begun 2.50 s after probe 1000 was acknowledged"
        " shows top score 5",
    ]
    assert not result.ok
    assert [round(d, 3) for d in result.delays[(Kind.READ, "a")]] == [2.5, 0.5]


def test_a_reader_that_paused_is_not_stale_for_the_answers_it_did_not_get() -> None:
    """No read began between the probe and the one that shows it, 3 s later: nothing stale
    was seen."""
    result = judge(PROBES[:1], [_read("r", 9.0, 5), _read("r", 13.0, 1000)], bound=BOUND)
    assert result.ok
    assert result.delays[(Kind.READ, "a")] == [0.0]


def test_a_reader_that_never_shows_a_probe_is_a_failure() -> None:
    result = judge(PROBES[:1], [_read("r", 9.0, 5), _read("r", 10.5, 5)], bound=BOUND)
    assert result.failures == ["cached read r on a, board b: probe 1000 shown never (bound 2 s)"]
    assert result.delays[(Kind.READ, "a")] == []


def test_a_stale_answer_after_a_fresh_one_is_a_failure() -> None:
    """One worker of an instance serves the new page, another still its old cached one."""
    seen = [_read("r", 10.2, 1000), _read("r", 10.3, 5), _read("r", 12.1, 5)]
    result = judge(PROBES[:1], seen, bound=BOUND)
    assert [round(d, 3) for d in result.delays[(Kind.READ, "a")]] == [2.1]
    assert result.failures == [
        "cached read r on a, board b: an answer begun 2.10 s after probe 1000 was acknowledged"
        " shows top score 5"
    ]


def test_a_subscriber_that_never_shows_a_probe_is_a_failure_while_the_others_pass() -> None:
    seen = [
        _push("s1", 10.3, 1000),
        _push("s1", 12.2, 1001),
        _push("s2", 10.3, 1000, instance="b"),
    ]
    result = judge(PROBES, seen, bound=BOUND)
    assert result.failures == [
        "subscriber s2 on b, board b: probe 1001 shown never (bound 2 s)",
    ]
    rows = {r["instance"]: r for r in result.document()["by_instance"]}
    assert [rows["a"]["reflections"], rows["b"]["reflections"]] == [2, 1]


def test_probes_of_another_board_are_not_expected_of_its_observers() -> None:
    other = [Probe("other", 2000, acked_at=10.0)]
    result = judge(other, [_read("r", 13.0, 5)], bound=BOUND)
    assert result.ok
    assert result.delays[(Kind.READ, "a")] == []


def test_the_feed_delay_quantiles_are_read_from_the_scraped_histogram() -> None:
    name = "leaderboard_change_feed_delay_seconds"
    scraped = {
        f"{name}_bucket{{le=0.1}}": 40.0,
        f"{name}_bucket{{le=0.5}}": 90.0,
        f"{name}_bucket{{le=10.0}}": 99.0,
        f"{name}_bucket{{le=+Inf}}": 100.0,
        f"{name}_count": 100.0,
    }
    assert bucket_quantile(scraped, name, 0.5) == 0.5
    assert bucket_quantile(scraped, name, 0.4) == 0.1
    assert bucket_quantile(scraped, name, 0.995) == math.inf
    assert bucket_quantile({}, name, 0.5) is None


def test_removals_never_take_a_probe_players_entry() -> None:
    """The judgement holds only while nothing moderates the probes: a removal that took a
    probe's entry would lower the board's top below an acknowledged probe."""
    ledger = Ledger()
    for n, player in enumerate(["probe-0", "p1", "probe-1"]):
        play = Play(player, "arena", 1_000_000 + n, ("hot-best", PROBE_BOARD))
        session = {"leaderboardIds": list(play.leaderboard_ids)}
        ledger.acknowledge(Ack(play, f"s{n}", session, play.leaderboard_ids, duplicate=False))
    players = ["p1", "p2"]
    moderation = Moderation(
        cast(GraphQLClient, None), ledger, ModerationConfig(), players, players[:1], ["hot-best"]
    )
    rng = random.Random(7)
    taken = {moderation._entered(rng) for _ in range(200)}
    assert {pair[0] for pair in taken if pair is not None} == {"p1"}, taken
