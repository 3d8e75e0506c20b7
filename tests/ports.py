"""Loopback ports that a test holds for itself, so that no other process (another run of the
suite on the same machine among them) can take them while the test counts on them."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["reserved_port"]


@contextmanager
def reserved_port() -> Iterator[int]:
    """A loopback port held for the block by a socket bound to it (with SO_REUSEADDR) that
    never listens. No other process can bind the port meanwhile, and the kernel gives it to
    no one as a free or an outgoing port; a server started on it can still listen there
    (DynamoDB Local, redis-server and the service bind with SO_REUSEADDR too). While nothing
    listens on it, connections to it are refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", 0))
        port: int = holder.getsockname()[1]
        yield port
