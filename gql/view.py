"""The aiohttp view serving the schema over HTTP, with GraphiQL for browsers."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from aiohttp import web
from strawberry.aiohttp.views import GraphQLView

from dynamo.table import Db
from gql.schema import schema
from resolvers.context import Context

__all__ = ["CLOCK", "DB", "DEFAULT_QUERY", "LeaderboardView"]

DB = web.AppKey("db", Db)
CLOCK: web.AppKey[Callable[[], datetime]] = web.AppKey("clock")

DEFAULT_QUERY = """\
# Top 10 of the demo board, with ranks and player names.
# Run it with the play button or Ctrl-Enter.
query TopTen {
  leaderboard(id: "global") {
    name
    entryCount
    topScores(first: 10) {
      edges {
        node {
          rank
          score
          attainedAt
          player { id name }
        }
      }
      pageInfo { hasNextPage endCursor }
    }
  }
}
"""


class LeaderboardView(GraphQLView[Context, None]):
    """GraphQL over HTTP: GET for queries, POST for everything; GraphiQL for browsers."""

    def __init__(self, *, graphiql_page: str | None) -> None:
        super().__init__(schema=schema, graphql_ide="graphiql" if graphiql_page else None)
        self._graphiql_page = graphiql_page or ""

    async def get_context(
        self, request: web.Request, response: web.Response | web.WebSocketResponse
    ) -> Context:
        return Context(db=request.app[DB], clock=request.app[CLOCK])

    async def render_graphql_ide(self, request: web.Request) -> web.Response:
        return web.Response(text=self._graphiql_page, content_type="text/html")
