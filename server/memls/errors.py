"""Errors every front maps to its own surface (CLI exit code, JSON-RPC error)."""

from __future__ import annotations


class MemlsError(Exception):
    """Base error: a clear one-line message; nothing was changed."""

    kind = "error"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


class InvalidInput(MemlsError):
    """A parameter is missing or malformed. `field` names it (wire name)."""

    kind = "invalid_params"


class NotFound(MemlsError):
    """No such memory in this project (another project's id is not found either)."""

    kind = "not_found"


class Refused(MemlsError):
    """The request is well formed but the current state does not allow it."""

    kind = "refused"


class StoreError(MemlsError):
    """The data directory cannot be used (newer schema, owned elsewhere, unreadable)."""

    kind = "store"
