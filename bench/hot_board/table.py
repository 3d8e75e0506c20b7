"""The run's table, written directly (not through the proxy): its players and the families
whose boards of the day the cases play on; and the boards' counts, read back after a case."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import aioboto3

from bench.core.items import claim_item, player_item
from bench.core.loading import batch_write
from bench.core.stack import CREDENTIALS, CURSOR_SECRET, LOADER_CONFIG, REGION
from bench.core.workload import new_player
from dynamo.cursors import CursorCodec
from dynamo.db import Db
from dynamo.families import FamilyItem, create_family
from dynamo.items import now
from dynamo.leaderboards import Period, read_board

__all__ = ["create_families", "create_players", "entry_counts", "open_direct"]


@asynccontextmanager
async def open_direct(endpoint_url: str, table: str) -> AsyncIterator[Db]:
    """``table`` in the DynamoDB at ``endpoint_url`` through the benchmark's own patient
    client, closed on leaving."""
    async with aioboto3.Session().client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name=REGION,
        config=LOADER_CONFIG,
        aws_access_key_id=CREDENTIALS[0],
        aws_secret_access_key=CREDENTIALS[1],
    ) as client:
        yield Db(client=client, table=table, cursors=CursorCodec(CURSOR_SECRET))


async def create_players(db: Db, player_ids: Sequence[str]) -> None:
    """The players, as creating each of them leaves it (its item and its e-mail's claim),
    with BatchWriteItem."""
    at = now()
    players = [new_player(p, at) for p in player_ids]
    await batch_write(db, [item for p in players for item in (player_item(p), claim_item(p))])


async def create_families(db: Db, family_ids: Sequence[str], partitions: int) -> None:
    """Daily families of BEST boards of ``partitions`` partitions, no board created yet."""
    for family_id in family_ids:
        await create_family(
            db,
            FamilyItem(
                family_id=family_id,
                name=f"Hot {family_id}",
                period=Period.DAILY,
                partitions=partitions,
                created_at=now(),
            ),
        )


async def entry_counts(db: Db, board_ids: Sequence[str]) -> dict[str, int]:
    """Each board's entryCount, read consistently (-1 for a board that is missing)."""
    counts: dict[str, int] = {}
    for board_id in board_ids:
        board = await read_board(db, board_id, consistent=True)
        counts[board_id] = board.entry_count if board is not None else -1
    return counts
