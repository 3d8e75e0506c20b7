"""AP10 and its relatives: standard competition ("1224") ranks counted from the table.

rank = 1 + B(v), where B(v) is the number of entries whose rank value is strictly larger
than v. B is counted with ``Select=COUNT`` Queries over SCORE# key ranges, each followed
through LastEvaluatedKey to the end. The range boundary ``SCORE#<v>$`` sorts after every key
of rank value v and before every key of a larger one ('$' follows '#'), so

    B(v0)                 = COUNT(sk BETWEEN SCORE#<v0>$ AND SCORE$)
    B(v1) - B(v0)         = COUNT(sk BETWEEN SCORE#<v1>$ AND SCORE#<v0>$)     for v1 < v0

Ranks of several entries on one board cost one COUNT per distinct value, run concurrently over
disjoint ranges: together they read the board once down to the lowest of them. Ranks of a
contiguous run of entries (a page, an around-me window) follow from the run itself and at most
two COUNTs above its first entry.

On a write-sharded board (dynamo/scores.py) each COUNT is one per partition, run at once and
summed, and an around-me window merges each partition's entries nearest the player's; the
sort keys, and so these ranges, are the same in every partition.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from itertools import accumulate

from dynamo.db import Db
from dynamo.items import parse
from dynamo.leaderboards import LeaderboardItem
from dynamo.merged_reads import count_all, merged_items
from dynamo.scores import (
    SCORE,
    SCORE_RANGE_END,
    ScoreItem,
    rank_boundary,
    rank_value,
    score_partitions,
    score_player,
    score_sk,
)

__all__ = ["around", "better_counts", "rank_of", "ranks_in_window", "window_ranks"]


def _value(board: LeaderboardItem, entry: ScoreItem) -> str:
    return rank_value(entry.score, board.score_width, board.sort_order)


async def _count_between(db: Db, board: LeaderboardItem, lo: str, hi: str) -> int:
    return await count_all(
        db,
        score_partitions(board),
        key_condition="pk = :pk AND sk BETWEEN :lo AND :hi",
        values={":lo": lo, ":hi": hi},
    )


async def better_counts(
    db: Db, board: LeaderboardItem, entries: Iterable[ScoreItem]
) -> dict[str, int]:
    """B(v) for the rank value v of each entry: entries on the board strictly better."""
    values = sorted({_value(board, e) for e in entries}, reverse=True)
    bounds = [SCORE_RANGE_END, *(rank_boundary(v) for v in values)]
    parts = await asyncio.gather(
        *(_count_between(db, board, bounds[i + 1], bounds[i]) for i in range(len(values)))
    )
    return dict(zip(values, accumulate(parts), strict=True))


async def rank_of(db: Db, board: LeaderboardItem, entry: ScoreItem) -> int:
    """AP10: 1 + the number of entries with a strictly better score."""
    return (await better_counts(db, board, [entry]))[_value(board, entry)] + 1


async def window_ranks(
    db: Db, board: LeaderboardItem, window: Sequence[ScoreItem], *, from_top: bool
) -> list[int]:
    """Ranks of a contiguous run of entries in board order (best first).

    ``from_top`` says the run starts at the board's first entry (no Query needed). Otherwise
    two COUNTs run concurrently: B of the first entry's value, and how many entries of that
    same value are listed above the run (ties attained earlier).
    """
    if not window:
        return []
    if from_top:
        return ranks_in_window(board, window, better_than_top=0, listed_before=0)
    top = _value(board, window[0])
    better_than_top, with_top = await asyncio.gather(
        _count_between(db, board, rank_boundary(top), SCORE_RANGE_END),
        _count_between(db, board, score_sk(board, window[0]), rank_boundary(top)),
    )
    # with_top counts the first entry and the ties attained before it; at least the first
    # entry, which a play between the page's read and these counts may have moved away.
    return ranks_in_window(
        board,
        window,
        better_than_top=better_than_top,
        listed_before=better_than_top + max(with_top, 1) - 1,
    )


def ranks_in_window(
    board: LeaderboardItem,
    window: Sequence[ScoreItem],
    *,
    better_than_top: int,
    listed_before: int,
) -> list[int]:
    """Ranks of a contiguous run of entries, given how many entries are strictly better than
    its first one and how many the board lists before it (those plus earlier ties)."""
    values = [_value(board, e) for e in window]
    top = values[0] if values else ""
    first_index: dict[str, int] = {}
    for i, value in enumerate(values):
        first_index.setdefault(value, i)
    return [
        1 + (better_than_top if value == top else listed_before + first_index[value])
        for value in values
    ]


async def around(
    db: Db, board: LeaderboardItem, entry: ScoreItem, before: int, after: int
) -> tuple[list[ScoreItem], bool]:
    """Up to ``before`` better and ``after`` worse entries around ``entry``, best first, and
    whether the run starts at the top of the board (for window_ranks).

    Two key-range Queries start at the entry's own sort key, one upwards, one downwards (on a
    write-sharded board, two on each partition, each for its share of the window, merged: see
    dynamo/merged_reads.py).
    """
    pks = score_partitions(board)
    own = score_sk(board, entry)
    up, down = await asyncio.gather(
        merged_items(
            db,
            pks,
            key_condition="pk = :pk AND sk BETWEEN :own AND :end",
            values={":own": own, ":end": SCORE_RANGE_END},
            limit=before + 1,
            identity=score_player,
            descending=False,
        ),
        merged_items(
            db,
            pks,
            key_condition="pk = :pk AND sk BETWEEN :start AND :own",
            values={":start": SCORE.sk.prefix, ":own": own},
            limit=after + 1,
            identity=score_player,
        ),
    )
    # Each range starts with the entry's own item; a stale entry (replaced since it was read)
    # has none, and then nothing is dropped.
    up = up[1:] if up and up[0]["sk"]["S"] == own else up[:before]
    down = down[1:] if down and down[0]["sk"]["S"] == own else down[:after]
    better = [parse(ScoreItem, raw) for raw in reversed(up)]
    worse = [parse(ScoreItem, raw) for raw in down]
    return [*better, entry, *worse], len(better) < before
