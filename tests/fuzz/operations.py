"""The GraphQL operations the fuzz tests send and strategies for their inputs: the four
mutations (``MUTATIONS``), the queries with variables (``QUERIES``, ``query_requests``) and the
paginated lists whose cursors the ``world`` table provides (``CURSOR_LISTS``)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.fuzz.inputs import (
    EDGE_INTS,
    GAME,
    REUSED_SUBMISSION,
    board_ids,
    datetimes,
    emails,
    family_ids,
    ints,
    json_values,
    metadata_documents,
    player_ids,
    texts,
    ulids,
    uuids,
    valid_ids,
    wild,
    zones,
)


def _input(
    required: dict[str, st.SearchStrategy[Any]], optional: dict[str, st.SearchStrategy[Any]]
) -> st.SearchStrategy[Any]:
    """A mutation input: fields valid or wild, some missing, some unknown, or not an object."""

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        fields = draw(st.fixed_dictionaries({k: wild(v) for k, v in required.items()}))
        fields.update(
            draw(st.fixed_dictionaries({}, optional={k: wild(v) for k, v in optional.items()}))
        )
        for name in draw(st.lists(st.sampled_from(sorted(fields)), max_size=2)) if fields else []:
            fields.pop(name, None)
        fields.update(draw(st.dictionaries(texts, json_values, max_size=2)))
        return fields

    return st.one_of(build(), build(), build(), json_values)


periods = st.sampled_from(["DAILY", "WEEKLY", "SEASON", "GLOBAL", "daily", "HOURLY", ""])
sort_orders = st.sampled_from(["DESC", "ASC", "asc", "UP"])
operators = st.sampled_from(["BEST", "LATEST", "INCREMENT", "SUM", "best"])
widths = st.one_of(st.integers(-2, 17), st.sampled_from(EDGE_INTS))

CREATE_PLAYER = """mutation($i: CreatePlayerInput!) { createPlayer(input: $i) {
    player { id name email lifetimeScore gamesPlayed } errors { code message field } } }"""
CREATE_BOARD = """mutation($i: CreateLeaderboardInput!) { createLeaderboard(input: $i) {
    leaderboard { id name period sortOrder operator scoreWidth startsAt endsAt entryCount }
    errors { code message field } } }"""
CREATE_FAMILY = """mutation($i: CreateLeaderboardFamilyInput!) {
    createLeaderboardFamily(input: $i) {
    family { id timezone seasonStart seasonDays retentionDays current { id startsAt endsAt } }
    errors { code message field } } }"""
SUBMIT = """mutation($i: SubmitScoreInput!) { submitScore(input: $i) {
    improved duplicate session { id score gameId leaderboardIds submissionId metadata }
    score { score rank metadata } rank { rank total percentile }
    entries { leaderboardId improved score { score metadata } rank { rank } }
    errors { code message field } } }"""

player_inputs = _input(
    {"name": texts, "email": emails},
    {"id": st.one_of(st.none(), player_ids, valid_ids)},
)
board_inputs = _input(
    {"id": board_ids, "name": texts, "period": periods},
    {
        "sortOrder": sort_orders,
        "operator": operators,
        "scoreWidth": widths,
        "startsAt": datetimes,
        "endsAt": datetimes,
    },
)
family_inputs = _input(
    {"id": family_ids, "name": texts, "period": periods},
    {
        "timezone": zones,
        "sortOrder": sort_orders,
        "operator": operators,
        "scoreWidth": widths,
        "seasonStart": datetimes,
        "seasonDays": st.one_of(st.integers(-2, 400), st.integers(-(2**31), 1_000_000)),
        "retentionDays": st.one_of(st.integers(-2, 4000), st.sampled_from(EDGE_INTS)),
    },
)
id_lists = st.lists(st.one_of(board_ids, texts), max_size=24)
submit_inputs = _input(
    {"playerId": player_ids, "gameId": st.one_of(st.just(GAME), valid_ids), "score": ints},
    {
        "leaderboardId": st.one_of(st.none(), board_ids),
        "leaderboardIds": st.one_of(st.none(), id_lists),
        "familyIds": st.one_of(st.none(), st.lists(family_ids, max_size=22)),
        "durationSec": st.one_of(st.none(), ints),
        "submissionId": st.one_of(st.none(), st.just(REUSED_SUBMISSION), ulids, uuids, texts),
        "metadata": st.one_of(st.none(), metadata_documents),
    },
)


ENTITY = {
    "createPlayer": "player",
    "createLeaderboard": "leaderboard",
    "createLeaderboardFamily": "family",
    "submitScore": "session",
}
MUTATIONS: list[tuple[str, str, st.SearchStrategy[Any]]] = [
    ("createPlayer", CREATE_PLAYER, player_inputs),
    ("createLeaderboard", CREATE_BOARD, board_inputs),
    ("createLeaderboardFamily", CREATE_FAMILY, family_inputs),
    ("submitScore", SUBMIT, submit_inputs),
]


CURSOR_LISTS = {
    "topScores": """query($c: String) { leaderboard(id: "fz-best") {
        topScores(first: 1, after: $c) { edges { cursor } } } }""",
    "scores": """query($c: String) { player(id: "fz-p1") {
        scores(first: 1, after: $c) { edges { cursor } } } }""",
    "sessions": """query($c: String) { player(id: "fz-p1") {
        sessions(first: 1, after: $c) { edges { cursor } } } }""",
    "gameSessions": f"""query($c: String) {{ gameSessions(gameId: "{GAME}", first: 1,
        after: $c) {{ edges {{ cursor }} }} }}""",
}


ids_lists = st.lists(st.one_of(player_ids, board_ids), max_size=110)
page_sizes = st.one_of(st.integers(-3, 104), st.sampled_from(EDGE_INTS))
at_values = datetimes
session_ids = st.one_of(ulids, st.just(REUSED_SUBMISSION), texts)

QUERIES: list[tuple[str, dict[str, st.SearchStrategy[Any]]]] = [
    (
        "query($id: ID!) { player(id: $id) { id name email lifetimeScore gamesPlayed } }",
        {"id": player_ids},
    ),
    ("query($ids: [ID!]!) { players(ids: $ids) { id } }", {"ids": ids_lists}),
    ("query($e: String!) { playerByEmail(email: $e) { id } }", {"e": emails}),
    (
        """query($id: ID!, $first: Int, $after: String) { leaderboard(id: $id) { id entryCount
        topScores(first: $first, after: $after) { edges { cursor node { rank score
        player { id } } } pageInfo { hasNextPage endCursor } } } }""",
        {"id": board_ids, "first": page_sizes, "after": texts},
    ),
    (
        "query($id: ID!, $p: ID!) { leaderboard(id: $id) { rankOf(playerId: $p) { rank total } } }",
        {"id": board_ids, "p": player_ids},
    ),
    (
        """query($id: ID!, $ps: [ID!]!) { leaderboard(id: $id) {
        ranksOf(playerIds: $ps) { rank } } }""",
        {"id": board_ids, "ps": ids_lists},
    ),
    (
        """query($id: ID!, $p: ID!, $b: Int!, $a: Int!) { leaderboard(id: $id) {
        around(playerId: $p, before: $b, after: $a) { rank percentile } } }""",
        {"id": board_ids, "p": player_ids, "b": page_sizes, "a": page_sizes},
    ),
    (
        """query($id: ID!, $at: DateTime!) { leaderboardFamily(id: $id) { id
        current { id entryCount } previous { id } board(at: $at) { id } } }""",
        {"id": family_ids, "at": at_values},
    ),
    (
        "query($p: ID!, $s: ID!) { session(playerId: $p, sessionId: $s) { id score } }",
        {"p": player_ids, "s": session_ids},
    ),
    (
        """query($g: ID!, $first: Int, $after: String) { gameSessions(gameId: $g, first: $first,
        after: $after) { edges { cursor node { id } } } }""",
        {"g": st.one_of(st.just(GAME), valid_ids), "first": page_sizes, "after": texts},
    ),
    (
        """query($p: ID!, $b: ID!, $bs: [ID!]!, $first: Int, $after: String) { player(id: $p) {
        bestScore(leaderboardId: $b) { score } rank(leaderboardId: $b) { rank }
        ranks(leaderboardIds: $bs) { rank } scores(first: $first, after: $after) {
        edges { cursor } } sessions(first: $first, after: $after) { edges { cursor } } } }""",
        {"p": player_ids, "b": board_ids, "bs": ids_lists, "first": page_sizes, "after": texts},
    ),
]


@st.composite
def query_requests(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    document, variables = draw(st.sampled_from(QUERIES))
    values = draw(st.fixed_dictionaries({}, optional={k: wild(v) for k, v in variables.items()}))
    values.update(draw(st.dictionaries(texts, json_values, max_size=2)))
    return document, values
