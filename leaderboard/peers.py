"""The workers of one master telling each other of their writes, without Redis.

Each worker of ``leaderboard serve --workers N`` is a whole instance of the service: a play
made through one wakes that worker's subscribers and evicts what it changed from that
worker's response cache when it commits. Its siblings would otherwise hear of it only
through the change feed (which takes Redis) or their subscribers' refresh. So the workers of
one master form a small mesh on the host: the master makes a directory before it forks, each
worker listens on a Unix socket there named by its process id, and connects to every socket
it finds at its start (those that start later connect to it). Over these connections each
write's notices (the ones a change feed would carry) go to every sibling the moment the
write commits, before the mutation answers, and a sibling applies them as it applies the
feed's: an eviction, a shared re-read of the board by its subscribers, and its reads of the
board kept consistent for a few seconds.

Each connection carries lines of JSON: ``{"hello": pid}`` first, then ``{"n": [notice, ...]}``
for a write's notices (at most :data:`NOTICES_PER_LINE` a line) or ``{"r": 1}`` when a
write may or may not have been made (its outcome unknown: a sibling then treats it as a lost
place, as the change feed does). Every pair of workers talks over one connection each way
at most, so a notice reaches each sibling once.

A sibling that stops reading (more than :data:`MAX_BUFFER_BYTES` waiting for it) is cut
off: it reads the end of the connection once it reads again, treats that as a lost place
(everything may have changed: its cache is emptied and its subscribers re-read) and
connects again. A sibling that died leaves its socket behind until the master removes it;
connecting to it is refused, and it is forgotten.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from rankindex.notices import Notice, decode, encode

__all__ = [
    "GREETING_TIMEOUT",
    "MAX_BUFFER_BYTES",
    "MAX_LINE_BYTES",
    "NOTICES_PER_LINE",
    "WorkerPeers",
    "peers_directory",
    "socket_path",
]

log = logging.getLogger("leaderboard.peers")

NOTICES_PER_LINE = 100
"""Notices sent in one line at most (a ban or an erasure may change many boards)."""
MAX_LINE_BYTES = 1 << 20
"""The longest line a worker reads from a sibling (100 notices take a few kilobytes)."""
MAX_BUFFER_BYTES = 1 << 20
"""Bytes waiting for a sibling above which it is cut off (it resyncs and reconnects)."""
GREETING_TIMEOUT = 2.0
"""Seconds a new connection has to greet before it is closed."""
_SUFFIX = ".sock"


def socket_path(directory: Path, pid: int) -> Path:
    """Where the worker of process ``pid`` listens."""
    return directory / f"{pid}{_SUFFIX}"


def _hello(pid: int) -> bytes:
    return json.dumps({"hello": pid}).encode() + b"\n"


@contextlib.contextmanager
def peers_directory() -> Iterator[Path]:
    """A directory of the workers' sockets for one run of the master, removed after it."""
    directory = Path(tempfile.mkdtemp(prefix="leaderboard-peers-"))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


class WorkerPeers:
    """This worker's end of the mesh: :meth:`tell` sends notices to every sibling, and the
    siblings' notices go to ``on_notice`` (a lost place to ``on_resync``)."""

    def __init__(
        self,
        directory: Path,
        *,
        on_notice: Callable[[Notice], None],
        on_resync: Callable[[], None],
        pid: int | None = None,
    ) -> None:
        self.directory = directory
        self.pid = os.getpid() if pid is None else pid
        self.path = socket_path(directory, self.pid)
        self._on_notice = on_notice
        self._on_resync = on_resync
        self._server: asyncio.AbstractServer | None = None
        self._senders: dict[int, asyncio.StreamWriter] = {}
        """One connection per sibling to send on (whichever was made first)."""
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        self.sent = 0
        """Lines sent to siblings."""
        self.received = 0
        """Notices received from siblings."""
        self.resyncs = 0
        """Lost places: a sibling's connection ended, or it reported an unknown outcome."""

    @property
    def siblings(self) -> list[int]:
        """The process ids of the siblings this worker sends to."""
        return sorted(self._senders)

    async def start(self) -> None:
        """Listen, then connect to every sibling already listening."""
        self._server = await asyncio.start_unix_server(
            self._accepted, path=str(self.path), limit=MAX_LINE_BYTES
        )
        for path in sorted(self.directory.glob(f"*{_SUFFIX}")):
            if path != self.path:
                await self._connect(path)

    async def stop(self) -> None:
        self._closing = True
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def tell(self, notices: Sequence[Notice]) -> None:
        """Send a committed write's notices to every sibling (never blocks, never fails)."""
        for start in range(0, len(notices), NOTICES_PER_LINE):
            chunk = notices[start : start + NOTICES_PER_LINE]
            self._send({"n": [encode(notice) for notice in chunk]})

    def tell_resync(self) -> None:
        """A write through this worker may or may not have been made: every sibling treats
        it as a lost place."""
        self._send({"r": 1})

    def status(self) -> dict[str, object]:
        """What ``/healthz`` shows of the mesh."""
        return {
            "siblings": len(self._senders),
            "sent": self.sent,
            "received": self.received,
            "resyncs": self.resyncs,
        }

    def _send(self, message: dict[str, object]) -> None:
        if not self._senders:
            return
        line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        for pid, writer in list(self._senders.items()):
            if writer.is_closing():
                self._forget(pid, writer)
            elif writer.transport.get_write_buffer_size() > MAX_BUFFER_BYTES:
                log.warning("sibling worker %d is not reading: cut off", pid)
                self._forget(pid, writer)
                writer.close()
            else:
                writer.write(line)
                self.sent += 1

    async def _connect(self, path: Path) -> None:
        """Connect to the sibling listening at ``path`` and greet it; it greets back once it
        sends to this worker, so a notice of any write it commits after that reaches us."""
        try:
            reader, writer = await asyncio.open_unix_connection(str(path), limit=MAX_LINE_BYTES)
        except OSError:
            return  # a sibling that has gone: the master removes its socket
        writer.write(_hello(self.pid))
        pid = await self._greeted(reader, writer)
        if pid is not None:
            self._follow(reader, writer, pid)

    async def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        pid = await self._greeted(reader, writer)
        if pid is not None:
            writer.write(_hello(self.pid))
            self._follow(reader, writer, pid)

    async def _greeted(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> int | None:
        """The sibling's process id from its greeting, the connection then kept to send to
        it (unless one is kept already); None, the connection closed, if it sent none."""
        try:
            line = await asyncio.wait_for(reader.readline(), GREETING_TIMEOUT)
            pid = int(json.loads(line)["hello"])
        except (OSError, ValueError, TypeError, KeyError, TimeoutError):
            writer.close()
            return None
        self._senders.setdefault(pid, writer)
        return pid

    def _follow(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, pid: int) -> None:
        self._writers.add(writer)
        task = asyncio.create_task(self._read(reader, writer, pid))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _read(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, pid: int
    ) -> None:
        try:
            while line := await reader.readline():
                message = json.loads(line)
                if "r" in message:
                    self._lost()
                    continue
                for fields in message["n"]:
                    notice = decode(fields)
                    if notice is not None:
                        self.received += 1
                        self._on_notice(notice)
        except (OSError, ValueError, TypeError, KeyError):
            pass  # a broken or garbled connection: a lost place, as below
        finally:
            self._writers.discard(writer)
            self._forget(pid, writer)
            writer.close()
        if self._closing:
            return
        # Notices may have been lost with the connection: everything may have changed.
        self._lost()
        path = socket_path(self.directory, pid)
        if path.exists() and pid not in self._senders:
            await self._connect(path)

    def _lost(self) -> None:
        self.resyncs += 1
        self._on_resync()

    def _forget(self, pid: int, writer: asyncio.StreamWriter) -> None:
        if self._senders.get(pid) is writer:
            del self._senders[pid]
