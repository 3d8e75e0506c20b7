"""The ``leaderboard`` command: serve, create-table, seed, rank-index, erase-player,
close-periods, deliver-webhooks, export-schema."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import secrets
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TypeVar

from aiohttp import web
from tqdm import tqdm

from dynamo.db import Db
from dynamo.erasure import ERASED_REASON, ErasureProgress, count_player_items, erase_player
from dynamo.errors import LeaderboardError
from dynamo.table import create_table
from leaderboard import close_commands, heap, loops, rank_commands, webhooks
from leaderboard.app import create_app, server_options
from leaderboard.backend import Backend, open_backend, open_table
from leaderboard.config import Settings, default_cache_dir
from leaderboard.embedded_redis import EmbeddedRedis, redis_server_binary
from leaderboard.graphiql_bundle import graphiql_assets
from leaderboard.metrics import pooled_metrics
from leaderboard.observability import configure_logging
from leaderboard.peers import peers_directory
from leaderboard.seed import seed
from leaderboard.workers import WorkerPool, default_workers

__all__ = ["build_parser", "main"]

DEMO_PLAYERS = 200
CLI_ACTOR = "command-line"
"""The actor the moderation log names for what an operator does with this command."""
T = TypeVar("T")
log = logging.getLogger("leaderboard")


def build_parser() -> argparse.ArgumentParser:
    """The command line: each subcommand with its options (their defaults read from the
    environment where they name a variable)."""
    parser = argparse.ArgumentParser(
        prog="leaderboard", description="GraphQL leaderboards over one DynamoDB table."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def backend_options(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--endpoint-url",
            default=os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"),
            help="DynamoDB endpoint (DynamoDB Local, LocalStack, AWS); default "
            "$AWS_ENDPOINT_URL_DYNAMODB, else the embedded DynamoDB Local",
        )
        command.add_argument(
            "--table",
            default=os.environ.get("LEADERBOARD_TABLE", "leaderboard"),
            help="table name (default $LEADERBOARD_TABLE or 'leaderboard')",
        )
        command.add_argument(
            "--data-dir",
            type=Path,
            default=Path(os.environ.get("LEADERBOARD_DATA_DIR", ".data/dynamodb")),
            help="where the embedded DynamoDB Local keeps its data (default .data/dynamodb)",
        )

    serve = commands.add_parser("serve", help="serve GraphQL and GraphiQL")
    backend_options(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on")
    serve.add_argument(
        "--in-memory",
        action="store_true",
        help="embedded DynamoDB Local keeps nothing on disk (a throwaway run)",
    )
    serve.add_argument(
        "--workers",
        type=_positive,
        default=os.environ.get("LEADERBOARD_WORKERS") or None,
        help="worker processes on the port (default $LEADERBOARD_WORKERS, else one per core "
        "with --endpoint-url, one with the embedded backends)",
    )
    serve.add_argument(
        "--demo-players",
        type=int,
        default=DEMO_PLAYERS,
        help="players of demo data loaded when the embedded table is first created",
    )

    create = commands.add_parser("create-table", help="create the table if it does not exist")
    backend_options(create)

    seeder = commands.add_parser("seed", help="load demo boards, players and plays")
    backend_options(seeder)
    seeder.add_argument("--players", type=int, default=DEMO_PLAYERS, help="how many players")
    seeder.add_argument("--seed", type=int, default=42, help="random seed of the demo data")

    indexer = commands.add_parser(
        "rank-indexer", help="keep the rank index in step with the table's stream"
    )
    backend_options(indexer)
    maintain = commands.add_parser(
        "rank-index",
        help="rebuild or verify one board's index, or rebuild every board an earlier version "
        "indexed",
    )
    backend_options(maintain)
    maintain.add_argument("action", choices=["rebuild", "verify"])
    boards = maintain.add_mutually_exclusive_group(required=True)
    boards.add_argument("--board", help="the board's id (this or --outdated is required)")
    boards.add_argument(
        "--outdated",
        action="store_true",
        help="rebuild (not verify) every board an earlier version indexed, and every board a "
        "rebuild left unfinished, one after the other (the projector does it by itself when it "
        "can read the table; the Lambda cannot)",
    )

    eraser = commands.add_parser(
        "erase-player", help="erase a player's data (the right to erasure), with progress"
    )
    backend_options(eraser)
    eraser.add_argument("player_id", metavar="ID", help="the player's id")
    eraser.add_argument(
        "--reason",
        default=ERASED_REASON,
        help="for the moderation log; one naming the player (its id, name or e-mail address) "
        "is refused",
    )

    closer = commands.add_parser(
        "close-periods",
        help="close the boards whose period is over: freeze each one and write its final "
        "standings, with progress",
    )
    backend_options(closer)
    closer.add_argument(
        "--board",
        dest="boards",
        metavar="ID",
        action="append",
        help="a board to close, which must be due (repeatable: these boards only); unset, "
        "every due board",
    )
    closer.add_argument(
        "--grace",
        type=_seconds,
        metavar="SECONDS",
        help="a board is due this many seconds after its endsAt (default "
        f"$LEADERBOARD_CLOSE_GRACE_SECONDS, else {Settings.close_grace_seconds})",
    )

    deliverer = commands.add_parser(
        "deliver-webhooks",
        help="send the final results of closed boards to $LEADERBOARD_WEBHOOK_URL as signed "
        "webhooks, board after board in close order, until interrupted",
    )
    backend_options(deliverer)
    deliverer.add_argument(
        "--once",
        action="store_true",
        help="stop once the outbox is empty or its oldest board is not due (a failed batch "
        "waits for its next attempt)",
    )

    export = commands.add_parser("export-schema", help="print the GraphQL schema (SDL)")
    export.add_argument("--output", type=Path, help="write to this file instead of stdout")
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def _seconds(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "rank-index" and args.outdated and args.action != "rebuild":
        parser.error("rank-index verify takes --board")
    configure_logging(os.environ.get("LEADERBOARD_LOG_FORMAT", "json"))
    if args.command == "export-schema":
        return _export_schema(args.output)
    cache_dir = default_cache_dir()
    with open_backend(
        args.endpoint_url,
        cache_dir=cache_dir,
        data_dir=args.data_dir,
        in_memory=getattr(args, "in_memory", False),
    ) as backend:
        settings = Settings.from_env(endpoint_url=backend.endpoint_url, table=args.table)
        if args.command == "serve":
            return _serve(args, settings, backend, cache_dir)
        if args.command == "rank-indexer":
            asyncio.run(rank_commands.run_projector(settings, backend))
            return 0
        if args.command == "rank-index" and args.outdated:
            return asyncio.run(rank_commands.rebuild_outdated(settings, backend))
        if args.command == "rank-index" and args.action == "rebuild":
            return asyncio.run(rank_commands.rebuild(settings, backend, args.board))
        if args.command == "rank-index":
            return 0 if asyncio.run(rank_commands.verify(settings, backend, args.board)) else 1
        if args.command == "erase-player":
            return asyncio.run(
                _with_db(settings, backend, lambda db: _erase(db, args.player_id, args.reason))
            )
        if args.command == "close-periods":
            grace = settings.close_grace_seconds if args.grace is None else args.grace
            return asyncio.run(
                close_commands.close_periods(
                    settings, backend, args.boards or [], timedelta(seconds=grace)
                )
            )
        if args.command == "deliver-webhooks":
            return asyncio.run(webhooks.deliver_webhooks(settings, backend, once=args.once))
        if args.command == "create-table":
            created = asyncio.run(_with_db(settings, backend, _create_only))
            print(f"table {settings.table} {'created' if created else 'already exists'}")
            return 0
        report = asyncio.run(
            _with_db(settings, backend, lambda db: _seed(db, args.players, args.seed))
        )
        print(f"seeded {report} into {settings.table} on {backend.description}")
        return 0


def _export_schema(output: Path | None) -> int:
    from edge.schema import schema

    text = schema.as_str() + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text)
    return 0


def _serve(args: argparse.Namespace, settings: Settings, backend: Backend, cache: Path) -> int:
    settings, keys = _development_keys(settings, backend)
    redis_line = ""
    redis: EmbeddedRedis | None = None
    if settings.redis_url:
        redis_line = f"  Ranks:     rank index at {settings.redis_url}\n"
    elif backend.embedded and redis_server_binary():
        # The embedded stack includes the rank index when redis-server is installed.
        redis = _embedded_redis(args)
        settings = replace(settings, redis_url=redis.url)
        redis_line = f"  Ranks:     rank index at {redis.url}, fed by the table's stream\n"
    workers = args.workers or default_workers(embedded=backend.embedded)
    workers_line = f"  Workers:   {workers} processes\n" if workers > 1 else ""
    banner = _banner(args, backend, settings, redis_line + workers_line + keys)

    async def prepare(db: Db) -> None:
        if await create_table(db.client, db.table):
            log.info("new table %s: loading %d demo players", db.table, args.demo_players)
            await seed(db, args.demo_players, progress=sys.stderr.isatty())

    assets = graphiql_assets(cache)

    def build(served: Settings) -> web.Application:
        # The one process's application, or each worker's (built after the fork).
        app = create_app(
            served,
            graphiql_assets=assets,
            credentials=backend.credentials,
            project_ranks=backend.embedded,
        )
        return heap.settle_on_startup(app)

    def announce() -> None:
        print(banner, flush=True)

    try:
        if backend.embedded:
            # The table is made (and seeded) once, before serving and before any worker is
            # forked, through a client that waits for DynamoDB Local's slow CreateTable.
            asyncio.run(_with_db(settings, backend, prepare))
        if workers == 1:
            return _serve_one(build(settings), args, settings, announce)
        with pooled_metrics(), peers_directory() as peers:
            # The workers tell each other of their writes (leaderboard/peers.py).
            pool = WorkerPool(
                partial(build, replace(settings, peers_dir=peers)),
                host=args.host,
                port=args.port,
                workers=workers,
                limits=settings.limits,
                on_ready=announce,
            )
            return pool.serve()
    finally:
        if redis is not None:
            redis.stop()


def _banner(args: argparse.Namespace, backend: Backend, settings: Settings, more: str) -> str:
    """What ``serve`` prints once it listens: where to go, and ``more`` lines."""
    url = f"http://{args.host}:{args.port}"
    return (
        f"\nLeaderboard GraphQL service\n"
        f"  GraphiQL:  {url}/graphql\n"
        f"  Health:    {url}/healthz\n"
        f"  DynamoDB:  {backend.description}, table {settings.table}\n"
        f"{more}"
    )


def _development_keys(settings: Settings, backend: Backend) -> tuple[Settings, str]:
    """With the embedded backend and no keys configured, an API key and an admin key made
    for this run, so that writes and moderation work from GraphiQL at once; the settings
    holding them, and the banner's lines that show them."""
    lines = ""
    if not settings.api_keys and backend.embedded:
        generated = secrets.token_urlsafe(24)
        settings = replace(settings, api_keys=(generated,))
        lines += (
            f"  API key:   {generated}\n"
            f"             for writes, paste into GraphiQL's Headers pane:\n"
            f'             {{"Authorization": "Bearer {generated}"}}\n'
        )
    elif not settings.api_keys:
        log.warning("LEADERBOARD_API_KEYS is not set: writes and private reads are refused")
    if not settings.admin_keys and backend.embedded:
        admin = secrets.token_urlsafe(24)
        settings = replace(settings, admin_keys=(admin,))
        lines += f"  Admin key: {admin}\n             for moderation, in the same header\n"
    return settings, lines


def _serve_one(
    app: web.Application, args: argparse.Namespace, settings: Settings, announce: Callable[[], None]
) -> int:
    """Serve in this process alone (the embedded development server's default)."""

    async def on_startup(_: web.Application) -> None:
        announce()

    app.on_startup.append(on_startup)
    loops.use()
    web.run_app(app, host=args.host, port=args.port, print=None, **server_options(settings.limits))
    return 0


def _embedded_redis(args: argparse.Namespace) -> EmbeddedRedis:
    """Redis for the rank index, beside the embedded DynamoDB's data (or in memory)."""
    data = None if args.in_memory else args.data_dir.parent / "redis"
    if data is not None:
        data.mkdir(parents=True, exist_ok=True)
    redis = EmbeddedRedis(data_dir=data)
    redis.start()
    return redis


async def _with_db(settings: Settings, backend: Backend, work: Callable[[Db], Awaitable[T]]) -> T:
    async with open_table(settings, backend.credentials) as db:
        return await work(db)


async def _erase(db: Db, player_id: str, reason: str) -> int:
    """Erase the player to the end, a bar following the items of its partition."""
    total = await count_player_items(db, player_id)
    with tqdm(total=total, desc=f"erasing {player_id}", unit="item") as bar:

        def advance(progress: ErasureProgress) -> None:
            bar.update(progress.items - bar.n)

        try:
            result = await erase_player(
                db, player_id=player_id, actor=CLI_ACTOR, reason=reason, on_progress=advance
            )
        except LeaderboardError as error:
            bar.close()
            print(f"{error.code}: {error.message}", file=sys.stderr)
            return 1
    done = result.progress
    print(
        f"erased {player_id}: {done.entries} entries, {done.sessions} sessions, "
        f"{done.play_records} play records, {done.other_items} other items; "
        f"{done.moderation_records} moderation records no longer name the player"
    )
    return 0


async def _create_only(db: Db) -> bool:
    return await create_table(db.client, db.table)


async def _seed(db: Db, players: int, rng_seed: int) -> object:
    await create_table(db.client, db.table)
    return await seed(db, players, rng_seed=rng_seed, progress=True)


if __name__ == "__main__":
    raise SystemExit(main())
