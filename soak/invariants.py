"""Exact invariants of a leaderboard table, checked over a full Scan.

The Session items are the record of every play; everything else must follow from them:

- every player's ``gamesPlayed`` and ``lifetimeScore`` are the count and the sum of its sessions;
- for every (player, board) the player played on, there is exactly one Score item and one entry
  guard, and they agree (the guard's ``scoreSk`` is the Score item's sort key and its
  partition the Score item's, same score, attainedAt, session, version and ttl); the Score
  item is in the player's partition of the board (its only one, or on a write-sharded board
  the one the player's hash picks);
- the Score item holds the board operator's result over the player's sessions on that board,
  in play order (``playedAt``, then the time-sortable ``sessionId``): the best score, the
  latest score, or the sum; and it names a session that set it, with that session's
  ``playedAt`` as its ``attainedAt``: for BEST one with the best score, for LATEST the latest
  session, for INCREMENT the latest session with a non-zero score (or a later zero play that
  entered first); its version (how many plays changed it) is between 1 and the number of
  sessions. With ``single_writer`` (one service process recorded every play: its per-player
  queue commits a player's plays in play order) the entry is exact: the earliest of equal best
  scores, and its version is the number of plays that changed it;
- no Score item or guard exists without a session on its board;
- an entry an operator removed (``removeEntry``) counts no session played up to the removal:
  the entry is the operator's result over the later ones, and without any its guard is a
  tombstone (``removed``) and it has no Score item (its versions continue across the
  removal, so they are only checked to grow); with several processes, a play whose time is
  within ``RACE_WINDOW`` of the removal may have landed on either side of it (the
  ``MAX_RACING`` nearest are tried);
- a banned player (``banPlayer``) has no entry anywhere: no session played before its ban
  was lifted counts (the ban refused every later play and removed every entry); with several
  processes, a play whose time was taken just before the lifting may have been written just
  after it, and counts (the same race as a removal's);
- every board's ``entryCount`` (its item's own plus its count shards') is the number of
  distinct players with a session on it (a session that counts, after any removal of the
  player's entry there); on a board whose item counts none itself (every board created since
  the count shards), each shard counts exactly the players whose shard it is (on a board of N
  partitions, the players of its partition whose shard it is, under that partition's key: a
  shard anywhere else counts none), and carries the board's ttl;
- every item's key attributes (``pk``, ``sk``, GSI keys) are the ones its attributes imply;
- a ``submissionId`` is recorded by at most one session, and its play record points at it;
- every session names existing boards, each open at the time it was played;
- every player's e-mail is claimed by that player, and every claim by an existing player.

:func:`check_table` scans a table and returns the violations (an empty list when everything
holds); :func:`read_table` and :func:`check` split that in two for callers that also need the
items (the soak compares them with what its clients were told).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import ValidationError

from dynamo.claims import CLAIM, ClaimItem
from dynamo.deliveries import DELIVERY, DeliveryItem
from dynamo.entry_guards import ENTRY_GUARD, EntryGuardItem
from dynamo.families import FAMILY, FamilyItem
from dynamo.items import Item, deserialize
from dynamo.keys import INDEX_ATTRIBUTES
from dynamo.layout import entity_of
from dynamo.leaderboards import (
    ENTRY_COUNT_SHARD,
    LEADERBOARD,
    PARTITIONED_ENTRY_COUNT_SHARD,
    EntryCountShard,
    LeaderboardItem,
    Operator,
    SortOrder,
    count_shard,
    player_partition,
)
from dynamo.moderation import MODERATION, ModerationAction, ModerationItem
from dynamo.play_records import PLAY_RECORD, PlayRecord
from dynamo.players import EMAIL_CLAIM, PLAYER, PlayerItem
from dynamo.results import RESULT, ResultItem
from dynamo.scores import (
    PARTITIONED_SCORE,
    SCORE,
    ScoreItem,
    rank_value,
    score_entity,
    score_values,
    tie_value,
)
from dynamo.sessions import SESSION, SessionItem

if TYPE_CHECKING:
    from types_aiobotocore_dynamodb import DynamoDBClient

__all__ = [
    "ExpectedEntry",
    "Kind",
    "Snapshot",
    "Violation",
    "check",
    "check_items",
    "check_table",
    "operator_result",
    "read_table",
    "scan_items",
    "snapshot",
]

KEY_ATTRIBUTES = ("pk", "sk", *(name for pair in INDEX_ATTRIBUTES.values() for name in pair))

Pair = tuple[str, str]
"""(playerId, leaderboardId)."""


class Kind(StrEnum):
    """What kind of fact a violation breaks."""

    MALFORMED_ITEM = "malformed-item"
    """An item of no known kind, or whose attributes do not parse."""
    ITEM_KEYS = "item-keys"
    """Key attributes other than the ones the item's attributes imply."""
    GAMES_PLAYED = "games-played"
    LIFETIME_SCORE = "lifetime-score"
    EMAIL_CLAIM = "email-claim"
    SESSION_BOARDS = "session-boards"
    """A session of an unknown player, naming no board, an unknown board, or a closed one."""
    SCORE_RANGE = "score-range"
    """A session's score outside a board's bounds, or an entry past the board's width."""
    MISSING_ENTRY = "missing-entry"
    """Sessions on a board but no Score item or no entry guard."""
    UNEXPECTED_ENTRY = "unexpected-entry"
    """A Score item or entry guard without any session on its board."""
    DUPLICATE_SCORE = "duplicate-score"
    ENTRY_SCORE = "entry-score"
    ENTRY_SESSION = "entry-session"
    ENTRY_VERSION = "entry-version"
    ENTRY_TTL = "entry-ttl"
    GUARD_MISMATCH = "guard-mismatch"
    ENTRY_COUNT = "entry-count"
    DUPLICATE_SUBMISSION = "duplicate-submission"
    SUBMISSION_RECORD = "submission-record"


@dataclass(frozen=True, order=True)
class Violation:
    """One broken invariant: what kind (a :class:`Kind`, or a kind of the caller's own
    checks), about what (``player p1 on board b``), and how."""

    kind: str
    subject: str
    message: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.subject}: {self.message}"


M = TypeVar("M", bound=Item)


@dataclass(frozen=True)
class Keyed(Generic[M]):
    """A parsed item with the raw key attributes it was stored under."""

    item: M
    keys: dict[str, str]


@dataclass
class Snapshot:
    """Every item of a table, parsed and grouped; ``problems`` holds the items that could not
    be parsed or whose keys do not match their attributes."""

    items: int = 0
    players: dict[str, PlayerItem] = field(default_factory=dict)
    claims: dict[str, str] = field(default_factory=dict)
    """E-mail address -> the playerId of its claim."""
    boards: dict[str, LeaderboardItem] = field(default_factory=dict)
    shards: dict[str, list[EntryCountShard]] = field(default_factory=dict)
    """leaderboardId -> the board's count shards."""
    families: dict[str, FamilyItem] = field(default_factory=dict)
    sessions: dict[tuple[str, str], SessionItem] = field(default_factory=dict)
    """(playerId, sessionId) -> session."""
    scores: dict[Pair, list[Keyed[ScoreItem]]] = field(default_factory=dict)
    guards: dict[Pair, EntryGuardItem] = field(default_factory=dict)
    records: dict[tuple[str, str], PlayRecord] = field(default_factory=dict)
    """(playerId, submissionId) -> play record."""
    removals: dict[Pair, datetime] = field(default_factory=dict)
    """(playerId, leaderboardId) -> when an operator last removed the entry."""
    bans: dict[str, list[datetime]] = field(default_factory=dict)
    """playerId -> when each of its bans began."""
    unbans: dict[str, list[datetime]] = field(default_factory=dict)
    """playerId -> when each of its bans was lifted."""
    problems: list[Violation] = field(default_factory=list)


@dataclass(frozen=True)
class ExpectedEntry:
    """A (player, board) entry as the board's operator makes it from the player's sessions."""

    score: int
    session: SessionItem
    """The session whose play set the entry (its score, attainedAt and sessionId)."""
    version: int
    """How many plays changed the entry: the entry guard's version."""


async def scan_items(client: DynamoDBClient, table: str) -> list[dict[str, Any]]:
    """Every item of ``table``, deserialized: a strongly consistent Scan, page after page."""
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        page = await client.scan(**kwargs)
        items.extend(deserialize(raw) for raw in page.get("Items", []))
        last = page.get("LastEvaluatedKey")
        if not last:
            return items
        kwargs["ExclusiveStartKey"] = last


async def read_table(client: DynamoDBClient, table: str) -> Snapshot:
    """Scan ``table`` and parse every item."""
    return snapshot(await scan_items(client, table))


async def check_table(
    client: DynamoDBClient, table: str, *, single_writer: bool = False
) -> list[Violation]:
    """Scan ``table`` and check every invariant; an empty list when all hold."""
    return check(await read_table(client, table), single_writer=single_writer)


def check_items(
    items: Iterable[Mapping[str, Any]], *, single_writer: bool = False
) -> list[Violation]:
    """Check deserialized items (as :func:`scan_items` returns them)."""
    return check(snapshot(items), single_writer=single_writer)


def _keys_of(raw: Mapping[str, Any]) -> dict[str, str]:
    return {k: raw[k] for k in KEY_ATTRIBUTES if k in raw}


def _key_problem(subject: str, stored: Mapping[str, str], expected: Mapping[str, str]) -> Violation:
    wrong = sorted(
        k
        for k in KEY_ATTRIBUTES
        if (k in stored or k in expected) and stored.get(k) != expected.get(k)
    )
    shown = ", ".join(f"{k} is {stored.get(k)!r}, expected {expected.get(k)!r}" for k in wrong)
    return Violation(Kind.ITEM_KEYS, subject, shown)


def _pair_subject(pair: Pair) -> str:
    return f"player {pair[0]} on board {pair[1]}"


def snapshot(items: Iterable[Mapping[str, Any]]) -> Snapshot:
    """Parse and group deserialized items; unknown, unparsable or mis-keyed items become
    ``problems``."""
    snap = Snapshot()
    for raw in items:
        snap.items += 1
        try:
            _add(snap, raw)
        except (ValidationError, KeyError, TypeError, ValueError) as error:
            subject = f"item {raw.get('pk')!r} / {raw.get('sk')!r}"
            message = str(error).splitlines()[0]
            snap.problems.append(Violation(Kind.MALFORMED_ITEM, subject, message))
    return snap


def _add(snap: Snapshot, raw: Mapping[str, Any]) -> None:
    pk, sk = str(raw["pk"]), str(raw["sk"])
    keys = _keys_of(raw)
    subject = f"item {pk!r} / {sk!r}"
    expected: dict[str, str]
    entity = entity_of(raw)
    if entity is PLAYER:
        player = PlayerItem.model_validate(raw)
        snap.players[player.player_id] = player
        expected = PLAYER.keys_of(player)
    elif entity is SESSION:
        session = SessionItem.model_validate(raw)
        snap.sessions[(session.player_id, session.session_id)] = session
        expected = SESSION.keys_of(session)
    elif entity is ENTRY_GUARD:
        guard = EntryGuardItem.model_validate(raw)
        snap.guards[(guard.player_id, guard.leaderboard_id)] = guard
        expected = ENTRY_GUARD.keys_of(guard)
    elif entity is PLAY_RECORD:
        record = PlayRecord.model_validate(raw)
        snap.records[(record.player_id, record.submission_id)] = record
        expected = PLAY_RECORD.keys_of(record)
    elif entity is EMAIL_CLAIM:
        email = (EMAIL_CLAIM.pk.match(pk) or {}).get("email", "")
        snap.claims[email] = str(raw["playerId"])
        expected = EMAIL_CLAIM.keys(email=email)
    elif entity is LEADERBOARD:
        board = LeaderboardItem.model_validate(raw)
        snap.boards[board.leaderboard_id] = board
        expected = LEADERBOARD.keys_of(board)
    elif entity is ENTRY_COUNT_SHARD or entity is PARTITIONED_ENTRY_COUNT_SHARD:
        shard = EntryCountShard.model_validate(raw)
        snap.shards.setdefault(shard.leaderboard_id, []).append(shard)
        expected = entity.keys_of(shard)
    elif entity is SCORE or entity is PARTITIONED_SCORE:
        score = ScoreItem.model_validate(raw)
        pair = (score.player_id, score.leaderboard_id)
        snap.scores.setdefault(pair, []).append(Keyed(score, keys))
        return  # its keys depend on the board: checked with the entry
    elif entity is FAMILY:
        family = FamilyItem.model_validate(raw)
        snap.families[family.family_id] = family
        expected = FAMILY.keys_of(family)
    elif entity is MODERATION:
        action = ModerationItem.model_validate(raw)
        expected = MODERATION.keys_of(action)
        if action.action is ModerationAction.REMOVE_ENTRY and action.player_id is not None:
            for removed in action.removed:
                pair = (action.player_id, removed.leaderboard_id)
                snap.removals[pair] = max(action.at, snap.removals.get(pair, action.at))
        elif action.action is ModerationAction.BAN_PLAYER and action.player_id is not None:
            snap.bans.setdefault(action.player_id, []).append(action.at)
        elif action.action is ModerationAction.UNBAN_PLAYER and action.player_id is not None:
            snap.unbans.setdefault(action.player_id, []).append(action.at)
    elif entity is RESULT:
        result = ResultItem.model_validate(raw)
        expected = RESULT.keys_of(result, **result.index_values())
    elif entity is CLAIM:
        expected = CLAIM.keys_of(ClaimItem.model_validate(raw))
    elif entity is DELIVERY:
        delivery = DeliveryItem.model_validate(raw)
        expected = DELIVERY.keys_of(delivery, **delivery.index_values())
    else:
        snap.problems.append(Violation(Kind.MALFORMED_ITEM, subject, "no known item has this key"))
        return
    if keys != expected:
        snap.problems.append(_key_problem(subject, keys, expected))


def _better(a: int, b: int, order: SortOrder) -> bool:
    return a > b if order is SortOrder.DESC else a < b


def _play_order(session: SessionItem) -> tuple[datetime, str]:
    return (session.played_at, session.session_id)


def operator_result(
    board: LeaderboardItem, sessions: Sequence[SessionItem]
) -> ExpectedEntry | None:
    """The entry ``board``'s operator makes of ``sessions`` (one player's plays on it), taken
    in play order (``playedAt``, then ``sessionId``); None without sessions. BEST keeps the
    first of equal best scores, LATEST takes every play, INCREMENT adds every non-zero play
    to the total; the version counts the plays that changed the entry."""
    current: ExpectedEntry | None = None
    for session in sorted(sessions, key=_play_order):
        if current is None:
            current = ExpectedEntry(session.score, session, 1)
        elif board.operator is Operator.LATEST:
            current = ExpectedEntry(session.score, session, current.version + 1)
        elif board.operator is Operator.INCREMENT:
            if session.score != 0:
                total = current.score + session.score
                current = ExpectedEntry(total, session, current.version + 1)
        elif _better(session.score, current.score, board.sort_order):
            current = ExpectedEntry(session.score, session, current.version + 1)
    return current


RACE_WINDOW = timedelta(minutes=2)
"""How far apart in time a play and a removal of its entry may be and still have raced, when
several processes record plays (a play's time is taken before its transaction, and a
request is bounded in time)."""


def _latest(*times: datetime | None) -> datetime | None:
    present = [t for t in times if t is not None]
    return max(present) if present else None


def _ban_cuts(snap: Snapshot) -> dict[str, datetime]:
    """playerId -> the time up to which a ban removed its plays on every board: the lifting
    of its last ban, or the end of time while the ban is in force. A ban's mark refuses every
    play after it, and its removals take every entry standing, so no play made before the
    lifting counts; a lifting's own time is taken before it is written, while plays are
    still refused."""
    cuts: dict[str, datetime] = {}
    for player_id, bans in snap.bans.items():
        last = max(bans)
        lifted = [t for t in snap.unbans.get(player_id, []) if t > last]
        cuts[player_id] = min(lifted) if lifted else datetime.max.replace(tzinfo=UTC)
    return cuts


def _ban_cut(snap: Snapshot, pair: Pair, cuts: Mapping[str, datetime]) -> datetime | None:
    """The player's ban cut on the pair's board: none when its last ban began after the
    board's close did (the close froze the entry, which a ban leaves in the final
    standings)."""
    cut = cuts.get(pair[0])
    board = snap.boards.get(pair[1])
    if cut is None or board is None or board.closing_since is None:
        return cut
    return None if max(snap.bans[pair[0]]) >= board.closing_since else cut


MAX_RACING = 8
"""At most this many plays, the nearest in time to a removal or a ban's lifting, are tried on
either side of it (every split of them)."""


def _cut_of(
    snap: Snapshot, pair: Pair, cuts: Mapping[str, datetime]
) -> tuple[datetime, bool] | None:
    """The moderation that decides which of the pair's plays count, and whether plays may
    have raced it: the later of the entry's last removal and the lifting of the player's
    last ban (a ban in force races nothing: it refused every play after its mark)."""
    removed = snap.removals.get(pair)
    cut = _ban_cut(snap, pair, cuts)
    if cut is not None and (removed is None or cut >= removed):
        return cut, cut.year < datetime.max.year
    if removed is not None:
        return removed, True
    return None


def _settle_races(
    snap: Snapshot,
    by_player: Mapping[str, list[SessionItem]],
    by_pair: dict[Pair, list[SessionItem]],
    cuts: Mapping[str, datetime],
) -> None:
    """With several processes, a play that raced the removal of its entry, or the lifting
    of its player's ban (its time close to the moderation's), may have landed on either side
    of it. For each such (player, board), the sessions that count are the ones after the
    moderation by time, or, if the entry found is the operator's result over a different
    split of the racing plays (the MAX_RACING nearest the moderation in time), that split."""
    pairs = {*snap.removals}
    for player_id in cuts:
        for session in by_player.get(player_id, []):
            pairs.update((player_id, b) for b in session.leaderboard_ids)
    for pair in sorted(pairs):
        decided = _cut_of(snap, pair, cuts)
        if decided is None or not decided[1]:
            continue
        cut = decided[0]
        sessions = [s for s in by_player.get(pair[0], []) if pair[1] in s.leaderboard_ids]
        near = sorted(
            (s for s in sessions if abs(s.played_at - cut) <= RACE_WINDOW),
            key=lambda s: (abs(s.played_at - cut), s.session_id),
        )
        racing = near[:MAX_RACING]
        if not racing:
            continue
        after = [s for s in sessions if s not in racing and s.played_at > cut]
        board = snap.boards.get(pair[1])
        scores = snap.scores.get(pair, [])
        guard = snap.guards.get(pair)
        for mask in range(1 << len(racing)):
            counted = [*after, *(s for i, s in enumerate(racing) if mask >> i & 1)]
            problems = _check_entry(
                pair, board, counted, scores, guard, single_writer=False, removed=True
            )
            if not problems:
                if counted:
                    by_pair[pair] = counted
                else:
                    by_pair.pop(pair, None)
                break


def check(snap: Snapshot, *, single_writer: bool = False) -> list[Violation]:
    """Every violation in ``snap``, sorted by kind and subject; empty when all invariants hold.
    ``single_writer``: one service process recorded every play (see the module's docstring)."""
    by_player: defaultdict[str, list[SessionItem]] = defaultdict(list)
    by_pair: defaultdict[Pair, list[SessionItem]] = defaultdict(list)
    cuts = _ban_cuts(snap)
    for session in snap.sessions.values():
        by_player[session.player_id].append(session)
        for board_id in dict.fromkeys(session.leaderboard_ids):
            pair = (session.player_id, board_id)
            cut = _latest(snap.removals.get(pair), _ban_cut(snap, pair, cuts))
            if cut is None or session.played_at > cut:
                by_pair[pair].append(session)
    if not single_writer:
        _settle_races(snap, by_player, by_pair, cuts)
    found = [
        *snap.problems,
        *_check_players(snap, by_player),
        *_check_sessions(snap),
        *_check_entries(snap, by_pair, single_writer),
        *_check_boards(snap, by_pair),
        *_check_submissions(snap),
    ]
    return sorted(found)


def _check_players(snap: Snapshot, by_player: Mapping[str, list[SessionItem]]) -> list[Violation]:
    found: list[Violation] = []
    for player_id, player in snap.players.items():
        subject = f"player {player_id}"
        own = by_player.get(player_id, [])
        if player.games_played != len(own):
            found.append(
                Violation(
                    Kind.GAMES_PLAYED,
                    subject,
                    f"gamesPlayed is {player.games_played}, the player has {len(own)} sessions",
                )
            )
        total = sum(s.score for s in own)
        if player.lifetime_score != total:
            found.append(
                Violation(
                    Kind.LIFETIME_SCORE,
                    subject,
                    f"lifetimeScore is {player.lifetime_score}, its sessions add up to {total}",
                )
            )
        owner = snap.claims.get(player.email)
        if owner != player_id:
            found.append(
                Violation(
                    Kind.EMAIL_CLAIM,
                    subject,
                    f"its e-mail {player.email!r} is claimed by {owner!r}",
                )
            )
    for email, owner in snap.claims.items():
        claimant = snap.players.get(owner)
        if claimant is None or claimant.email != email:
            found.append(
                Violation(
                    Kind.EMAIL_CLAIM,
                    f"e-mail {email}",
                    f"claimed by {owner!r}, which is not a player with this e-mail",
                )
            )
    return found


def _check_sessions(snap: Snapshot) -> list[Violation]:
    found: list[Violation] = []
    for session in snap.sessions.values():
        subject = f"session {session.player_id}/{session.session_id}"

        def add(kind: Kind, message: str, subject: str = subject) -> None:
            found.append(Violation(kind, subject, message))

        if session.player_id not in snap.players:
            add(Kind.SESSION_BOARDS, "its player does not exist")
        ids = session.leaderboard_ids
        if not ids:
            add(Kind.SESSION_BOARDS, "it names no board")
            continue
        if session.leaderboard_id != ids[0]:
            add(
                Kind.SESSION_BOARDS,
                f"leaderboardId {session.leaderboard_id!r} is not the first of {ids}",
            )
        if len(set(ids)) != len(ids):
            add(Kind.SESSION_BOARDS, f"it names a board twice: {ids}")
        for board_id in dict.fromkeys(ids):
            board = snap.boards.get(board_id)
            if board is None:
                add(Kind.SESSION_BOARDS, f"board {board_id!r} does not exist")
                continue
            if not board.within(session.played_at):
                add(
                    Kind.SESSION_BOARDS,
                    f"played at {session.played_at.isoformat()}, when board {board_id!r}"
                    f" was closed ({board.starts_at} .. {board.ends_at})",
                )
            if not board.admits(session.score):
                add(
                    Kind.SCORE_RANGE,
                    f"score {session.score} is outside board {board_id!r}'s bounds {board.bounds}",
                )
    return found


def _check_entries(
    snap: Snapshot, by_pair: Mapping[Pair, list[SessionItem]], single_writer: bool
) -> list[Violation]:
    found: list[Violation] = []
    for pair in sorted({*by_pair, *snap.scores, *snap.guards}):
        found.extend(
            _check_entry(
                pair,
                snap.boards.get(pair[1]),
                by_pair.get(pair, []),
                snap.scores.get(pair, []),
                snap.guards.get(pair),
                single_writer=single_writer,
                removed=pair in snap.removals or pair[0] in snap.bans,
            )
        )
    return found


def _setters(
    board: LeaderboardItem, ordered: Sequence[SessionItem], expected: ExpectedEntry
) -> list[SessionItem]:
    """The sessions that may have set the entry when several processes record plays."""
    if board.operator is Operator.BEST:
        return [s for s in ordered if s.score == expected.score]
    if board.operator is Operator.LATEST:
        return [expected.session]
    nonzero = [s for s in ordered if s.score != 0]
    if not nonzero:
        return list(ordered)
    last = _play_order(nonzero[-1])
    return [s for s in ordered if _play_order(s) >= last]


def _check_entry(
    pair: Pair,
    board: LeaderboardItem | None,
    sessions: Sequence[SessionItem],
    scores: Sequence[Keyed[ScoreItem]],
    guard: EntryGuardItem | None,
    *,
    single_writer: bool,
    removed: bool = False,
) -> list[Violation]:
    subject = _pair_subject(pair)
    found: list[Violation] = []

    def add(kind: Kind, message: str) -> None:
        found.append(Violation(kind, subject, message))

    if not sessions and removed and not scores and (guard is None or guard.removed):
        return found  # removed, and not entered since
    if guard is not None and guard.removed:
        add(Kind.GUARD_MISMATCH, "the entry guard is a tombstone but the entry stands")
    if not sessions:
        what = [
            n for n, present in (("a Score item", scores), ("an entry guard", guard)) if present
        ]
        add(Kind.UNEXPECTED_ENTRY, f"{' and '.join(what)} but no session on this board")
        return found
    if board is None:
        return found  # reported with the sessions
    ordered = sorted(sessions, key=_play_order)
    expected = operator_result(board, ordered)
    assert expected is not None
    if not scores:
        add(Kind.MISSING_ENTRY, f"{len(sessions)} sessions but no Score item")
    if guard is None:
        add(Kind.MISSING_ENTRY, f"{len(sessions)} sessions but no entry guard")
    if len(scores) > 1:
        sks = sorted(s.keys.get("sk", "?") for s in scores)
        add(Kind.DUPLICATE_SCORE, f"{len(scores)} Score items: {', '.join(sks)}")
    if not scores:
        return found
    keyed = next((s for s in scores if guard and _key_of(s) == guard.score_key), scores[0])
    score = keyed.item
    wanted_keys = score_entity(board).keys_of(score, **score_values(board, score))
    if keyed.keys != wanted_keys:
        found.append(_key_problem(subject, keyed.keys, wanted_keys))
    if score.score != expected.score:
        add(
            Kind.ENTRY_SCORE,
            f"the Score item holds {score.score}; {board.operator} over the player's"
            f" {len(sessions)} sessions gives {expected.score}",
        )
    else:
        setters = [expected.session] if single_writer else _setters(board, ordered, expected)
        named = (score.session_id, score.attained_at)
        if named not in {(s.session_id, s.played_at) for s in setters}:
            picks = ", ".join(f"{s.session_id} at {s.played_at.isoformat()}" for s in setters)
            add(
                Kind.ENTRY_SESSION,
                f"the Score item names session {score.session_id} at"
                f" {score.attained_at.isoformat()}; {board.operator} picks {picks}",
            )
    if removed:
        pass  # the guard's versions continue across the removal
    elif single_writer:
        if score.version != expected.version:
            add(
                Kind.ENTRY_VERSION,
                f"the Score item has version {score.version}; {expected.version} plays changed"
                " the entry",
            )
    elif not 1 <= score.version <= len(sessions):
        add(
            Kind.ENTRY_VERSION,
            f"the Score item has version {score.version} after {len(sessions)} plays",
        )
    if score.ttl != board.ttl:
        add(Kind.ENTRY_TTL, f"the Score item's ttl is {score.ttl}, the board's {board.ttl}")
    if expected.score > board.width_max:
        add(Kind.SCORE_RANGE, f"the entry {expected.score} is above the board's maximum")
    if guard is not None:
        differences = _guard_differences(board, guard, keyed)
        if differences:
            add(Kind.GUARD_MISMATCH, "; ".join(differences))
    return found


def _guard_differences(
    board: LeaderboardItem, guard: EntryGuardItem, keyed: Keyed[ScoreItem]
) -> list[str]:
    score = keyed.item
    pairs: list[tuple[str, object, object]] = [
        ("scoreSk", guard.score_sk, keyed.keys.get("sk")),
        ("scorePk", guard.score_key[0], keyed.keys.get("pk")),
        ("score", guard.score, score.score),
        ("attainedAt", guard.attained_at, score.attained_at),
        ("sessionId", guard.session_id, score.session_id),
        ("version", guard.version, score.version),
        ("ttl", guard.ttl, score.ttl),
        (
            "rankValue",
            guard.rank_value,
            rank_value(guard.score, board.score_width, board.sort_order),
        ),
        ("tieValue", guard.tie_value, tie_value(guard.attained_at)),
    ]
    return [
        f"guard {name} {mine!r} vs {theirs!r}" for name, mine, theirs in pairs if mine != theirs
    ]


def _key_of(keyed: Keyed[ScoreItem]) -> tuple[str, str]:
    return keyed.keys.get("pk", ""), keyed.keys.get("sk", "")


def _check_boards(snap: Snapshot, by_pair: Mapping[Pair, list[SessionItem]]) -> list[Violation]:
    players: defaultdict[str, set[str]] = defaultdict(set)
    for player_id, board_id in by_pair:
        players[board_id].add(player_id)
    found: list[Violation] = []
    for board_id, board in snap.boards.items():
        entered = players.get(board_id, set())
        shards = snap.shards.get(board_id, [])
        count = board.entry_count + sum(s.entry_count for s in shards)
        if count != len(entered):
            found.append(
                Violation(
                    Kind.ENTRY_COUNT,
                    f"board {board_id}",
                    f"entryCount is {count}; {len(entered)} distinct players played on it",
                )
            )
        if board.entry_count == 0:
            found.extend(_check_shards(board, shards, entered))
    return found


def _check_shards(
    board: LeaderboardItem, shards: Sequence[EntryCountShard], entered: set[str]
) -> list[Violation]:
    """A board whose item counts none itself: each shard counts its players (on a
    write-sharded board, those of its partition), with the board's ttl."""
    n = board.partitions
    expected = Counter(_shard_name(_partition(p, n), count_shard(p, n)) for p in entered)
    counted = {_shard_name(s.partition, s.shard): s.entry_count for s in shards if s.entry_count}
    found = []
    if counted != dict(expected):
        found.append(
            Violation(
                Kind.ENTRY_COUNT,
                f"board {board.leaderboard_id}",
                f"its shards count {dict(sorted(counted.items()))}, its players' shards are "
                f"{dict(sorted(expected.items()))}",
            )
        )
    for shard in shards:
        if shard.ttl != board.ttl:
            name = _shard_name(shard.partition, shard.shard)
            found.append(
                Violation(
                    Kind.ENTRY_TTL,
                    f"board {board.leaderboard_id} shard {name}",
                    f"the shard's ttl is {shard.ttl}, the board's {board.ttl}",
                )
            )
    return found


def _partition(player_id: str, partitions: int) -> str | None:
    """The partition a player's count shard is under: None on a board of one partition."""
    return player_partition(player_id, partitions) if partitions > 1 else None


def _shard_name(partition: str | None, shard: str) -> str:
    """A count shard as a violation names it: ``07``, or ``03/07`` for shard 07 of partition
    03 of a write-sharded board."""
    return shard if partition is None else f"{partition}/{shard}"


def _check_submissions(snap: Snapshot) -> list[Violation]:
    found: list[Violation] = []
    recorded: Counter[tuple[str, str]] = Counter(
        (s.player_id, s.submission_id)
        for s in snap.sessions.values()
        if s.submission_id is not None
    )
    for (player_id, submission_id), n in recorded.items():
        subject = f"submission {player_id}/{submission_id}"
        if n > 1:
            found.append(Violation(Kind.DUPLICATE_SUBMISSION, subject, f"recorded by {n} sessions"))
        if (player_id, submission_id) not in snap.records:
            found.append(
                Violation(Kind.SUBMISSION_RECORD, subject, "a session names it; no record")
            )
    for (player_id, submission_id), record in snap.records.items():
        subject = f"submission {player_id}/{submission_id}"
        session = snap.sessions.get((player_id, record.session_id))
        if session is None:
            found.append(
                Violation(
                    Kind.SUBMISSION_RECORD,
                    subject,
                    f"its record names session {record.session_id}, which does not exist",
                )
            )
            continue
        if session.submission_id != submission_id:
            found.append(
                Violation(
                    Kind.SUBMISSION_RECORD,
                    subject,
                    f"its session {record.session_id} names submission {session.submission_id}",
                )
            )
        boards = [e.leaderboard_id for e in record.entries]
        if boards != session.leaderboard_ids:
            found.append(
                Violation(
                    Kind.SUBMISSION_RECORD,
                    subject,
                    f"its record lists boards {boards}, its session {session.leaderboard_ids}",
                )
            )
    return found
