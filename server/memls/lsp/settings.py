"""The client's settings for memls, one typed Struct: from `initializationOptions` at start and
the `memls` section of the workspace configuration (pulled after `initialized` and on
`workspace/didChangeConfiguration`). A bad value is refused by name and reported to the user;
the previous settings stay."""

from __future__ import annotations

from typing import Any

import msgspec

from memls import protocol
from memls.errors import InvalidInput


class ClientSettings(msgspec.Struct, kw_only=True, rename="camel", forbid_unknown_fields=False):
    """What a client may set. Unknown keys are ignored (editors send their whole section,
    including settings only the extension reads); known keys of the wrong type are refused.
    Which files are notes is not the editor's to say: the owner's table of the agents'
    conventions says it, with config.toml's `[notes]`."""

    token: str | None = None


def read(raw: Any, where: str) -> ClientSettings:
    """Decode settings; InvalidInput names `where.key` when a value is wrong."""
    if raw is None:
        return ClientSettings()
    try:
        return protocol.parse(ClientSettings, raw)
    except InvalidInput as exc:
        exc.field = f"{where}.{exc.field}" if exc.field else where
        raise
