"""A serving process's heap, settled once it has started: what it made to start (the modules,
the schema, the DynamoDB and Redis clients, botocore's service models) moved out of the
garbage collector's generations.

Those objects live as long as the process, and there are some hundreds of thousands of them.
Python's collector walks every object of a generation it collects, and a full collection
(which it runs whenever the objects that survived younger collections come to a quarter of
the old ones) walks them all again, to free none of them: a share of every request's CPU.
``gc.freeze()`` puts them in a permanent generation that no collection walks, so that the
collector's work follows what requests make. The objects made later are collected as
before; what was made at startup and is released later (rare: it is the process's own
furniture) is freed by its reference count, and only a cycle among such objects stays until
the process ends.

The youngest generation is collected once 10,000 more objects than were freed have been made
(Python's default is 700). A request for a page of 100 entries holds some thousands of
objects while it runs (the items read, their models, the answer); at 700 the collector ran two
or three times during each such request, walking all of them and promoting them to the older
generations, to free none of them: they are freed by their reference counts once the request
is answered (resolvers/context.py ``Context.release`` drops what the loaders held). The
collections that remain free what reference cycles requests leave, some hundreds of objects
each.
"""

from __future__ import annotations

import gc
import logging

from aiohttp import web

__all__ = ["YOUNG_THRESHOLD", "settle", "settle_on_startup"]

log = logging.getLogger("leaderboard")


YOUNG_THRESHOLD = 10_000
"""The youngest generation's threshold once the heap is settled."""


def settle() -> int:
    """Collect what the start left behind, then freeze every object the collector tracks, and
    raise the youngest generation's threshold to :data:`YOUNG_THRESHOLD` (the older ones'
    are kept); how many are frozen."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
    return gc.get_freeze_count()


def settle_on_startup(app: web.Application) -> web.Application:
    """``app``, with a startup hook that settles the heap after the hooks it has already (its
    cleanup contexts, which make the clients, run before any): add it to the built app."""

    async def settled(_app: web.Application) -> None:
        log.info("heap settled: %d objects frozen out of the collector's generations", settle())

    app.on_startup.append(settled)
    return app
