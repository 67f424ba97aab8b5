"""JSON-RPC as memls speaks it over pygls: no traceback on the wire and `exit` ending only a TCP
connection (`GuardedProtocol`), memory/* params kept as the JSON the client sent
(decoded once, by msgspec, in `requests`), the token gate of a TCP connection, and our own
notifications sent as notifications."""

from __future__ import annotations

import logging
from typing import Any

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcServerError
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCProtocol,
    LanguageServerProtocol,
    default_converter,
)
from pygls.protocol.language_server import lsp_method

from memls import protocol
from memls.lsp.transport import INTERNAL_ERROR

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


log = logging.getLogger("memls.lsp.transport")
INTERNAL_MESSAGE = "internal error in memls (details are in the server's log)"


class GuardedProtocol(LanguageServerProtocol):
    """LanguageServerProtocol that never sends a traceback and whose `exit` ends only a TCP
    connection (the server's `connection_only`), never the daemon."""

    def _send_response(self, msg_id, result=None, error=None):
        if error is not None and error.code == INTERNAL_ERROR:
            log.error(
                "internal error answering request %r: %s %s",
                msg_id,
                error.message,
                "".join((error.data or {}).get("traceback", []))
                if isinstance(error.data, dict)
                else error.data or "",
            )
            error = types.ResponseError(code=INTERNAL_ERROR, message=INTERNAL_MESSAGE)
        return super()._send_response(msg_id, result, error)

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args):
        if getattr(self._server, "connection_only", False):
            # one TCP client leaving: close its connection; the daemon and the others go on
            if (user_handler := self.fm.features.get(types.EXIT)) is not None:
                yield user_handler, args, None
            close = getattr(self._server, "close_connection", None)
            if close is not None:
                close()
            return None
        return (yield from super().lsp_exit(*args))


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
