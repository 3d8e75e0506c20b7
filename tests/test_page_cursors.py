"""A page's cursors are signed when they are read, each once, and are the cursors of a page
signing them all at once: through a page's kept items and its end cursor, through a
connection's edges and page info, and through GraphQL, where a page whose cursors no client
selects signs none. Signings are counted on real codecs, which sign every cursor counted."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from itertools import product
from typing import Any

import pytest

from dynamo.cursors import CursorCodec, LazyCursors, picked
from dynamo.reads import Page
from dynamo.scores import SCORE, ScoreItem, score_sk, top_scores
from gql.connections import connection
from tests.boards import T0, write_board
from tests.conftest import Api, Table

SECRET = b"test-cursor-secret-0123456789"


class CountingCodec(CursorCodec):
    """A cursor codec counting the cursors it signs."""

    def __init__(self, secret: bytes) -> None:
        super().__init__(secret)
        self.signed = 0

    def encode(self, start_key: Mapping[str, str]) -> str:
        self.signed += 1
        return super().encode(start_key)


def _keys(n: int) -> list[dict[str, str]]:
    return [{"pk": "LEADERBOARD#b", "sk": f"SCORE#{9 - i:010d}"} for i in range(n)]


def _entries(n: int) -> list[ScoreItem]:
    return [
        ScoreItem(leaderboard_id="b", player_id=f"p{i}", score=9 - i, attained_at=T0 + timedelta(i))
        for i in range(n)
    ]


def _pages(n: int, *, has_next: bool = True) -> tuple[Page[ScoreItem], Page[ScoreItem], Any]:
    """The same page with eager cursors and with lazy ones, and the lazy one's codec."""
    codec = CountingCodec(SECRET)
    keys = _keys(n)
    eager = Page(_entries(n), [CursorCodec(SECRET).encode(k) for k in keys], has_next)
    lazy = Page(_entries(n), LazyCursors(codec, keys, dict), has_next)
    return eager, lazy, codec


def test_lazy_cursors_are_signed_once_each_when_read() -> None:
    eager, lazy, codec = _pages(5)
    cursors = lazy.cursors
    assert len(cursors) == 5
    assert cursors
    assert codec.signed == 0
    assert cursors[2] == eager.cursors[2]
    assert cursors[2] == eager.cursors[2]
    assert codec.signed == 1
    assert cursors[-1] == eager.cursors[4]
    assert cursors[4] == eager.cursors[-1]
    assert codec.signed == 2
    assert cursors[1:3] == eager.cursors[1:3]
    assert codec.signed == 3
    assert list(cursors) == eager.cursors
    assert cursors == eager.cursors
    assert eager.cursors == cursors
    assert codec.signed == 5
    with pytest.raises(IndexError):
        cursors[5]
    assert not LazyCursors(codec, [], dict)


def test_picked_cursors_are_read_through_when_read() -> None:
    eager, lazy, codec = _pages(5)
    kept = picked(lazy.cursors, [4, 0, 2])
    assert codec.signed == 0
    assert len(kept) == 3
    assert kept[0] == eager.cursors[4]
    assert codec.signed == 1
    assert kept == [eager.cursors[4], eager.cursors[0], eager.cursors[2]]
    assert kept[-2:] == [eager.cursors[0], eager.cursors[2]]
    assert codec.signed == 3


@pytest.mark.parametrize("keep", list(product([True, False], repeat=4)))
def test_a_page_keeps_its_items_cursors_and_end_as_an_eager_one(keep: tuple[bool, ...]) -> None:
    eager, lazy, codec = _pages(4)
    eager_kept, lazy_kept = eager.keeping(keep), lazy.keeping(keep)
    # Only the end cursor is signed by keeping: where the next page begins.
    assert codec.signed == (0 if all(keep) else 1)
    assert lazy_kept.items == eager_kept.items
    assert lazy_kept.has_next == eager_kept.has_next
    assert lazy_kept.resume_after == eager_kept.resume_after
    assert lazy_kept.end_cursor == eager_kept.end_cursor == eager.cursors[-1]
    assert list(lazy_kept.cursors) == list(eager_kept.cursors)
    assert [eager.cursors[n] for n, k in enumerate(keep) if k] == list(lazy_kept.cursors)
    # A page kept again still ends after the last item read.
    again = lazy_kept.keeping([False] * len(lazy_kept.items))
    assert again.items == []
    assert again.end_cursor == eager.cursors[-1]
    assert codec.signed <= 4


def test_a_page_is_kept_by_one_flag_per_item() -> None:
    eager, lazy, _ = _pages(3)
    for page in (eager, lazy):
        with pytest.raises(ValueError, match="one flag per item"):
            page.keeping([True, False])
        assert page.keeping([True, True, True]) is page


def test_a_connection_reads_each_cursor_of_its_page_when_it_is_read() -> None:
    eager, lazy, codec = _pages(4)
    made = connection(lazy, lambda entry: entry.player_id)
    assert codec.signed == 0
    assert [edge.node() for edge in made.edges] == ["p0", "p1", "p2", "p3"]
    assert codec.signed == 0
    assert made.page_info.end_cursor() == eager.cursors[-1]
    assert made.page_info.start_cursor() == eager.cursors[0]
    assert codec.signed == 2
    assert [edge.cursor() for edge in made.edges] == eager.cursors
    assert codec.signed == 4
    assert made.page_info.has_next_page is True
    assert made.page_info.has_previous_page is False
    # A kept page ends where its last read item ends, kept or not.
    kept = connection(lazy.keeping([True, True, False, False]), lambda entry: entry.score)
    assert kept.page_info.end_cursor() == eager.cursors[-1]
    assert [edge.cursor() for edge in kept.edges] == eager.cursors[:2]
    assert codec.signed == 4


def test_connections_of_empty_pages() -> None:
    empty = connection(Page([], LazyCursors(CountingCodec(SECRET), [], dict), False), str)
    assert empty.edges == []
    assert empty.page_info.start_cursor() is None
    assert empty.page_info.end_cursor() is None
    with pytest.raises(ValueError, match="one cursor per item"):
        connection(Page(_entries(2), ["only one"], False), str)


def _bound(board_id: str, partitions: int) -> dict[str, str]:
    bound = {"pk": SCORE.pk.fill(leaderboard_id=board_id)}
    if partitions > 1:
        bound["partitions"] = str(partitions)
    return bound


@pytest.mark.parametrize("partitions", [1, 4])
async def test_a_board_s_page_signs_its_cursors_when_they_are_read(
    table: Table, partitions: int
) -> None:
    board, _ = await write_board(
        table.db, "b", [(i * 37) % 50 for i in range(12)], partitions=partitions, guards=False
    )
    codec = CountingCodec(SECRET)
    db = replace(table.db, cursors=codec)
    whole = await top_scores(db, board, 12, None)
    page = await top_scores(db, board, 5, None)
    assert codec.signed == 0
    assert page.items == whole.items[:5]
    assert page.has_next
    eager = CursorCodec(SECRET)
    expected = [
        eager.encode({**_bound("b", partitions), "sk": score_sk(board, e)}) for e in page.items
    ]
    assert page.end_cursor == expected[-1]
    assert codec.signed == 1
    assert list(page.cursors) == expected
    assert codec.signed == 5
    # Each cursor goes on from its item.
    for n in (0, 2, 4):
        after = await top_scores(db, board, 3, page.cursors[n])
        assert after.items == whole.items[n + 1 : n + 4]
    assert codec.signed == 5


TOP = """query($first: Int!, $after: String) { leaderboard(id: "b") {
    topScores(first: $first, after: $after) { %s } } }"""


async def test_an_answer_selecting_no_cursor_signs_none(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    await write_board(api.db, "b", list(range(30)), guards=False)
    codec = api.db.cursors
    signed: list[Mapping[str, str]] = []
    encode = codec.encode

    def counting(start_key: Mapping[str, str]) -> str:
        signed.append(start_key)
        return encode(start_key)

    monkeypatch.setattr(codec, "encode", counting)
    nodes = "edges { node { rank score player { id name } } }"
    page = await api.gql(TOP % nodes, {"first": 20})
    assert len(page["leaderboard"]["topScores"]["edges"]) == 20
    assert signed == []
    ended = await api.gql(TOP % f"{nodes} pageInfo {{ hasNextPage endCursor }}", {"first": 20})
    assert len(signed) == 1
    cursors = await api.gql(TOP % "edges { cursor node { score } }", {"first": 20})
    edges = cursors["leaderboard"]["topScores"]["edges"]
    assert len(signed) == 21
    end = ended["leaderboard"]["topScores"]["pageInfo"]["endCursor"]
    assert edges[-1]["cursor"] == end
    following = await api.gql(TOP % "edges { node { score } }", {"first": 5, "after": end})
    scores = [e["node"]["score"] for e in following["leaderboard"]["topScores"]["edges"]]
    assert scores == [9, 8, 7, 6, 5]
    middle = await api.gql(
        TOP % "edges { node { score } }", {"first": 2, "after": edges[4]["cursor"]}
    )
    assert [e["node"]["score"] for e in middle["leaderboard"]["topScores"]["edges"]] == [24, 23]
