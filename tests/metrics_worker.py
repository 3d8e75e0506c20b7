"""One service process of the multiprocess metrics test: serves the app on a free loopback
port against an existing table, prints the port, and runs until its standard input closes.

    python -m tests.metrics_worker ENDPOINT TABLE
"""

from __future__ import annotations

import asyncio
import sys

from aiohttp import web

from leaderboard.app import create_app
from leaderboard.backend import LOCAL_CREDENTIALS
from leaderboard.config import Settings

API_KEY = "test-key-current"


async def serve(endpoint: str, table: str) -> None:
    settings = Settings(
        endpoint_url=endpoint,
        region="us-east-1",
        table=table,
        cursor_secret=b"test-cursor-secret-0123456789",
        api_keys=(API_KEY,),
    )
    runner = web.AppRunner(create_app(settings, credentials=LOCAL_CREDENTIALS))
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        print(runner.addresses[0][1], flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1], sys.argv[2]))
