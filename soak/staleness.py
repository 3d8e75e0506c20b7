"""How stale the fleet's subscribers and cached answers were: a pure judgement over what the
soak's probes wrote and what its observers saw.

The probes are plays by dedicated players, one at a time, each with a score higher than any
before it on its boards (and higher than any play of the workload). Once a probe is
acknowledged, every later state of those boards has a top score at least as high: nothing
moderates the probe players, and entries of the operator BEST only improve. So an answer (a
subscription's push, a read of the top page) reflects a probe, or a later state, exactly when
its top score is at least the probe's.

The failures: an observer that never reflected a probe; a subscriber whose first push
reflecting a probe arrived more than the bound after its acknowledgement; and an answer that
began more than the bound after a probe's acknowledgement yet did not reflect it (this also
catches one worker of an instance serving a stale cached page while another serves a fresh
one).

The staleness measured, per observer and probe: for a subscriber, the time from the
acknowledgement to the first push reflecting it (pushes come only on a change, so until then
the subscriber shows an older state); for a reader, how long after the acknowledgement a read
still began that did not reflect it (0 when none did). A reader's own latency, or a pause
between its reads, is not counted as staleness: only answers it got are judged.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from bench.core.measure import percentiles

__all__ = ["Kind", "Observation", "Probe", "Staleness", "judge"]

_LISTED = 50
"""Failures listed in the report; all are counted."""


class Kind(StrEnum):
    """What an observer watches."""

    PUSH = "subscriber"
    """A ``leaderboardChanged`` subscription: each push is an observation."""
    READ = "cached read"
    """Reads of the cacheable top page: each answer is an observation."""


@dataclass(frozen=True)
class Probe:
    """An acknowledged probe play on one board."""

    board: str
    score: int
    acked_at: float
    """When its acknowledgement arrived (``time.monotonic()``)."""


@dataclass(frozen=True)
class Observation:
    """One answer an observer got: a push or the answer of a read."""

    kind: Kind
    instance: str
    observer: str
    """Which subscription or reader (unique within the run)."""
    board: str
    began_at: float
    """When the read began; for a push, when it arrived."""
    seen_at: float
    """When the answer arrived."""
    top_score: int | None
    """The answer's best score; None for an empty board."""


@dataclass
class Staleness:
    """The judgement: per kind and instance, how long each probe took to show; and every
    failure."""

    bound: float
    delays: dict[tuple[Kind, str], list[float]] = field(default_factory=dict)
    """The staleness of each probe at each observer of its board, in seconds (see the
    module's documentation)."""
    observations: dict[tuple[Kind, str], int] = field(default_factory=dict)
    observers: dict[tuple[Kind, str], int] = field(default_factory=dict)
    probes: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def document(self) -> dict[str, Any]:
        rows = []
        for (kind, instance), delays in sorted(self.delays.items()):
            p50, _, p99 = percentiles([d * 1000 for d in delays])
            rows.append(
                {
                    "kind": str(kind),
                    "instance": instance,
                    "observers": self.observers.get((kind, instance), 0),
                    "observations": self.observations.get((kind, instance), 0),
                    "reflections": len(delays),
                    "p50_ms": round(p50, 1),
                    "p99_ms": round(p99, 1),
                    "max_ms": round(max(delays, default=0.0) * 1000, 1),
                }
            )
        return {
            "bound_seconds": self.bound,
            "probes": self.probes,
            "by_instance": rows,
            "failures": len(self.failures),
            "failure_list": self.failures[:_LISTED],
        }


def judge(
    probes: Sequence[Probe], observations: Iterable[Observation], *, bound: float
) -> Staleness:
    """Every observer's staleness for every probe on its board that it showed, and every
    failure (see the module's documentation). The probes of a board must have been played
    one at a time, each with a higher score than the one before; observers must have watched
    from before the first probe until ``bound`` past the last."""
    result = Staleness(bound=bound, probes=len(probes))
    by_board: defaultdict[str, list[Probe]] = defaultdict(list)
    for probe in sorted(probes, key=lambda p: p.acked_at):
        by_board[probe.board].append(probe)
    by_observer: defaultdict[tuple[Kind, str, str, str], list[Observation]] = defaultdict(list)
    for answer in observations:
        by_observer[(answer.kind, answer.instance, answer.observer, answer.board)].append(answer)
    for (kind, instance, observer, board), seen in sorted(by_observer.items()):
        key = (kind, instance)
        result.observations[key] = result.observations.get(key, 0) + len(seen)
        result.observers[key] = result.observers.get(key, 0) + 1
        name = f"{kind} {observer} on {instance}, board {board}"
        ordered = sorted(seen, key=lambda o: o.began_at)
        on_board = by_board.get(board, [])
        missed_for = _missed_for(on_board, ordered)
        for n, (probe, delay) in enumerate(_reflections(on_board, ordered)):
            late = kind is Kind.PUSH and delay is not None and delay > bound
            if delay is None or late:
                shown = "never" if delay is None else f"after {delay * 1000:.0f} ms"
                result.failures.append(
                    f"{name}: probe {probe.score} shown {shown} (bound {bound:g} s)"
                )
            if delay is not None:
                shown_after = missed_for[n] if kind is Kind.READ else delay
                result.delays.setdefault(key, []).append(shown_after)
        result.delays.setdefault(key, [])
        stale = _stale_answers(on_board, ordered, bound)
        result.failures += [f"{name}: {s}" for s in stale]
    return result


def _missed_for(probes: Sequence[Probe], ordered: Sequence[Observation]) -> list[float]:
    """For each probe, the longest time from its acknowledgement to the beginning of an
    answer that did not reflect it (0 when none began after it). The probes that an answer
    misses among those acknowledged before it began are the latest ones, from the first
    with a score above the answer's top score."""
    acked = [p.acked_at for p in probes]
    scores = [p.score for p in probes]
    worst = [0.0] * len(probes)
    for answer in ordered:
        due = bisect_left(acked, answer.began_at)
        shown = 0 if answer.top_score is None else bisect_right(scores, answer.top_score)
        for n in range(shown, due):
            worst[n] = max(worst[n], answer.began_at - acked[n])
    return worst


def _reflects(seen: Observation, probe: Probe) -> bool:
    return seen.top_score is not None and seen.top_score >= probe.score


def _reflections(
    probes: Sequence[Probe], ordered: Sequence[Observation]
) -> Iterator[tuple[Probe, float | None]]:
    """For each probe, the seconds from its acknowledgement to the beginning of the first
    answer that reflects it (0 when that answer began before the acknowledgement arrived),
    or None. An answer's own latency is not counted: what it shows was current when it
    began, or later. An answer that reflects a probe reflects every earlier one, so each
    search starts where the previous one ended."""
    at = 0
    for probe in probes:
        while at < len(ordered) and not _reflects(ordered[at], probe):
            at += 1
        if at == len(ordered):
            yield probe, None
        else:
            yield probe, max(0.0, ordered[at].began_at - probe.acked_at)


def _stale_answers(probes: Sequence[Probe], seen: Iterable[Observation], bound: float) -> list[str]:
    """Each answer begun more than ``bound`` after a probe's acknowledgement that does not
    reflect it. ``probes`` are in the order of their acknowledgements, so in the order of
    their scores: an answer reflects every earlier probe when it reflects the latest."""
    acked = [p.acked_at for p in probes]
    found = []
    for answer in seen:
        due = bisect_left(acked, answer.began_at - bound)
        if due and not _reflects(answer, late := probes[due - 1]):
            found.append(
                f"an answer begun {answer.began_at - late.acked_at:.2f} s after probe"
                f" {late.score} was acknowledged shows top score {answer.top_score}"
            )
    return found
