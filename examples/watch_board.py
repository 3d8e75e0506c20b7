"""Watch a board live: subscribe to ``leaderboardChanged`` over WebSocket and print each push.

``python examples/watch_board.py [BOARD] [--url http://127.0.0.1:8000/graphql] [--first 5]
[--pushes N]``

It speaks the ``graphql-transport-ws`` protocol with aiohttp alone (installed with the
service): ``connection_init``, one ``subscribe``, then a table of the board's top entries for
each ``next`` message, until ``--pushes`` of them have arrived (forever by default; Ctrl-C
stops it). The first push comes at once; the next comes when a play changes the top.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

import aiohttp

__all__ = ["WATCH", "main", "watch"]

WATCH = """subscription Watch($id: ID!, $first: Int!) {
  leaderboardChanged(leaderboardId: $id, first: $first) {
    leaderboardId
    entries { rank score player { name } }
  }
}"""
"""The document sent: the board's top ``first`` entries, each push."""


def render(push: dict[str, Any]) -> str:
    """One push as a few lines of text: the board, then rank, score and name per entry."""
    top = push["leaderboardChanged"]
    lines = [f"{top['leaderboardId']}:"]
    lines += [
        f"  {entry['rank']:>4}  {entry['score']:>12}  {entry['player']['name']}"
        for entry in top["entries"]
    ]
    return "\n".join(lines)


async def watch(url: str, board: str, *, first: int, pushes: int | None) -> int:
    """Subscribe and print pushes; returns the exit status (1 if the service refused)."""
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(url, protocols=("graphql-transport-ws",)) as ws,
    ):
        await ws.send_json({"type": "connection_init", "payload": {}})
        variables = {"id": board, "first": first}
        subscribed = False
        seen = 0
        async for message in ws:
            if message.type is not aiohttp.WSMsgType.TEXT:
                break
            body = json.loads(message.data)
            kind = body.get("type")
            if kind == "connection_ack" and not subscribed:
                payload = {"query": WATCH, "variables": variables}
                await ws.send_json({"id": "1", "type": "subscribe", "payload": payload})
                subscribed = True
            elif kind == "ping":
                await ws.send_json({"type": "pong"})
            elif kind == "next":
                result = body["payload"]
                if result.get("errors"):
                    print(json.dumps(result["errors"]), file=sys.stderr)
                    return 1
                print(render(result["data"]), flush=True)
                seen += 1
                if pushes is not None and seen >= pushes:
                    await ws.send_json({"id": "1", "type": "complete"})
                    return 0
            elif kind == "error":
                print(json.dumps(body["payload"]), file=sys.stderr)
                return 1
            elif kind == "complete":
                return 0
    print(f"the connection closed ({ws.close_code})", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("board", nargs="?", default="global", help="the board's id")
    parser.add_argument("--url", default="http://127.0.0.1:8000/graphql")
    parser.add_argument("--first", type=int, default=5, help="how many top entries (1-100)")
    parser.add_argument("--pushes", type=int, default=None, help="stop after this many pushes")
    args = parser.parse_args(argv)
    try:
        return asyncio.run(watch(args.url, args.board, first=args.first, pushes=args.pushes))
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
