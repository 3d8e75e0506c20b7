"""A flood of WebSockets and subscriptions, from a process of its own.

``python -m bench.socket_flood URL [--sockets 50] [--subscriptions 100] [--first 100]
[--board global] [--addresses 1] [--key KEY] [--wait 60]``

Opens ``--sockets`` graphql-transport-ws connections to ``URL`` at once, each claiming one of
``--addresses`` client addresses in X-Forwarded-For (a service that trusts no proxy ignores
it) and presenting the API key ``--key`` if given, and sends ``--subscriptions``
``leaderboardChanged(first: --first)`` subscriptions on each. Once every subscription is
answered (its first push, or its refusal), it prints one JSON line of counts: sockets opened
and refused (by HTTP status), subscriptions running and refused (by error code). It then holds
the sockets open, reading what they are pushed, until a line arrives on stdin (or stdin
closes), closes them all, and prints a second line: ``{"closed": n}``. A socket that waits
``--wait`` seconds for its next answer (its acknowledgement, a subscription's first push or
refusal) gives up, and so does the flood.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import ClientSession, ClientWebSocketResponse, WSServerHandshakeError

__all__ = ["FloodCounts", "main", "open_flood"]

QUERY = """subscription($board: ID!, $first: Int) {
  leaderboardChanged(leaderboardId: $board, first: $first) {
    entries { rank score player { id name } }
  }
}"""


@dataclass
class FloodCounts:
    opened: int = 0
    refused_sockets: Counter[int] = field(default_factory=Counter)
    running: int = 0
    refused_subscriptions: Counter[str] = field(default_factory=Counter)

    def as_json(self) -> dict[str, Any]:
        return {
            "opened": self.opened,
            "refusedSockets": {str(k): v for k, v in sorted(self.refused_sockets.items())},
            "running": self.running,
            "refusedSubscriptions": dict(sorted(self.refused_subscriptions.items())),
        }


async def _one_socket(
    session: ClientSession,
    url: str,
    headers: dict[str, str],
    subscriptions: int,
    variables: dict[str, Any],
    counts: FloodCounts,
    wait: float,
) -> ClientWebSocketResponse | None:
    try:
        ws = await session.ws_connect(url, protocols=("graphql-transport-ws",), headers=headers)
    except WSServerHandshakeError as refused:
        counts.refused_sockets[refused.status] += 1
        return None
    counts.opened += 1
    await ws.send_json({"type": "connection_init"})
    await ws.receive_json(timeout=wait)
    for n in range(subscriptions):
        payload = {"query": QUERY, "variables": variables}
        await ws.send_json({"id": str(n), "type": "subscribe", "payload": payload})
    answered: set[str] = set()
    while len(answered) < subscriptions:
        message = await ws.receive_json(timeout=wait)
        id_ = message.get("id")
        if id_ is None or id_ in answered:
            continue
        answered.add(id_)
        if message["type"] == "next" and "errors" not in message["payload"]:
            counts.running += 1
        else:
            errors = (
                message["payload"] if message["type"] == "error" else message["payload"]["errors"]
            )
            counts.refused_subscriptions[errors[0]["extensions"]["code"]] += 1
    return ws


async def _drain(ws: ClientWebSocketResponse) -> None:
    """Read whatever the service pushes, as a well-behaved client does."""
    async for _ in ws:
        pass


async def open_flood(
    url: str,
    *,
    sockets: int,
    subscriptions: int,
    first: int,
    board: str,
    addresses: int,
    key: str | None = None,
    wait: float = 60.0,
) -> tuple[FloodCounts, list[ClientWebSocketResponse], ClientSession]:
    """Open the flood; the caller closes the sockets and the session."""
    counts = FloodCounts()
    session = ClientSession()
    variables = {"board": board, "first": first}

    def headers(n: int) -> dict[str, str]:
        sent = {"X-Forwarded-For": f"10.77.{n % addresses}.1"}
        if key:
            sent["Authorization"] = f"Bearer {key}"
        return sent

    opened = await asyncio.gather(
        *(
            _one_socket(session, url, headers(n), subscriptions, variables, counts, wait)
            for n in range(sockets)
        )
    )
    return counts, [ws for ws in opened if ws is not None], session


async def _run(options: argparse.Namespace) -> None:
    counts, open_sockets, session = await open_flood(
        options.url,
        sockets=options.sockets,
        subscriptions=options.subscriptions,
        first=options.first,
        board=options.board,
        addresses=options.addresses,
        key=options.key,
        wait=options.wait,
    )
    readers = [asyncio.create_task(_drain(ws)) for ws in open_sockets]
    print(json.dumps(counts.as_json()), flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    await asyncio.gather(*(ws.close() for ws in open_sockets))
    for reader in readers:
        reader.cancel()
    await session.close()
    print(json.dumps({"closed": len(open_sockets)}), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.socket_flood", description=__doc__)
    parser.add_argument("url")
    parser.add_argument("--sockets", type=int, default=50)
    parser.add_argument("--subscriptions", type=int, default=100)
    parser.add_argument("--first", type=int, default=100)
    parser.add_argument("--board", default="global")
    parser.add_argument("--addresses", type=int, default=1)
    parser.add_argument("--key", default=None, help="an API key to present")
    parser.add_argument(
        "--wait", type=float, default=60.0, help="seconds a socket waits for each answer"
    )
    asyncio.run(_run(parser.parse_args(argv)))
    return 0
