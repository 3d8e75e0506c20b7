"""Which DynamoDB a command talks to: a configured endpoint, or the embedded DynamoDB Local.

The embedded one keeps its data in a folder. Whoever starts it there holds a lock on that folder
and writes its endpoint beside the lock, so a second command (``leaderboard seed`` while
``leaderboard serve`` runs) talks to the running server instead of opening the same files.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aioboto3
from aiobotocore.config import AioConfig
from aiobotocore.credentials import AioCredentials
from aiobotocore.session import AioSession

from dynamo.cursors import CursorCodec
from dynamo.db import Db
from dynamo.direct import DirectCalls
from dynamo.streams import TableStream
from dynamo.wire import WireParserFactory
from leaderboard.config import Settings
from leaderboard.embedded_dynamodb import EmbeddedDynamoDB

__all__ = [
    "LOCAL_CREDENTIALS",
    "Backend",
    "open_backend",
    "open_stream",
    "open_table",
    "streams_endpoint",
]

LOCAL_CREDENTIALS = ("local", "local")
"""DynamoDB Local accepts any credentials; these keep the AWS credential chain out of it."""


@functools.cache
def _botocore() -> AioSession:
    """The botocore session beneath :func:`_aws`: its clients read attribute values straight
    from the wire (dynamo/wire.py), and it resolves the AWS credential chain."""
    botocore_session = AioSession()
    botocore_session.register_component("response_parser_factory", WireParserFactory())
    return botocore_session


@functools.cache
def _aws() -> aioboto3.Session:
    """The process's one AWS session: every client is made from it, so that the service
    models it parses (DynamoDB's and the Streams' API, the endpoint rules) are parsed once per
    process rather than once per client. Credentials and region are given per client."""
    return aioboto3.Session(botocore_session=_botocore())


async def _credentials(given: tuple[str, str] | None) -> Any:
    """The credentials a client made with ``given`` signs with: those, else the chain's (None
    when the chain finds none)."""
    if given is not None:
        return AioCredentials(given[0], given[1])
    return await _botocore().get_credentials()


_LOCK = ".lock"
_ENDPOINT = "endpoint.json"


@dataclass(frozen=True)
class Backend:
    endpoint_url: str | None
    credentials: tuple[str, str] | None
    embedded: bool
    """True when this process started DynamoDB Local (and so may create and seed the table)."""
    description: str


@contextlib.contextmanager
def open_backend(
    endpoint_url: str | None, *, cache_dir: Path, data_dir: Path | None, in_memory: bool = False
) -> Iterator[Backend]:
    """Yield the backend to use, starting DynamoDB Local when no endpoint is configured."""
    if endpoint_url:
        yield Backend(endpoint_url, None, embedded=False, description=endpoint_url)
        return
    if in_memory or data_dir is None:
        with EmbeddedDynamoDB(cache_dir) as local:
            yield Backend(
                local.endpoint_url,
                LOCAL_CREDENTIALS,
                embedded=True,
                description=f"embedded DynamoDB Local at {local.endpoint_url} (in memory)",
            )
        return
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / _LOCK, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            running = json.loads((data_dir / _ENDPOINT).read_text())["endpoint"]
            yield Backend(
                running,
                LOCAL_CREDENTIALS,
                embedded=False,
                description=f"the running embedded DynamoDB Local at {running}",
            )
            return
        with EmbeddedDynamoDB(cache_dir, data_dir=data_dir) as local:
            (data_dir / _ENDPOINT).write_text(
                json.dumps({"endpoint": local.endpoint_url, "pid": os.getpid()})
            )
            try:
                yield Backend(
                    local.endpoint_url,
                    LOCAL_CREDENTIALS,
                    embedded=True,
                    description=f"embedded DynamoDB Local at {local.endpoint_url} (data in "
                    f"{data_dir})",
                )
            finally:
                (data_dir / _ENDPOINT).unlink(missing_ok=True)


@contextlib.asynccontextmanager
async def open_table(
    settings: Settings, credentials: tuple[str, str] | None, *, config: AioConfig | None = None
) -> AsyncIterator[Db]:
    """The table of ``settings`` through a DynamoDB client of its own, closed on leaving.
    ``credentials`` override the AWS credential chain (DynamoDB Local accepts any)."""
    async with _aws().client(
        "dynamodb",
        endpoint_url=settings.endpoint_url,
        region_name=settings.region,
        config=config,
        aws_access_key_id=credentials[0] if credentials else None,
        aws_secret_access_key=credentials[1] if credentials else None,
    ) as client:
        signing = await _credentials(credentials)
        direct = None if signing is None else DirectCalls(client, signing)
        try:
            yield Db(
                client=client,
                table=settings.table,
                cursors=CursorCodec(settings.cursor_secret),
                direct=direct,
            )
        finally:
            if direct is not None:
                await direct.close()


def streams_endpoint(endpoint_url: str | None) -> str | None:
    """The DynamoDB Streams endpoint beside the DynamoDB endpoint ``endpoint_url``. DynamoDB
    Local (or any other stand-in) answers both APIs at one address; AWS answers Streams at an
    address of its own (``streams.dynamodb.<region>.amazonaws.com``), which the SDK finds by
    itself (or takes from ``AWS_ENDPOINT_URL_DYNAMODB_STREAMS``) when given none."""
    if endpoint_url is None:
        return None
    host = (urlsplit(endpoint_url).hostname or "").lower()
    aws = host.endswith((".amazonaws.com", ".amazonaws.com.cn", ".api.aws"))
    return None if aws else endpoint_url


@contextlib.asynccontextmanager
async def open_stream(
    settings: Settings, credentials: tuple[str, str] | None, db: Db
) -> AsyncIterator[TableStream]:
    """The stream of ``db``'s table, read through a DynamoDB Streams client of its own, closed
    on leaving."""
    async with _aws().client(
        "dynamodbstreams",
        endpoint_url=streams_endpoint(settings.endpoint_url),
        region_name=settings.region,
        aws_access_key_id=credentials[0] if credentials else None,
        aws_secret_access_key=credentials[1] if credentials else None,
    ) as streams:
        yield TableStream(db.client, streams, db.table)
