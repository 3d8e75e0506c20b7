"""GraphQL over WebSocket (the graphql-transport-ws protocol), bounded like every transport.

- Only graphql-transport-ws is spoken: a socket that asks for the legacy ``graphql-ws``
  subprotocol (or none) is closed with 4406 as soon as it opens. A socket must send
  ``connection_init`` within the init timeout, or it is closed with 4408.
- Sockets are counted per process and per client address (edge/sockets.py); past a limit the
  upgrade itself is refused (edge/view.py).
- Each operation is a request of its own: its own request id, the cost limit and the
  caller's allowance (schema extensions), and a budget of time and database calls. A query
  or mutation also takes a place among the process's running operations, as over HTTP.
  Each push of a subscription gets a fresh budget. A socket runs a bounded number of
  operations, and the process a bounded number of subscriptions.
- Errors are classified and masked as over HTTP (``extensions.code``), and every error names
  the operation's ``requestId`` (a socket has no response header to carry it).
- A consumer that falls behind is dropped: a message is not queued behind more than the
  socket's buffer limit, and one that cannot be handed to the socket within the send timeout
  closes it.
- Each operation logs one access line, and is reported to the app's metrics, when it ends;
  no log line holds a document.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing, suppress
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, cast

from aiohttp import WSMsgType
from graphql import GraphQLError, OperationDefinitionNode, get_operation_ast
from strawberry.aiohttp.views import AiohttpWebSocketAdapter
from strawberry.http.exceptions import NonJsonMessageReceived, WebSocketDisconnected
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
    Operation,
    _OperationStreamClosed,
)
from strawberry.subscriptions.protocols.graphql_transport_ws.types import (
    CompleteMessage,
    Message,
    SubscribeMessage,
)
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType

from dynamo import budget, outcomes
from dynamo.errors import ErrorCode, LeaderboardError
from edge.admission import Overloaded
from edge.guards import Guards
from edge.recording import OK, first_code
from edge.schema import DOCUMENTS, GRAPHQL_SCHEMA
from edge.text import is_text
from gql.errors import classify, coded
from resolvers.context import Context

if TYPE_CHECKING:
    from edge.sockets import Sockets

__all__ = ["GuardedTransportWS", "TextOnlyWebSocket"]

access_log = logging.getLogger("leaderboard.access")
error_log = logging.getLogger("leaderboard.errors")


class _Guarded(Protocol):
    guards: Guards


class TextOnlyWebSocket(AiohttpWebSocketAdapter):
    """Messages as JSON values; a message that is not JSON (nested past what the parser
    takes, included) or has text that is not Unicode closes the socket with 4400."""

    async def iter_json(self, *, ignore_parsing_errors: bool = False) -> AsyncGenerator[object]:
        async for ws_message in self.ws:
            if ws_message.type is WSMsgType.BINARY:
                await self.close(4400, "WebSocket message type must be text")
                return
            if ws_message.type is not WSMsgType.TEXT:
                continue
            try:
                message = self.view.decode_json(ws_message.data)
            except (ValueError, RecursionError) as error:
                if ignore_parsing_errors:
                    continue
                raise NonJsonMessageReceived from error
            if not is_text(message):
                await self.close(4400, "WebSocket message has text that is not valid Unicode")
                return
            yield message

    def buffered(self) -> int:
        """Bytes written to the socket and not yet sent."""
        transport = self.request.transport
        return 0 if transport is None else transport.get_write_buffer_size()

    def drop(self) -> None:
        """Close the connection at once: its consumer is too far behind to be sent a close
        frame."""
        transport = self.request.transport
        if transport is not None:
            transport.abort()


class GuardedOperation(Operation[Context, None]):
    """An operation with its own context (request id, loaders, budget hook), whose errors
    are classified like over HTTP."""

    __slots__ = ("calls", "context", "kind", "named", "outcome")

    def __init__(
        self,
        handler: GuardedTransportWS,
        id: str,
        query: str,
        variables: dict[str, object] | None,
        operation_name: str | None,
        *,
        context: Context,
        kind: OperationType | None,
        named: str | None,
    ) -> None:
        super().__init__(handler, id, query, variables, operation_name)
        self.context = context
        self.kind = kind
        self.named = named
        """The name the chosen operation has in the document (the client may not send it)."""
        self.calls: Counter[str] = Counter()
        """Database calls of the budgets ended so far (a subscription's earlier pushes)."""
        self.outcome = OK
        """``ok``, or the code of the first error sent to the client."""

    @property
    def request_id(self) -> str:
        return self.context.request_id

    def _coded(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        coded_errors = classify(errors, self.request_id)
        for error in coded_errors:
            error.extensions = {**(error.extensions or {}), "requestId": self.request_id}
        if self.outcome == OK:
            self.outcome = first_code(coded_errors)
        return coded_errors

    async def send_initial_errors(self, errors: list[GraphQLError]) -> None:
        await super().send_initial_errors(self._coded(errors))

    async def send_next(self, execution_result: ExecutionResult) -> None:
        if execution_result.errors:
            execution_result.errors = self._coded(execution_result.errors)
        await super().send_next(execution_result)

    async def refuse(self, error: LeaderboardError) -> None:
        """End the operation with one coded error."""
        await self.send_initial_errors([coded(error)])


class GuardedTransportWS(BaseGraphQLTransportWSHandler[Context, None]):
    """graphql-transport-ws with the service's bounds (see the module's documentation)."""

    websocket: TextOnlyWebSocket

    @property
    def guards(self) -> Guards:
        return cast(_Guarded, self.view).guards

    @property
    def sockets(self) -> Sockets:
        return self.guards.sockets

    async def handle_message(self, message: Message) -> None:
        if not isinstance(message, Mapping) or not isinstance(message.get("type"), str):
            await self.handle_invalid_message("Failed to parse message")
            return
        await super().handle_message(message)

    async def handle_subscribe(self, message: SubscribeMessage) -> None:
        if not self.connection_acknowledged or message.get("id") in self.operations:
            await super().handle_subscribe(message)  # closes the socket: 4401 or 4409
            return
        id_ = message.get("id")
        raw: object = message.get("payload")
        if not isinstance(id_, str) or not _readable(raw):
            await self.handle_invalid_message("Invalid subscribe message")
            return
        payload = cast(dict[str, Any], raw)
        query: str = payload["query"]
        operation_name: str | None = payload.get("operationName")
        limit = self.sockets.limits.max_operations_per_socket
        if len(self.operations) >= limit:
            await self._refuse(id_, operation_name, _too_many(limit))
            return
        chosen = _chosen_operation(query, operation_name)
        kind = OperationType(chosen.operation.value) if chosen else None
        holds_subscription = False
        if kind is OperationType.SUBSCRIPTION:
            refused = self.sockets.start_subscription()
            if refused is not None:
                await self._refuse(id_, operation_name, refused)
                return
            holds_subscription = True
        operation = GuardedOperation(
            self,
            id_,
            query,
            payload.get("variables"),
            operation_name,
            context=replace(self.context, request_id=uuid.uuid4().hex),
            kind=kind,
            named=chosen.name.value if chosen and chosen.name else None,
        )
        self.operations[id_] = operation
        task = asyncio.create_task(self.run_operation(operation))
        operation.task = task
        if holds_subscription:
            task.add_done_callback(lambda _: self.sockets.end_subscription())
        task.add_done_callback(self._task_done)

    async def _refuse(self, id_: str, operation_name: str | None, error: LeaderboardError) -> None:
        """Refuse an operation before anything of it is made: one coded error message."""
        request_id = uuid.uuid4().hex
        formatted = coded(error).formatted
        formatted["extensions"] = {**(formatted.get("extensions") or {}), "requestId": request_id}
        await self.send_message({"id": id_, "type": "error", "payload": [formatted]})
        _log(request_id, id_, operation_name, "refused", 0.0, Counter())
        self.guards.recorder.operation("ws", operation_name, error.code.value, 0.0)

    def _begin_budget(self, operation: GuardedOperation) -> budget.Budget:
        """A fresh budget for the operation (or its next push), in the operation's task."""
        spent = budget.current()
        if spent is not None:
            operation.calls.update(spent.calls)
        guards = self.guards
        spending = budget.begin()
        spending.limit(
            seconds=guards.deadline, max_calls=guards.max_calls, max_in_flight=guards.max_in_flight
        )
        return spending

    async def run_operation(self, operation: Operation[Context, None]) -> None:
        assert isinstance(operation, GuardedOperation)
        started = time.perf_counter()
        outcome = "complete"
        budget.begin()  # this task's own: the socket's budget is not the operation's
        spending = self._begin_budget(operation)
        try:
            if operation.kind is OperationType.SUBSCRIPTION:
                operation.context.on_push = lambda: self._begin_budget(operation)
                await self._execute(operation)
            else:
                async with self.guards.admission.slot():
                    with outcomes.recording() as writes:
                        try:
                            async with asyncio.timeout(spending.remaining()):
                                await self._execute(operation)
                        except TimeoutError:
                            outcome = "out of time"
                            await operation.refuse(outcomes.out_of_time(writes))
        except Overloaded as refused:
            outcome = "refused"
            await operation.refuse(refused)
        except (_OperationStreamClosed, WebSocketDisconnected):
            outcome = "closed"
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        except Exception:
            outcome = "failed"
            error_log.exception(
                "unhandled error in a WebSocket operation",
                extra={"requestId": operation.request_id},
            )
            await self._send_internal_error(operation)
        finally:
            current = budget.current()
            if current is not None:
                operation.calls.update(current.calls)
            seconds = time.perf_counter() - started
            _log(
                operation.request_id,
                operation.id,
                operation.operation_name,
                outcome,
                seconds,
                operation.calls,
            )
            failed = outcome == "failed"
            code = ErrorCode.INTERNAL_SERVER_ERROR.value if failed else operation.outcome
            name = operation.named or operation.context.operation_name
            self.guards.recorder.operation("ws", name, code, seconds)

    async def _execute(self, operation: GuardedOperation) -> None:
        result_source = await self.schema.stream(
            operation.query,
            variable_values=operation.variables,
            context_value=operation.context,
            root_value=self.root_value,
            operation_name=operation.operation_name,
        )
        async with aclosing(result_source):
            await self._send_result_stream(operation, result_source)
        await operation.send_operation_message(CompleteMessage(id=operation.id, type="complete"))

    async def _send_internal_error(self, operation: GuardedOperation) -> None:
        error = GraphQLError(
            f"Internal server error (request {operation.request_id})",
            extensions={
                "code": ErrorCode.INTERNAL_SERVER_ERROR.value,
                "requestId": operation.request_id,
            },
        )
        with suppress(WebSocketDisconnected):
            await operation.send_operation_message(
                {"id": operation.id, "type": "error", "payload": [error.formatted]}
            )

    async def handle_task_exception(self, error: Exception) -> None:
        error_log.error("WebSocket task failed: %s", type(error).__name__)

    async def send_message(self, message: Message) -> None:
        """Send, unless the consumer is too far behind: then it is dropped."""
        limits = self.sockets.limits
        if self.websocket.buffered() > limits.max_buffer_bytes:
            self._drop("its unsent messages passed the buffer limit")
        try:
            async with asyncio.timeout(limits.send_timeout):
                await self.websocket.send_json(message)
        except TimeoutError:
            self._drop("a message waited past the send timeout")

    def _drop(self, why: str) -> None:
        self.sockets.dropped += 1
        error_log.warning("slow WebSocket consumer dropped: %s", why)
        self.websocket.drop()
        raise WebSocketDisconnected


def _readable(payload: object) -> bool:
    """Whether a subscribe payload has the shape the protocol requires."""
    if not isinstance(payload, dict):
        return False
    return (
        isinstance(payload.get("query"), str)
        and isinstance(payload.get("operationName"), str | None)
        and isinstance(payload.get("variables"), dict | None)
        and isinstance(payload.get("extensions"), dict | None)
    )


def _chosen_operation(query: str, operation_name: str | None) -> OperationDefinitionNode | None:
    """The operation to run, from the schema's cache of checked documents; None when the
    document does not name one (the execution reports why)."""
    document = DOCUMENTS.check(GRAPHQL_SCHEMA, query).document
    if document is None:
        return None
    return get_operation_ast(document, operation_name)


def _too_many(limit: int) -> LeaderboardError:
    return LeaderboardError(
        ErrorCode.THROTTLED,
        f"this connection already runs {limit} operations, its limit: complete one first",
    )


def _log(
    request_id: str,
    operation_id: str,
    operation_name: str | None,
    outcome: str,
    seconds: float,
    calls: Counter[str],
) -> None:
    access_log.info(
        "websocket operation",
        extra={
            "requestId": request_id,
            "transport": "websocket",
            "operationId": operation_id,
            "operationName": operation_name,
            "outcome": outcome,
            "durationMs": round(seconds * 1000, 2),
            "dynamodbCalls": sum(calls.values()),
            "dynamodbCallsByOperation": dict(calls),
        },
    )
