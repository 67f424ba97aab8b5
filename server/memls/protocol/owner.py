"""Messages of the owner socket that are not memory/* requests: the hello, subscriptions, flush,
export and import (the newline-delimited JSON-RPC between a front and the owning process)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from memls.protocol.base import Project, Wire


class FlushParams(Wire):
    """$/flush: wait until every acknowledged write is in the vector index."""

    timeout: float = 120.0


class ExportParams(Wire):
    project: Project | None = None


class ImportParams(Wire):
    lines: list[str]
    project: Project | None = None
    redact: bool = False  # memories' secrets redacted instead of refusing the import


class HelloParams(Wire):
    """$/hello: who is connecting (recorded as the front of its writes)."""

    front: str | None = None
    version: str | None = None
    pid: int | None = None


class HelloResult(Wire):
    pid: int
    version: str
    data_dir: str
    front: str
    vectors: bool


class SubscribeParams(Wire):
    """$/subscribe: receive the notifications of these projects (None: every project)."""

    projects: Annotated[list[Project], msgspec.Meta(max_length=1000)] | None = None


class SubscribeResult(Wire):
    subscribed: bool


class FlushResult(Wire):
    flushed: bool


class ExportResult(Wire):
    lines: list[dict[str, Any]]


class ImportResult(Wire):
    imported: dict[str, int]


class OwnerError(Wire):
    """The error body of a failed request on the owner socket."""

    kind: str
    message: str
    field: str | None = None


class McpScope(Wire):
    """What `memls mcp` knows of a session's projects."""

    pinned: Project | None = None  # its --project
    roots: Annotated[list[Project], msgspec.Meta(max_length=1000)] | None = None  # the client's
    workdir: Project | None = None  # the project that holds its working directory


class McpCallParams(Wire):
    """$/mcp: one MCP request the light `memls mcp` relays to the owner (tools/call,
    resources/list, resources/read, prompts/get); the result is the MCP result object."""

    method: Annotated[str, msgspec.Meta(max_length=100)]
    params: dict[str, Any] | None = None
    scope: McpScope = msgspec.field(default_factory=McpScope)


OWNER_METHODS: dict[str, tuple[type, type]] = {
    "$/hello": (HelloParams, HelloResult),
    "$/subscribe": (SubscribeParams, SubscribeResult),
    "$/flush": (FlushParams, FlushResult),
    "memory/export": (ExportParams, ExportResult),
    "memory/import": (ImportParams, ImportResult),
    "$/mcp": (McpCallParams, dict),
}
"""(params, result) of the owner socket's own methods, beside protocol.METHODS."""
