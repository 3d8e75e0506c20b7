"""The aiohttp view serving the schema over HTTP (GraphQL over HTTP, see edge/http_request.py)
and WebSocket (edge/websocket.py), with GraphiQL for browsers: each operation within the
request's guards (admission, time budget, cap on database calls), its answer's status, media
type and caching headers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from aiohttp import web
from cross_web import AsyncHTTPRequestAdapter, HTTPException
from strawberry.aiohttp.views import GraphQLView
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.types import ExecutionResult
from strawberry.types.execution import PreExecutionError

from dynamo import budget, outcomes
from dynamo.errors import ErrorCode
from edge import http_cache
from edge.admission import Overloaded
from edge.app_keys import API_KEYS, BROKER, CLOCK, DB, OPERATION, RANK_INDEX, REQUEST_ID, RESPONSES
from edge.cached_answers import encode_response
from edge.guards import Guards, client_address
from edge.http_refusals import refused_status, socket_refused, unavailable
from edge.http_request import (
    GRAPHQL_RESPONSE,
    JSON,
    MethodNotAllowed,
    check_operation,
    check_request,
    wants_graphql_response,
)
from edge.recording import CLIENT_GONE, first_code, http_outcome
from edge.schema import schema
from edge.websocket import GuardedTransportWS, TextOnlyWebSocket
from gql.errors import classify
from resolvers.context import Context, Role

__all__ = ["LeaderboardView"]

OUTCOME = web.RequestKey("outcome", str)
"""``ok`` or the code of the request's first error, once the view has answered it."""
_CONTEXT = web.RequestKey("graphql_context", Context)
_RESPONSE = web.RequestKey("graphql_response", web.Response)
_MEDIA_TYPE = web.ResponseKey("media_type", str)
_SOCKET = web.RequestKey("websocket", web.WebSocketResponse)


class LeaderboardView(GraphQLView[Context, None]):
    """GraphQL over HTTP: GET for queries, POST for everything; GraphiQL for browsers; and
    over WebSocket (graphql-transport-ws only, see edge/websocket.py)."""

    graphql_transport_ws_handler_class = GuardedTransportWS
    websocket_adapter_class = TextOnlyWebSocket

    def __init__(
        self,
        *,
        graphiql_page: Callable[[], web.Response] | None,
        guards: Guards | None = None,
        cache: http_cache.CachePolicy | None = None,
    ) -> None:
        self.guards = guards or Guards()
        self.cache = cache or http_cache.CachePolicy()
        limits = self.guards.sockets.limits
        super().__init__(
            schema=schema,
            graphql_ide="graphiql" if graphiql_page else None,
            subscription_protocols=(GRAPHQL_TRANSPORT_WS_PROTOCOL,),
            connection_init_wait_timeout=timedelta(seconds=limits.init_timeout),
            max_subscriptions_per_connection=None,
        )
        self._graphiql_page = graphiql_page

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        """The answer, or a plain-text refusal with the request error's status (405s name the
        method allowed). An HTTP answer carries its caching headers (edge/http_cache.py). A
        WebSocket is counted from its upgrade to its close; past the process's or the client's
        limit of sockets the upgrade is refused (503 or 429). Every HTTP request answered with
        an operation's result or refused is recorded with its outcome and duration (the
        GraphiQL page is not an operation)."""
        if self.is_websocket_request(request):
            return await self._socket(request)
        started = time.perf_counter()
        try:
            return http_cache.finish(request, await self._answer(request), self.cache)
        except web.HTTPException as refused:
            request[OUTCOME] = http_outcome(refused.status)
            raise
        except (ConnectionResetError, asyncio.CancelledError):
            # The client went away before its request was answered.
            request[OUTCOME] = CLIENT_GONE
            raise
        except Exception:
            request[OUTCOME] = ErrorCode.INTERNAL_SERVER_ERROR.value
            raise
        finally:
            outcome = request.get(OUTCOME)
            if outcome is not None:
                seconds = time.perf_counter() - started
                self.guards.recorder.operation("http", request.get(OPERATION), outcome, seconds)

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        sockets = self.guards.sockets
        address = client_address(request, self.guards.trusted_proxy_hops)
        refused_socket = sockets.refusal(address)
        if refused_socket is not None:
            return socket_refused(refused_socket)
        with sockets.holding(address):
            try:
                return await self._answer(request)
            finally:
                if _SOCKET in request:
                    sockets.closed(request[_SOCKET])

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        try:
            return await self.run(request=request)
        except HTTPException as refused:
            request[OUTCOME] = http_outcome(refused.status_code)
            return web.Response(
                body=refused.reason.encode("utf-8", "backslashreplace"),
                status=refused.status_code,
                content_type="text/plain",
                charset="utf-8",
                headers={"Allow": "POST"} if isinstance(refused, MethodNotAllowed) else None,
            )

    async def parse_http_body(self, request: AsyncHTTPRequestAdapter) -> Any:
        """The request's GraphQL parameters; a body or query string that is not a readable
        GraphQL request (JSON that is not an object, bytes that are not UTF-8, strings that
        are not Unicode text, numbers or nesting beyond what the JSON parser takes) is a 400,
        never a 500; a body that takes longer than the body timeout to arrive is a 408."""
        try:
            async with asyncio.timeout(self.guards.body_timeout):
                data = await super().parse_http_body(request)
            for item in data if isinstance(data, list) else [data]:
                check_request(item)
            return data
        except HTTPException:
            raise
        except TimeoutError:
            raise HTTPException(408, "the request body took too long to arrive") from None
        except (AttributeError, TypeError, UnicodeDecodeError, ValueError, RecursionError):
            raise HTTPException(400, "the request is not a readable GraphQL request") from None

    async def execute_operation(
        self,
        request: web.Request,
        request_adapter: Any,
        request_data: Any,
        context: Context,
        root_value: None,
        sub_response: web.Response,
    ) -> Any:
        """Run the operation in one of the process's places, within the request's time budget
        and cap on database calls. Without a place in time, answer 503 SERVICE_OVERLOADED;
        past the budget, 503 BACKEND_UNAVAILABLE rather than keep the client (and a
        connection) waiting, or OUTCOME_UNKNOWN when it was cut off while a write was
        unconfirmed.

        Before all that, the operation to run is chosen as GraphQL over HTTP requires: a
        subscription is refused with a 400 naming where it is served (plain HTTP has no way to
        deliver its events), and a mutation over GET with a 405 that allows POST."""
        if isinstance(request_data, GraphQLRequestData):
            check_operation(request_data, request.method)
        http_cache.consider(request, request_data)
        guards = self.guards
        spending = budget.current() or budget.begin()
        spending.limit(
            seconds=guards.deadline,
            max_calls=guards.max_calls,
            max_in_flight=guards.max_in_flight,
        )
        try:
            async with guards.admission.slot():
                return await self._run(
                    request,
                    request_adapter,
                    request_data,
                    context,
                    root_value,
                    sub_response,
                    remaining=spending.remaining(),
                )
        except Overloaded as refused:
            return unavailable(sub_response, refused)

    async def _run(
        self,
        request: web.Request,
        request_adapter: Any,
        request_data: Any,
        context: Context,
        root_value: None,
        sub_response: web.Response,
        *,
        remaining: float | None,
    ) -> Any:
        """Execute the operation in what is left of its time budget (the wait for a place
        counts toward it)."""
        with outcomes.recording() as writes:
            try:
                async with asyncio.timeout(remaining):
                    return await super().execute_operation(
                        request, request_adapter, request_data, context, root_value, sub_response
                    )
            except TimeoutError:
                return unavailable(sub_response, outcomes.out_of_time(writes))
            finally:
                context.release()

    async def get_context(
        self, request: web.Request, response: web.Response | web.WebSocketResponse
    ) -> Context:
        caller = request.app[API_KEYS].caller(request.headers.get("Authorization"))
        address = client_address(request, self.guards.trusted_proxy_hops)
        allowances = self.guards.allowances
        context = Context(
            db=request.app[DB],
            clock=request.app[CLOCK],
            caller=caller,
            request_id=request.get(REQUEST_ID, ""),
            broker=request.app[BROKER],
            rank_index=request.app.get(RANK_INDEX),
            client_address=address,
            allowance=(
                allowances.for_client(address)
                if allowances and caller.role is Role.ANONYMOUS
                else None
            ),
            capacity=self.guards.admission,
            responses=request.app.get(RESPONSES),
            cache_answers=isinstance(response, web.Response),
        )
        request[_CONTEXT] = context
        if isinstance(response, web.Response):
            request[_RESPONSE] = response
        return context

    async def process_result(
        self, request: web.Request, result: ExecutionResult
    ) -> GraphQLHTTPResponse:
        context = request.get(_CONTEXT)
        if context is not None and context.operation_name:
            request[OPERATION] = context.operation_name
        if result.errors:
            result.errors = classify(result.errors, request.get(REQUEST_ID, ""))
        request[OUTCOME] = first_code(result.errors)
        body = await super().process_result(request, result)
        http_cache.settle(request, result, body)
        response = request.get(_RESPONSE)
        refused = refused_status(result)
        if response is not None and refused is not None:
            # The caller is over its allowance (429), or the process at its capacity (503),
            # whatever the media type.
            response.set_status(refused[0])
            response.headers["Retry-After"] = str(refused[1])
            return body
        if response is not None and wants_graphql_response(request.headers.get("Accept", "")):
            response[_MEDIA_TYPE] = GRAPHQL_RESPONSE
            if isinstance(result, PreExecutionError):
                # Refused before execution (unparsable, invalid, bad variables): no data at
                # all, and a 4xx status, as the graphql-response+json media type requires.
                response.set_status(400)
                body.pop("data", None)
        return body

    async def create_websocket_response(
        self, request: web.Request, subprotocol: str | None
    ) -> web.WebSocketResponse:
        """The socket, with its bounds: the largest message a client may send, pings to find
        dead peers, and no compression (whose state would cost memory on every socket)."""
        limits = self.guards.sockets.limits
        ws = web.WebSocketResponse(
            protocols=[subprotocol] if subprotocol else [],
            max_msg_size=limits.max_message_bytes,
            heartbeat=limits.heartbeat,
            compress=False,
        )
        await ws.prepare(request)
        request[_SOCKET] = ws
        self.guards.sockets.opened(ws)
        return ws

    def encode_json(self, data: object) -> str:
        """Compact JSON text (a WebSocket message is a text frame)."""
        return encode_response(data).decode("ascii")

    def create_response(
        self,
        response_data: GraphQLHTTPResponse | list[GraphQLHTTPResponse],
        sub_response: web.Response,
    ) -> web.Response:
        # As bytes, with an answer from the response cache written as stored
        # (edge/cached_answers.py).
        sub_response.body = encode_response(response_data)
        sub_response.content_type = sub_response.get(_MEDIA_TYPE, JSON)
        sub_response.charset = "utf-8"
        return sub_response

    async def render_graphql_ide(self, request: web.Request) -> web.Response:
        """The GraphiQL page (each response its own, for its Content-Security-Policy's
        nonce)."""
        assert self._graphiql_page is not None  # the IDE is enabled only with a page
        return self._graphiql_page()
