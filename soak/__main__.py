"""``python -m soak [--seconds 180] [--clients 12] [--mode fleet] [--out bench/results]``

Starts DynamoDB Local in memory and redis-server, serves the real application (by default a
fleet: two ``leaderboard serve --workers 2`` processes, each beside a ``leaderboard
rank-indexer``, caches and subscriptions on; ``--mode in-process`` serves instances in this
process instead) on loopback ports, creates
boards of every operator and sort order (and two periodic families), then runs concurrent
clients that mix reads (top N, ranks, around-me, profiles, sessions) with submissions
concentrated on a few hot players, some sent several times under one ``submissionId``. At the
end it scans the table and checks every invariant of :mod:`soak.invariants` exactly, checks
every acknowledged play against the table, prints a summary and writes ``soak.json`` and
``soak.md`` into ``--out``. Some client steps moderate with the admin key: entries removed,
hot players banned for a moment (racing their plays), a few players erased. With Debian's
``redis-server`` installed the instances answer ranks from the rank index, and at the end
every board's index is verified against the table (``--no-rank-index`` leaves it out, in
process only). Meanwhile probe plays are watched by WebSocket subscribers and by readers of
the cached top page on every instance: each must show every probe within ``--bound``
seconds of its acknowledgement. Exits 1 on any violation, difference, unexpected error or
staleness failure.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from bench.core.report import log, machine_info
from bench.core.servers import redis_version
from leaderboard.config import default_cache_dir
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB
from leaderboard.embedded_redis import EmbeddedRedis, redis_server_binary
from soak.report import markdown, write_results
from soak.run import SoakConfig, soak
from soak.watch import WatchConfig


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    defaults = SoakConfig()
    parser = argparse.ArgumentParser(
        prog="python -m soak",
        description="Sustained mixed load on the service, then an exact check of the table.",
    )
    parser.add_argument("--seconds", type=float, default=defaults.seconds, help="load duration")
    parser.add_argument("--clients", type=int, default=defaults.clients, help="concurrent clients")
    parser.add_argument(
        "--mode",
        choices=("fleet", "in-process"),
        default="fleet" if defaults.fleet else "in-process",
        help="fleet: `leaderboard serve` processes (needs redis-server); in-process: instances"
        " served by this process (default: fleet)",
    )
    parser.add_argument(
        "--instances",
        type=int,
        default=defaults.instances,
        help="service instances on the one table, requests round-robin between them",
    )
    parser.add_argument(
        "--workers", type=int, default=defaults.workers, help="worker processes per fleet instance"
    )
    watch = defaults.watch
    parser.add_argument(
        "--bound",
        type=float,
        default=watch.bound,
        help="seconds a subscriber or a cached answer may lag an acknowledged play (0: no"
        " staleness checks)",
    )
    parser.add_argument(
        "--probe-every", type=float, default=watch.probe_every, help="seconds between probes"
    )
    parser.add_argument(
        "--probe-warmup",
        type=float,
        default=watch.warmup,
        help="seconds of load before the first probe",
    )
    parser.add_argument(
        "--sockets",
        type=int,
        default=watch.sockets_per_instance,
        help="subscriber WebSockets per instance (each watches every probed board)",
    )
    parser.add_argument(
        "--readers",
        type=int,
        default=watch.readers_per_instance,
        help="readers of the cached top page per instance",
    )
    parser.add_argument("--players", type=int, default=defaults.players)
    parser.add_argument(
        "--hot-players", type=int, default=defaults.hot_players, help="players most plays go to"
    )
    parser.add_argument(
        "--write-share",
        type=float,
        default=defaults.write_share,
        help="share of client steps that submit a score",
    )
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument(
        "--rank-index",
        action=argparse.BooleanOptionalAction,
        default=redis_server_binary() is not None,
        help="answer ranks from the rank index in an embedded redis-server and verify it at"
        " the end (default: on when redis-server is installed)",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("bench/results"), help="where soak.json/.md go"
    )
    parser.add_argument(
        "--logs",
        type=Path,
        help="keep the fleet's process logs in a folder of this one (default: a temporary"
        " folder, removed at the end)",
    )
    args = parser.parse_args(argv)
    if args.hot_players > args.players or args.players < 20:
        parser.error("--players must be at least 20 and at least --hot-players")
    if args.mode == "fleet" and not args.rank_index:
        parser.error("the fleet needs redis-server (`make redis`): or use --mode in-process")
    if min(args.instances, args.workers, args.sockets, args.readers) < 1:
        parser.error("--instances, --workers, --sockets and --readers must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    config = SoakConfig(
        seconds=args.seconds,
        clients=args.clients,
        instances=args.instances,
        players=args.players,
        hot_players=args.hot_players,
        write_share=args.write_share,
        seed=args.seed,
        fleet=args.mode == "fleet",
        workers=args.workers,
        watch=WatchConfig(
            bound=args.bound,
            probe_every=args.probe_every,
            warmup=args.probe_warmup,
            sockets_per_instance=args.sockets,
            readers_per_instance=args.readers,
        ),
    )
    log("starting DynamoDB Local (in memory)")
    with ExitStack() as stack:
        local = stack.enter_context(EmbeddedDynamoDB(default_cache_dir()))
        machine = machine_info(local)
        redis_url = None
        if args.rank_index:
            log("starting redis-server (in memory) for the rank index, feed and caches")
            redis_url = stack.enter_context(EmbeddedRedis()).url
            machine["redis"] = redis_version(redis_url)
        result = asyncio.run(
            soak(config, local.endpoint_url, machine, redis_url=redis_url, log_dir=args.logs)
        )
    print(markdown(result), flush=True)
    write_results(args.out, result)
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
