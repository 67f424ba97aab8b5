"""The client's settings for memls, one typed Struct: from `initializationOptions` at start and
the `memls` section of the workspace configuration (pulled after `initialized` and on
`workspace/didChangeConfiguration`). A bad value is refused by name and reported to the user;
the previous settings stay."""

from __future__ import annotations

from typing import Any

import msgspec

from memls import protocol
from memls.config import INSTRUCTION_GLOBS, RECORD_GLOBS
from memls.errors import InvalidInput
from memls.notes.globs import DEFAULT_GLOBS


class NotesSettings(msgspec.Struct, kw_only=True, rename="camel", forbid_unknown_fields=False):
    """Which workspace files are notes, and which of them are instruction files (any two
    of a file's statements are compared) or decision records; whether the memories agents
    keep by themselves outside the folder (Claude Code's auto memory of the project) are
    notes of this window too (diagnostics, an open buffer synced)."""

    globs: list[str] = msgspec.field(default_factory=lambda: list(DEFAULT_GLOBS))
    instructions: list[str] = msgspec.field(default_factory=lambda: list(INSTRUCTION_GLOBS))
    records: list[str] = msgspec.field(default_factory=lambda: list(RECORD_GLOBS))
    agent_memories: bool = True


class ClientSettings(msgspec.Struct, kw_only=True, rename="camel", forbid_unknown_fields=False):
    """What a client may set. Unknown keys are ignored (editors send their whole section,
    including settings only the extension reads); known keys of the wrong type are refused."""

    token: str | None = None
    notes: NotesSettings = msgspec.field(default_factory=NotesSettings)


def read(raw: Any, where: str) -> ClientSettings:
    """Decode settings; InvalidInput names `where.key` when a value is wrong."""
    if raw is None:
        return ClientSettings()
    try:
        return protocol.parse(ClientSettings, raw)
    except InvalidInput as exc:
        exc.field = f"{where}.{exc.field}" if exc.field else where
        raise
