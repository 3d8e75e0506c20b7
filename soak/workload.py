"""The soak's world (boards of every operator and sort order, two periodic families, players)
and its workload: clients that mix reads with submissions concentrated on a few hot players,
and now and then moderate (:mod:`soak.moderation`): remove an entry, ban a hot player for a
moment, erase a player.

Every random choice of a client goes through its own ``random.Random``.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any

from ulid import ULID

from soak.client import Answer, GraphQLClient
from soak.ledger import Ack, Ledger, Play
from soak.moderation import Moderation, ModerationConfig, email_of

__all__ = [
    "BOARDS",
    "CLOSED_BOARD",
    "FAMILIES",
    "GAMES",
    "BoardSpec",
    "FamilySpec",
    "Workload",
    "WorkloadConfig",
    "create",
    "player_ids",
    "setup",
]

GAMES = ("arena", "racer", "puzzle")
MAX_PLAY = 999
"""Plays score 0..999, so that equal scores (ties) happen often."""


@dataclass(frozen=True)
class BoardSpec:
    id: str
    operator: str
    sort_order: str
    width: int
    partitions: int = 1


@dataclass(frozen=True)
class FamilySpec:
    id: str
    period: str
    operator: str
    sort_order: str
    width: int
    partitions: int = 1


BOARDS = (
    BoardSpec("hot-best", "BEST", "DESC", 10),
    BoardSpec("hot-best-asc", "BEST", "ASC", 6, partitions=4),
    BoardSpec("hot-latest", "LATEST", "DESC", 10),
    BoardSpec("hot-latest-asc", "LATEST", "ASC", 6, partitions=2),
    BoardSpec("hot-total", "INCREMENT", "DESC", 12, partitions=8),
    BoardSpec("hot-total-asc", "INCREMENT", "ASC", 12),
    BoardSpec("narrow", "BEST", "DESC", 3),
)
"""The hot boards every play enters one to three of. ``narrow`` holds at most 999: a larger
score is refused with SCORE_OUT_OF_RANGE. Three are write-sharded (``partitions``), so that
the checks hold on either layout."""
FAMILIES = (
    FamilySpec("daily", "DAILY", "BEST", "DESC", 10),
    FamilySpec("weekly", "WEEKLY", "INCREMENT", "DESC", 12, partitions=4),
)
CLOSED_BOARD = "closed"
"""A board whose period is over: any play naming it is refused with LEADERBOARD_CLOSED."""
_CLOSED_WINDOW = ("2020-01-01T00:00:00Z", "2020-01-02T00:00:00Z")


@dataclass(frozen=True)
class WorkloadConfig:
    players: int = 200
    hot_players: int = 6
    hot_share: float = 0.7
    """Share of submissions that go to the hot players."""
    write_share: float = 0.2
    """Share of client steps that are submissions."""
    moderation: ModerationConfig = field(default_factory=ModerationConfig)


def player_ids(count: int) -> list[str]:
    return [f"soak-{n:04d}" for n in range(count)]


CREATE_BOARD = """mutation($i: CreateLeaderboardInput!) { createLeaderboard(input: $i) {
  leaderboard { id } errors { code message } } }"""
CREATE_FAMILY = """mutation($i: CreateLeaderboardFamilyInput!) {
  createLeaderboardFamily(input: $i) { family { id } errors { code message } } }"""
CREATE_PLAYER = """mutation($i: CreatePlayerInput!) { createPlayer(input: $i) {
  player { id } errors { code message } } }"""

SUBMIT = """mutation Submit($i: SubmitScoreInput!) { submitScore(input: $i) {
  duplicate
  session { id score gameId playedAt leaderboardIds submissionId }
  entries { leaderboardId improved score { score } rank { rank total } }
  errors { code message field } } }"""

TOP = """query Top($id: ID!, $first: Int!, $after: String) { leaderboard(id: $id) {
  id sortOrder entryCount
  topScores(first: $first, after: $after) {
    edges { cursor node { rank score attainedAt player { id name } } }
    pageInfo { hasNextPage endCursor } } } }"""
RANK = """query Rank($p: ID!, $b: ID!) { player(id: $p) { id
  rank(leaderboardId: $b) { rank total percentile score { score } } } }"""
AROUND = """query Around($b: ID!, $p: ID!) { leaderboard(id: $b) { id sortOrder entryCount
  around(playerId: $p, before: 5, after: 5) { rank total score { score player { id name } } } } }"""
PROFILE = """query Profile($p: ID!, $boards: [ID!]!, $main: ID!) { player(id: $p) {
  id name lifetimeScore gamesPlayed
  ranks(leaderboardIds: $boards) { rank total score { score leaderboard { id } } }
  bestScore(leaderboardId: $main) { score rank attainedAt }
  sessions(first: 10) { edges { node { id gameId score playedAt leaderboardIds } }
    pageInfo { hasNextPage endCursor } } } }"""
SESSION = """query Session($p: ID!, $s: ID!) { session(playerId: $p, sessionId: $s) {
  id score gameId leaderboardIds } }"""
GAME_SESSIONS = """query Game($g: ID!) { gameSessions(gameId: $g, first: 20) {
  edges { node { id score playedAt player { id name } } } } }"""
FAMILY = """query Family($f: ID!, $p: ID!) { leaderboardFamily(id: $f) { id
  current { id entryCount topScores(first: 10) { edges { node { rank score player { id } } } }
    rankOf(playerId: $p) { rank total } } } }"""
PLAYERS = """query Players($ids: [ID!]!) { players(ids: $ids) { id gamesPlayed lifetimeScore } }"""


async def create(client: GraphQLClient, query: str, field: str, variables: dict[str, Any]) -> None:
    answer = await client.request("setup", query, {"i": variables})
    if not answer.ok or answer.data[field]["errors"]:
        raise RuntimeError(f"setup failed: {field} {variables}: {answer}")


async def setup(client: GraphQLClient, players: Sequence[str]) -> None:
    """Create the boards, the families and the players."""
    for board in BOARDS:
        await create(
            client,
            CREATE_BOARD,
            "createLeaderboard",
            {
                "id": board.id,
                "name": board.id,
                "period": "GLOBAL",
                "operator": board.operator,
                "sortOrder": board.sort_order,
                "scoreWidth": board.width,
                "partitions": board.partitions,
            },
        )
    starts, ends = _CLOSED_WINDOW
    await create(
        client,
        CREATE_BOARD,
        "createLeaderboard",
        {
            "id": CLOSED_BOARD,
            "name": "closed",
            "period": "SEASON",
            "startsAt": starts,
            "endsAt": ends,
        },
    )
    for family in FAMILIES:
        await create(
            client,
            CREATE_FAMILY,
            "createLeaderboardFamily",
            {
                "id": family.id,
                "name": family.id,
                "period": family.period,
                "operator": family.operator,
                "sortOrder": family.sort_order,
                "scoreWidth": family.width,
                "partitions": family.partitions,
            },
        )
    for i in range(0, len(players), 20):
        await asyncio.gather(
            *(
                create(
                    client,
                    CREATE_PLAYER,
                    "createPlayer",
                    {"id": p, "name": f"Soak {p}", "email": email_of(p)},
                )
                for p in players[i : i + 20]
            )
        )


_REPLAYABLE_MAX = 1000


class Workload:
    """The steps the clients take, and what they learned (the ledger)."""

    def __init__(self, client: GraphQLClient, config: WorkloadConfig, ledger: Ledger) -> None:
        self.client = client
        self.config = config
        self.ledger = ledger
        self.players = player_ids(config.players)
        self.hot = self.players[: config.hot_players]
        self.replayable: list[Play] = []
        """Acknowledged plays that carry a submissionId, to send again."""
        self.orders = {b.id: b.sort_order for b in BOARDS}
        self.moderation = Moderation(
            client, ledger, config.moderation, self.players, self.hot, [b.id for b in BOARDS]
        )
        self.in_flight: Counter[str] = Counter()
        """Submissions under way, per player."""
        self.overlapping = 0
        """Submissions sent while another of the same player was under way: the races."""
        self.max_in_flight = 0
        self._submits: list[tuple[float, Callable[[random.Random], Awaitable[None]]]] = [
            (0.55, self._plain),
            (0.25, self._retried),
            (0.07, self._replay),
            (0.05, self._reuse),
            (0.04, self._out_of_range),
            (0.04, self._closed),
        ]
        self._reads: list[tuple[float, Callable[[random.Random], Awaitable[None]]]] = [
            (0.25, self._top),
            (0.12, self._rank),
            (0.15, self._around),
            (0.20, self._profile),
            (0.10, self._session),
            (0.06, self._game_sessions),
            (0.07, self._family),
            (0.05, self._players),
        ]

    async def run_client(self, rng: random.Random, deadline: float) -> None:
        """Take steps until ``deadline`` (time.monotonic())."""
        while time.monotonic() < deadline:
            step = self.moderation.due(rng)
            if step is None and rng.random() < self.config.moderation.removal_share:
                step = self.moderation.remove
            if step is None:
                steps = self._submits if rng.random() < self.config.write_share else self._reads
                step = _pick(rng, steps)
            await step(rng)

    # -- submissions -------------------------------------------------------------------------

    def _player(self, rng: random.Random) -> str:
        return rng.choice(self.hot if rng.random() < self.config.hot_share else self.players)

    def _new_play(self, rng: random.Random, *, submission_id: str | None = None) -> Play:
        boards = tuple(b.id for b in rng.sample(BOARDS, rng.choice((1, 1, 2, 3))))
        families = (
            tuple(f.id for f in rng.sample(FAMILIES, rng.choice((1, 2))))
            if rng.random() < 0.3
            else ()
        )
        return Play(
            player_id=self._player(rng),
            game_id=rng.choice(GAMES),
            score=0 if rng.random() < 0.05 else rng.randint(1, MAX_PLAY),
            leaderboard_ids=boards,
            family_ids=families,
            duration_sec=rng.randint(30, 900),
            submission_id=submission_id,
        )

    async def _send(self, play: Play, op: str, expect: str | None = None) -> Ack | None:
        """Submit ``play``; an acknowledgement, or None when refused or failed. ``expect`` is
        the typed error the play must be refused with."""
        player = play.player_id
        if self.in_flight[player]:
            self.overlapping += 1
        self.in_flight[player] += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight[player])
        sent_at = time.monotonic()
        try:
            answer = await self.client.request(op, SUBMIT, {"i": play.variables()})
        finally:
            self.in_flight[player] -= 1
        if not answer.ok:
            self.ledger.unknown += 1
            return None
        payload = answer.data["submitScore"]
        errors = payload["errors"]
        if errors:
            code = str(errors[0]["code"])
            if code == expect or self.moderation.provoked(player, code, sent_at):
                self.client.stats.error(op, code, expected=True)
                self.ledger.refused.append((play, code))
            else:
                self.client.stats.error(op, code, expected=False, detail=str(errors))
                self.ledger.unknown += 1
            return None
        session = payload["session"]
        if session is None:
            self.ledger.anomaly(f"submission {play}", "acknowledged without a session")
            return None
        if expect is not None:
            self.ledger.anomaly(f"session {play.player_id}/{session['id']}", f"not {expect}")
        ack = Ack(
            play=play,
            session_id=str(session["id"]),
            session=session,
            entry_boards=tuple(str(e["leaderboardId"]) for e in payload["entries"]),
            duplicate=bool(payload["duplicate"]),
            sent_at=sent_at,
        )
        self.ledger.acknowledge(ack)
        return ack

    async def submit(self, play: Play, op: str) -> float | None:
        """Send ``play`` as a client does (its outcome goes into the ledger); when its
        acknowledgement arrived (``time.monotonic()``), or None when it was not
        acknowledged."""
        ack = await self._send(play, op)
        return None if ack is None else time.monotonic()

    def _remember(self, play: Play) -> None:
        self.replayable.append(play)
        if len(self.replayable) > _REPLAYABLE_MAX:
            del self.replayable[: _REPLAYABLE_MAX // 2]

    async def _plain(self, rng: random.Random) -> None:
        await self._send(self._new_play(rng), "submitScore")

    async def _retried(self, rng: random.Random) -> None:
        """One play sent two or three times at once under one submissionId, as a game server
        retrying a request it believes lost."""
        play = self._new_play(rng, submission_id=str(ULID()))
        sends = rng.choice((2, 3))
        acks = await asyncio.gather(
            *(self._send(play, "submitScore (idempotent)") for _ in range(sends))
        )
        if any(acks):
            self._remember(play)

    async def _replay(self, rng: random.Random) -> None:
        """An acknowledged play sent again later: answered as a duplicate, nothing written."""
        if not self.replayable:
            await self._plain(rng)
            return
        play = rng.choice(self.replayable)
        ack = await self._send(play, "submitScore (replay)")
        if ack is not None and not ack.duplicate:
            self.ledger.anomaly(
                f"submission {play.player_id}/{play.submission_id}",
                "a replay of an acknowledged play answered duplicate: false",
            )

    async def _reuse(self, rng: random.Random) -> None:
        """A recorded submissionId with different content: SUBMISSION_ID_REUSED."""
        if not self.replayable:
            await self._plain(rng)
            return
        play = rng.choice(self.replayable)
        changed = replace(play, score=(play.score + 1) % (MAX_PLAY + 1))
        await self._send(changed, "submitScore (reused id)", expect="SUBMISSION_ID_REUSED")

    async def _out_of_range(self, rng: random.Random) -> None:
        """A play too large for ``narrow``, named with another board: nothing is written."""
        other = rng.choice([b.id for b in BOARDS if b.id != "narrow"])
        play = replace(
            self._new_play(rng, submission_id=str(ULID())),
            leaderboard_ids=(other, "narrow"),
            score=rng.randint(MAX_PLAY + 1, 99_999),
        )
        await self._send(play, "submitScore (out of range)", expect="SCORE_OUT_OF_RANGE")

    async def _closed(self, rng: random.Random) -> None:
        """A play naming a closed board after an open one: nothing is written anywhere."""
        play = self._new_play(rng, submission_id=str(ULID()))
        play = replace(play, leaderboard_ids=(*play.leaderboard_ids, CLOSED_BOARD))
        await self._send(play, "submitScore (closed board)", expect="LEADERBOARD_CLOSED")

    # -- reads -------------------------------------------------------------------------------

    def _reader(self, rng: random.Random) -> str:
        return rng.choice(self.hot if rng.random() < 0.5 else self.players)

    async def _read(
        self, op: str, query: str, variables: dict[str, Any], player: str | None = None
    ) -> Answer:
        """A read; about ``player``, it may find the player erased (PLAYER_NOT_FOUND). A read
        the service refuses for want of time or room is sent again, twice at most."""
        expected = self.moderation.read_error(player) if player is not None else None
        return await self.client.request(op, query, variables, expected=expected, retries=2)

    def _erasing(self, player: str) -> bool:
        return player in self.ledger.erasing

    async def _top(self, rng: random.Random) -> None:
        board = rng.choice(BOARDS).id
        first = rng.choice((10, 20, 100))
        answer = await self._read("top scores", TOP, {"id": board, "first": first})
        if not answer.ok:
            return
        page = answer.data["leaderboard"]["topScores"]
        self._check_page(f"top scores of {board}", board, page["edges"], first_page=True)
        if page["pageInfo"]["hasNextPage"] and rng.random() < 0.3:
            after = page["pageInfo"]["endCursor"]
            answer = await self._read(
                "top scores (next page)", TOP, {"id": board, "first": first, "after": after}
            )
            if answer.ok:
                edges = answer.data["leaderboard"]["topScores"]["edges"]
                self._check_page(f"next page of {board}", board, edges, first_page=False)

    def _check_page(self, subject: str, board: str, edges: list[Any], *, first_page: bool) -> None:
        """Within one page: scores in board order, ranks in step with them, each player once."""
        nodes = [e["node"] for e in edges]
        ids = [n["player"]["id"] for n in nodes]
        if len(set(ids)) != len(ids):
            self.ledger.anomaly(subject, f"a player listed twice: {ids}")
        if first_page:
            scores = [n["score"] for n in nodes]
            ranks = [n["rank"] for n in nodes]
            if ranks != [1 + scores.index(score) for score in scores]:
                self.ledger.anomaly(subject, f"ranks {ranks} for scores {scores}")
        desc = self.orders.get(board, "DESC") == "DESC"
        for a, b in pairwise(nodes):
            worse = b["score"] < a["score"] if desc else b["score"] > a["score"]
            if b["score"] != a["score"] and not worse:
                self.ledger.anomaly(subject, f"score {b['score']} listed after {a['score']}")
            if (b["rank"] > a["rank"]) != worse or b["rank"] < a["rank"]:
                self.ledger.anomaly(
                    subject,
                    f"rank {b['rank']} ({b['score']}) after rank {a['rank']} ({a['score']})",
                )

    def _entry_lost(self, player: str, board: str, epoch: int | None) -> bool:
        """Whether the player's entry on the board, which had to be there when the read was
        sent (``epoch`` not None), was missing from its answer with no moderation since."""
        return epoch is not None and self.ledger.still_expected(player, board, epoch)

    async def _rank(self, rng: random.Random) -> None:
        player, board = self._reader(rng), rng.choice(BOARDS).id
        epoch = self.ledger.entry_expected(player, board)
        answer = await self._read("rank", RANK, {"p": player, "b": board}, player)
        if not answer.ok:
            return
        found = answer.data["player"]
        if found is None:
            if not self._erasing(player):
                self.ledger.anomaly(f"rank of {player}", "null for an existing player")
            return
        rank = found["rank"]
        if rank is None and self._entry_lost(player, board, epoch):
            self.ledger.anomaly(f"rank of {player} on {board}", "null after an acknowledged play")
        elif rank is not None and not 1 <= rank["rank"] <= rank["total"]:
            self.ledger.anomaly(f"rank of {player} on {board}", f"{rank}")

    async def _around(self, rng: random.Random) -> None:
        player, board = self._reader(rng), rng.choice(BOARDS).id
        epoch = self.ledger.entry_expected(player, board)
        answer = await self._read("around me", AROUND, {"b": board, "p": player}, player)
        if not answer.ok:
            return
        around = answer.data["leaderboard"]["around"]
        subject = f"around {player} on {board}"
        if around is None:
            if self._entry_lost(player, board, epoch):
                self.ledger.anomaly(subject, "null after an acknowledged play")
            return
        if player not in [r["score"]["player"]["id"] for r in around]:
            self.ledger.anomaly(subject, "the player is not in its own neighbourhood")
        ranks = [r["rank"] for r in around]
        if ranks != sorted(ranks):
            self.ledger.anomaly(subject, f"ranks out of order: {ranks}")

    async def _profile(self, rng: random.Random) -> None:
        player = self._reader(rng)
        boards = [b.id for b in rng.sample(BOARDS, 3)]
        played = self.ledger.acknowledged_sessions(player)
        answer = await self._read(
            "player profile", PROFILE, {"p": player, "boards": boards, "main": boards[0]}, player
        )
        if not answer.ok:
            return
        profile = answer.data["player"]
        subject = f"profile of {player}"
        if self._erasing(player):
            return  # its sessions are going, then the player
        if profile is None:
            self.ledger.anomaly(subject, "null for an existing player")
            return
        if profile["gamesPlayed"] < played:
            self.ledger.anomaly(
                subject, f"gamesPlayed {profile['gamesPlayed']} after {played} acknowledged plays"
            )
        ids = [e["node"]["id"] for e in profile["sessions"]["edges"]]
        if ids != sorted(ids, reverse=True) or len(set(ids)) != len(ids):
            self.ledger.anomaly(subject, f"sessions not newest first: {ids}")

    async def _session(self, rng: random.Random) -> None:
        if not self.ledger.acks:
            await self._profile(rng)
            return
        ack = rng.choice(self.ledger.acks)
        player = ack.play.player_id
        answer = await self._read(
            "session by id", SESSION, {"p": player, "s": ack.session_id}, player
        )
        if not answer.ok:
            return
        session = answer.data["session"]
        if session is None and self._erasing(player):
            return
        if session is None or session["score"] != ack.play.score:
            self.ledger.anomaly(
                f"session {ack.play.player_id}/{ack.session_id}",
                f"read back as {session} after it was acknowledged",
            )

    async def _game_sessions(self, rng: random.Random) -> None:
        game = rng.choice(GAMES)
        answer = await self._read("game sessions", GAME_SESSIONS, {"g": game})
        if not answer.ok:
            return
        ids = [e["node"]["id"] for e in answer.data["gameSessions"]["edges"]]
        if ids != sorted(ids, reverse=True) or len(set(ids)) != len(ids):
            self.ledger.anomaly(f"sessions of {game}", f"not newest first: {ids}")

    async def _family(self, rng: random.Random) -> None:
        family, player = rng.choice(FAMILIES).id, self._reader(rng)
        await self._read("family boards", FAMILY, {"f": family, "p": player}, player)

    async def _players(self, rng: random.Random) -> None:
        ids = rng.sample(self.players, 20)
        answer = await self._read("players by id", PLAYERS, {"ids": ids})
        if not answer.ok:
            return
        got = [p["id"] if p else None for p in answer.data["players"]]
        if any(
            g != i and not (g is None and self._erasing(i)) for g, i in zip(got, ids, strict=False)
        ) or len(got) != len(ids):
            self.ledger.anomaly("players(ids)", f"asked {ids}, got {got}")


def _pick(
    rng: random.Random, weighted: list[tuple[float, Callable[[random.Random], Awaitable[None]]]]
) -> Callable[[random.Random], Awaitable[None]]:
    weights = [w for w, _ in weighted]
    return rng.choices([f for _, f in weighted], weights=weights)[0]
