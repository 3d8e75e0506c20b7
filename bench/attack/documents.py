"""The costliest documents an anonymous caller may send: each as close to the cost limit as its
shape allows, and valid under the service's document limits.

Every document fans out from one list to reads of each of its items (a player's scores, its
sessions, its rank on another board, its best score on a third), with its list as long as the
cost limit (:data:`edge.cost_model.MAX_COST`) lets it be. The list's length is found by
computing the document's cost with :func:`edge.cost_walk.document_cost` against the real
schema, so the documents stay the costliest the service admits when its cost table changes. Id
lists travel in the variables, which the token and character limits do not count.

The limits are :data:`edge.validation.MAX_TOKENS` tokens and
:data:`edge.validation.MAX_CHARACTERS` characters, a depth of :data:`edge.schema.MAX_DEPTH` and
:data:`edge.schema.MAX_ALIASES` aliases: :func:`check` asserts all of them, and validity against
the schema.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from graphql import Lexer, Source, TokenKind, parse, specified_rules, validate

from bench.core.workload import BOARD_ID, DAILY_ID, SEASON_ID, player_id
from edge.cost_model import MAX_COST
from edge.cost_walk import document_cost
from edge.limits import measure_operations
from edge.schema import GRAPHQL_SCHEMA, LIMIT_RULE, MAX_ALIASES, MAX_DEPTH
from edge.validation import MAX_CHARACTERS, MAX_TOKENS

__all__ = [
    "ATTACKS",
    "MAX_CHARACTERS",
    "MAX_TOKENS",
    "NEAR_LIMIT",
    "AttackDocument",
    "attack_documents",
    "check",
    "token_count",
]

NEAR_LIMIT = 0.95
"""Each document costs at least this share of MAX_COST."""
MAX_LIST = 100
"""The longest list an argument may ask for (``first``, an id list)."""

_PLAYER_READS = f"""
      name
      lifetimeScore
      scores(first: 1) {{ edges {{ node {{ score leaderboard {{ id name }} }} }} }}
      sessions(first: 100) {{ edges {{ node {{ id gameId score playedAt }} }} }}
      rank(leaderboardId: "{SEASON_ID}") {{ rank total percentile }}
      bestScore(leaderboardId: "{DAILY_ID}") {{ score attainedAt }}
      main: bestScore(leaderboardId: "{BOARD_ID}") {{ score }}
"""
"""What the documents read of each player: a page of its scores with their boards, its
sessions, its rank on one board and its best scores on two others, each a read of its own."""


def _ids(n: int) -> dict[str, Any]:
    return {"ids": [player_id(k) for k in range(1, n + 1)]}


def _top_scores(n: int) -> tuple[str, dict[str, Any]]:
    query = f"""query TopFanOut {{
  leaderboard(id: "{BOARD_ID}") {{
    topScores(first: {n}) {{
      edges {{ node {{ rank score player {{ {_PLAYER_READS} }} }} }}
    }}
  }}
}}
"""
    return query, {}


def _players(n: int) -> tuple[str, dict[str, Any]]:
    query = f"""query PlayersFanOut($ids: [ID!]!) {{
  players(ids: $ids) {{ id {_PLAYER_READS} }}
}}
"""
    return query, _ids(n)


def _friends(n: int) -> tuple[str, dict[str, Any]]:
    query = f"""query FriendsFanOut($ids: [ID!]!) {{
  leaderboard(id: "{BOARD_ID}") {{
    ranksOf(playerIds: $ids) {{
      rank total
      score {{ score player {{ {_PLAYER_READS} }} }}
    }}
  }}
}}
"""
    return query, _ids(n)


@dataclass(frozen=True)
class AttackDocument:
    """One document at the length of list that makes it the costliest admitted."""

    name: str
    """The operation's name."""
    description: str
    query: str
    variables: dict[str, Any]
    size: int
    """The length of its list."""
    cost: int
    """Its cost as the service computes it."""

    def body(self) -> dict[str, Any]:
        """The JSON body of a request sending it."""
        return {"query": self.query, "operationName": self.name, "variables": self.variables}


Builder = Callable[[int], tuple[str, dict[str, Any]]]

ATTACKS: tuple[tuple[str, str, Builder], ...] = (
    (
        "TopFanOut",
        "the top scores, and for each entry its player's scores, sessions, rank and best scores",
        _top_scores,
    ),
    (
        "PlayersFanOut",
        "players by id, and for each its scores, sessions, rank and best scores",
        _players,
    ),
    (
        "FriendsFanOut",
        "ranks of players by id (a friends board), and for each its player's scores, sessions,"
        " rank and best scores",
        _friends,
    ),
)
"""Each document's name, what it reads, and how it is written for a list of a given length."""


def _cost(query: str, name: str, variables: dict[str, Any]) -> int:
    return document_cost(GRAPHQL_SCHEMA, parse(query), name, variables)


def _costliest(name: str, description: str, build: Builder) -> AttackDocument:
    """The document at the longest list whose cost is within MAX_COST (cost grows with it)."""
    best: AttackDocument | None = None
    for size in range(1, MAX_LIST + 1):
        query, variables = build(size)
        cost = _cost(query, name, variables)
        if cost > MAX_COST:
            break
        best = AttackDocument(name, description, query, variables, size, cost)
    if best is None:
        raise ValueError(f"{name} costs more than {MAX_COST} even for one item")
    check(best)
    return best


def token_count(query: str) -> int:
    """The tokens of ``query`` as the parser's token limit counts them (comments not)."""
    lexer = Lexer(Source(query))
    count = 0
    while lexer.advance().kind is not TokenKind.EOF:
        count += 1
    return count


def check(document: AttackDocument) -> None:
    """Raise ValueError unless ``document`` is valid against the schema within the strictest
    limits and costs what it says, at most MAX_COST and at least NEAR_LIMIT of it."""
    problems: list[str] = []
    tokens = token_count(document.query)
    if tokens > MAX_TOKENS:
        problems.append(f"{tokens} tokens, over {MAX_TOKENS}")
    if len(document.query) > MAX_CHARACTERS:
        problems.append(f"{len(document.query)} characters, over {MAX_CHARACTERS}")
    parsed = parse(document.query)
    errors = validate(GRAPHQL_SCHEMA, parsed, [*specified_rules, LIMIT_RULE])
    problems += [error.message for error in errors]
    for _, measure in measure_operations(parsed):
        if measure.depth > MAX_DEPTH or measure.aliases > MAX_ALIASES:
            problems.append(f"depth {measure.depth}, {measure.aliases} aliases")
    cost = _cost(document.query, document.name, document.variables)
    if cost != document.cost or not NEAR_LIMIT * MAX_COST <= cost <= MAX_COST:
        problems.append(f"cost {cost}, not within {NEAR_LIMIT:.0%} of {MAX_COST}")
    if problems:
        raise ValueError(f"{document.name}: {'; '.join(problems)}")


@cache
def attack_documents() -> tuple[AttackDocument, ...]:
    """Every document of :data:`ATTACKS`, each the costliest admitted, checked."""
    return tuple(_costliest(name, description, build) for name, description, build in ATTACKS)
