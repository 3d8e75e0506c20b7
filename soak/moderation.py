"""The soak's moderators: removals of entries, bans of hot players lifted shortly after, and
erasures of players, sent with the admin key among the clients' plays and reads.

A moderation step records in the ledger what it touches, from the moment it is sent until it
is answered, so that reads and the final check can tell a moderated entry from a lost one;
and it answers which typed errors of other requests it provoked (``PLAYER_BANNED`` during a
ban, ``PLAYER_NOT_FOUND`` once an erasure began).
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from soak.client import Answer, GraphQLClient
from soak.ledger import Ledger

__all__ = ["Moderation", "ModerationConfig", "email_of"]

REMOVE = """mutation Remove($i: RemoveEntryInput!) { removeEntry(input: $i) {
  removed { leaderboardId score } errors { code message } } }"""
BAN = """mutation Ban($i: BanPlayerInput!) { banPlayer(input: $i) {
  action { id removedCount } errors { code message } } }"""
UNBAN = """mutation Unban($i: UnbanPlayerInput!) { unbanPlayer(input: $i) {
  action { id } errors { code message } } }"""
ERASE = """mutation Erase($i: ErasePlayerInput!) { erasePlayer(input: $i) {
  complete erased { entries sessions } errors { code message } } }"""

BUSY = "SUBMISSION_CONFLICT"
"""A moderation that met a player changing too often: nothing was lost, send it again."""
UNAVAILABLE = "BACKEND_UNAVAILABLE"
"""DynamoDB gave no answer in time; a ban, an unban or an erasure so refused may be partly
done and is sent again, as its message tells an operator to (the error still counts as an
unexpected one)."""
SCHEDULED_REMOVALS = 3
"""Removals of an entry a recent play made, spread over a run, besides the random ones."""
_ATTEMPTS = 10
"""How many times a ban, an unban or an erasure is sent before it is given up."""


def email_of(player_id: str) -> str:
    """The e-mail address the soak gives a player."""
    return f"{player_id}@soak.example"


@dataclass(frozen=True)
class ModerationConfig:
    removal_share: float = 0.01
    """Share of client steps that remove an entry."""
    ban_every: float = 5.0
    """Seconds between bans of a hot player (each lifted shortly after)."""
    unban_after: tuple[float, float] = (0.3, 1.5)
    """How long a ban lasts, in seconds: drawn between these."""
    erasures: int = 5
    """Players erased per run, spread over it."""


@dataclass
class Moderation:
    """The moderation steps of the clients, and which errors they provoke."""

    client: GraphQLClient
    ledger: Ledger
    config: ModerationConfig
    players: Sequence[str]
    hot: Sequence[str]
    boards: Sequence[str]
    """The boards whose entries removals take."""
    counts: Counter[str] = field(default_factory=Counter)
    """What the moderators did, by kind (``removals``, ``bans``, ...)."""
    _bans: dict[str, list[list[float]]] = field(default_factory=dict)
    """playerId -> its bans as [sent, lifted] (``time.monotonic()``; lifted is +inf while
    the ban stands or its lifting is unanswered)."""
    _next_ban: float = math.inf
    _next_erasure: float = math.inf
    _erase_every: float = math.inf
    _next_removal: float = math.inf
    _remove_every: float = math.inf

    def start(self, started: float, seconds: float) -> None:
        """Schedule the bans, erasures and removals of a run from ``started`` for
        ``seconds``."""
        self._next_ban = started + min(self.config.ban_every, seconds / 3)
        self._remove_every = seconds / (SCHEDULED_REMOVALS + 1)
        self._next_removal = started + self._remove_every
        if self.config.erasures:
            self._erase_every = seconds / (self.config.erasures + 1)
            self._next_erasure = started + self._erase_every

    def due(self, rng: random.Random) -> Callable[[random.Random], Awaitable[None]] | None:
        """The ban, erasure or removal whose time has come, claimed by the caller; None when
        none."""
        now = time.monotonic()
        if now >= self._next_ban:
            self._next_ban = now + self.config.ban_every
            return self.ban
        if now >= self._next_erasure:
            self._next_erasure = now + self._erase_every
            return self.erase
        if now >= self._next_removal:
            self._next_removal = now + self._remove_every
            return self.remove_entered
        return None

    # -- which errors moderation provokes ---------------------------------------------------

    def provoked(self, player_id: str, code: str, sent_at: float) -> bool:
        """Whether a request about ``player_id`` sent at ``sent_at`` and answered now with
        ``code`` met a moderation: a ban standing at some time in between, or an erasure."""
        if code == "PLAYER_NOT_FOUND":
            return player_id in self.ledger.erasing
        if code == "PLAYER_BANNED":
            now = time.monotonic()
            return any(
                banned <= now and sent_at <= lifted
                for banned, lifted in self._bans.get(player_id, ())
            )
        return False

    def read_error(self, player_id: str) -> Callable[[str], bool]:
        """The expected errors of a read about ``player_id``: an erased player is unknown, and
        a rank the index (a moment behind the table) gives of an entry an operator removed is
        ENTRY_NOT_FOUND."""

        def expected(code: str) -> bool:
            if code == "PLAYER_NOT_FOUND":
                return player_id in self.ledger.erasing
            return code == "ENTRY_NOT_FOUND" and self.ledger.moderated(player_id)

        return expected

    # -- the steps ----------------------------------------------------------------------------

    async def _moderate(
        self, op: str, query: str, variables: dict[str, Any], field: str, expected: set[str]
    ) -> tuple[dict[str, Any] | None, str | None]:
        """One moderation request: its payload and its typed error's code, or (None, None)
        when it failed (already counted as unexpected)."""
        answer: Answer = await self.client.request(op, query, {"i": variables}, admin=True)
        if not answer.ok:
            return None, None
        payload: dict[str, Any] = answer.data[field]
        errors = payload.get("errors") or []
        if not errors:
            return payload, None
        code = str(errors[0]["code"])
        self.client.stats.error(op, code, expected=code in expected, detail=str(errors))
        return payload, code

    async def remove(self, rng: random.Random) -> None:
        """Remove a player's entry on a board: half the time one a recent play entered and no
        moderation took since, else any player's on any board (often none: ENTRY_NOT_FOUND)."""
        picked = self._entered(rng) if rng.random() < 0.5 else None
        if picked is None:
            picked = (
                rng.choice(self.hot if rng.random() < 0.5 else self.players),
                rng.choice(self.boards),
            )
        await self._remove(*picked)

    async def remove_entered(self, rng: random.Random) -> None:
        """A scheduled removal, of an entry a recent play made, so that a run takes entries
        off boards however few steps its clients take; when no play has entered one yet, or
        the entry picked is gone already, it is due again a second later."""
        picked = self._entered(rng)
        if picked is None or await self._remove(*picked) == "ENTRY_NOT_FOUND":
            # The entry picked was gone already: its player banned or erased meanwhile.
            self._next_removal = time.monotonic() + 1.0

    async def _remove(self, player: str, board: str) -> str | None:
        """Send the removal; the code of its error, None when it took the entry."""
        expected = {"ENTRY_NOT_FOUND", BUSY}
        if player in self.ledger.erasing:
            expected.add("PLAYER_NOT_FOUND")
        self.ledger.moderation_sent(player, board)
        try:
            payload, code = await self._moderate(
                "removeEntry",
                REMOVE,
                {"leaderboardId": board, "playerId": player, "reason": "soak: cheated entry"},
                "removeEntry",
                expected,
            )
        finally:
            self.ledger.moderation_answered(player, board)
        if payload is not None and code is None:
            self.counts["removals"] += 1
        elif code == "ENTRY_NOT_FOUND":
            self.counts["removals of no entry"] += 1
        return code

    def _entered(self, rng: random.Random) -> tuple[str, str] | None:
        """A (player, board) that a recent acknowledged play of one of the workload's players
        entered, with no moderation of it since; None when a few tries find none. Plays of
        other players (the staleness probes) are never taken."""
        ours = set(self.players)
        recent = [ack for ack in self.ledger.acks[-200:] if ack.play.player_id in ours]
        for _ in range(8 if recent else 0):
            ack = rng.choice(recent)
            pair = (ack.play.player_id, rng.choice(ack.play.leaderboard_ids))
            if self.ledger.entry_expected(*pair) is not None:
                return pair
        return None

    async def ban(self, rng: random.Random) -> None:
        """Ban a hot player (racing its plays on every instance), then lift the ban shortly
        after. A ban is sent again until it answers complete."""
        banned = {p for p, bans in self._bans.items() if bans and math.isinf(bans[-1][1])}
        free = [p for p in self.hot if p not in banned and p not in self.ledger.erasing]
        if not free:
            return
        player = rng.choice(free)
        window = [time.monotonic(), math.inf]
        self._bans.setdefault(player, []).append(window)
        self.ledger.moderation_sent(player)
        try:
            done = await self._until_done(
                "banPlayer", BAN, {"playerId": player, "reason": "soak: aimbot"}
            )
        finally:
            self.ledger.moderation_answered(player)
        if not done:
            return  # left in force: its plays stay refused, and the check knows the ban
        self.counts["bans"] += 1
        await asyncio.sleep(rng.uniform(*self.config.unban_after))
        if await self._until_done(
            "unbanPlayer",
            UNBAN,
            {"playerId": player, "reason": "soak: appeal upheld"},
            after_lost="PLAYER_NOT_BANNED",
        ):
            window[1] = time.monotonic()
            self.counts["unbans"] += 1

    async def _until_done(
        self, op: str, query: str, variables: dict[str, Any], *, after_lost: str = ""
    ) -> bool:
        """Send until answered without error, or with ``after_lost`` once a send's answer was
        lost (then that send did it). True when done."""
        unknown = False
        for _ in range(_ATTEMPTS):
            expected = {BUSY, after_lost} if unknown else {BUSY}
            payload, code = await self._moderate(op, query, variables, op, expected)
            if payload is not None and code is None:
                return True
            if code == UNAVAILABLE:
                unknown = True  # may be partly done: sent again, it completes it
            elif code is not None and code != BUSY:
                return unknown and code == after_lost
            unknown = unknown or payload is None
            await asyncio.sleep(0.05)
        return False

    async def erase(self, rng: random.Random) -> None:
        """Erase a player that is not hot (one that played, when there is one), each at most
        once, sending the erasure again while it answers complete: false."""
        left = [p for p in self.players if p not in self.hot and p not in self.ledger.erasing]
        played = [p for p in left if self.ledger.acknowledged_sessions(p)]
        if not left:
            return
        player = rng.choice(played or left)
        self.ledger.erasing[player] = email_of(player)
        self.ledger.moderation_sent(player)
        try:
            complete = await self._erase(player)
        finally:
            self.ledger.moderation_answered(player)
        if complete:
            self.ledger.erased.add(player)
            self.counts["erasures"] += 1

    async def _erase(self, player: str) -> bool:
        """Send the erasure until complete; True when it is."""
        unknown = False
        for _ in range(_ATTEMPTS * 2):
            self.counts["erasure calls"] += 1
            expected = {BUSY, "PLAYER_NOT_FOUND"} if unknown else {BUSY}
            payload, code = await self._moderate(
                "erasePlayer", ERASE, {"playerId": player}, "erasePlayer", expected
            )
            if payload is not None and code is None and payload["complete"]:
                return True
            if code == UNAVAILABLE:
                unknown = True  # may be partly done: sent again, it goes on from there
            elif code is not None and code != BUSY:
                return unknown and code == "PLAYER_NOT_FOUND"  # a lost send completed it
            unknown = unknown or payload is None
            if code is not None or payload is None:
                await asyncio.sleep(0.05)
        return False
