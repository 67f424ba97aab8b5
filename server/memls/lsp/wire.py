"""JSON-RPC as memls speaks it over pygls: memory/* params kept as the JSON the client sent
(decoded once, by msgspec, in `requests`), the token gate of a TCP connection, and our own
notifications sent as notifications."""

from __future__ import annotations

from typing import Any

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcServerError
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCProtocol,
    default_converter,
)

from memls import protocol
from memls.lsp.transport import GuardedProtocol

ERROR_CODES = {
    "not_found": -32004,
    "refused": -32005,
    "store": -32006,
    "model_unavailable": -32007,
    "error": -32000,
}
"""JSON-RPC error codes of the engine's error kinds (invalid input is -32602)."""


class RawParams:
    """Marker: custom requests keep their params as the JSON the client sent."""


@attrs.define
class RawRequest:
    id: int | str
    method: str
    jsonrpc: str
    params: RawParams = None  # type: ignore[assignment]


def converter() -> Any:
    made = default_converter()
    made.register_structure_hook(RawParams, lambda value, _type: value)
    return made


class MemlsProtocol(GuardedProtocol):
    def get_message_type(self, method: str) -> Any:  # type: ignore[override]
        if method in protocol.METHODS:
            return RawRequest
        return super().get_message_type(method)

    def handle_message(self, message: Any) -> Any:
        server: Any = self._server
        method = getattr(message, "method", None)
        if (
            server.token is not None
            and not server.authenticated
            and method is not None
            and method != types.INITIALIZE
        ):  # `exit` too: no client stops us unasked
            if getattr(message, "id", None) is not None:  # a request: refuse it, answered
                self._send_response(
                    message.id,
                    error=JsonRpcServerError(
                        "not initialized with the token", -32002
                    ).to_response_error(),
                )
            return None
        return super().handle_message(message)

    def notify(self, method: str, params: Any | None = None) -> None:
        # memory/conflicts is a request (client -> server) and a notification (server ->
        # client): ours go out as plain notifications, whatever get_message_type says.
        if method in protocol.NOTIFICATIONS:
            self._send_data(
                JsonRPCNotification(method=method, params=params, jsonrpc=JsonRPCProtocol.VERSION)
            )
        else:
            super().notify(method, params)
