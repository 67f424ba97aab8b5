"""The one registration table: every LSP message memls answers, and the handler for it."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from memls import protocol
from memls.lsp import actions
from memls.lsp.server import MemlsServer


def initialize(ls: MemlsServer, params: types.InitializeParams) -> None:
    options = params.initialization_options or {}
    if ls.token is not None:
        given = options.get("token") if isinstance(options, dict) else None
        if not isinstance(given, str) or not secrets.compare_digest(given, ls.token):
            raise JsonRpcInvalidParams(message="initializationOptions.token is missing or wrong")
        ls.authenticated = True
    folders = [f.uri for f in params.workspace_folders or []]
    if not folders and params.root_uri:
        folders = [params.root_uri]
    ls.projects.set(folders)
    ls.apply_settings(options, "initializationOptions")


async def initialized(ls: MemlsServer, params: types.InitializedParams) -> None:
    ls._loop = asyncio.get_running_loop()
    ls.spawn(ls.start_engine())
    await pull_configuration(ls)
    ls.spawn(ls.index_workspace())


async def pull_configuration(ls: MemlsServer) -> None:
    """The `memls` section of the workspace configuration, where the client offers it."""
    caps = ls.client_capabilities.workspace
    if caps is None or not caps.configuration:
        return
    try:
        config = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section="memls")])
        )
    except Exception as exc:  # noqa: BLE001 - a client may not answer; say so, go on
        ls.window_log_message(
            types.LogMessageParams(
                type=types.MessageType.Warning, message=f"memls: no workspace configuration: {exc}"
            )
        )
        return
    section = (config or [None])[0]
    if section:
        ls.apply_settings(section, "memls")


async def configuration_changed(
    ls: MemlsServer, params: types.DidChangeConfigurationParams
) -> None:
    await pull_configuration(ls)


def folders_changed(ls: MemlsServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    current = {f.uri for f in ls.projects.folders}
    current -= {f.uri for f in params.event.removed}
    current |= {f.uri for f in params.event.added}
    ls.projects.set(sorted(current))
    ls.spawn(ls.rescope())
    ls.spawn(ls.index_workspace())


def document_changed(ls: MemlsServer, params: Any) -> None:
    """didOpen / didChange / didClose: the buffer (or, after close, the disk) is re-read."""
    ls.sync_debounce.touch(params.text_document.uri)


async def shutdown(ls: MemlsServer, *args: Any) -> None:
    engine, ls.engine = ls.engine, None
    if engine is not None and ls.owns_engine:  # off the loop: close waits for work
        await asyncio.get_running_loop().run_in_executor(None, engine.close)


def _memory_request(name: str) -> Callable[..., Any]:
    async def handler(ls: MemlsServer, params: Any) -> Any:
        return await ls.request(name, params)

    handler.__name__ = name.replace("/", "_")
    return handler


FEATURES: list[tuple[str, Callable[..., Any], Any]] = [
    (types.INITIALIZE, initialize, None),
    (types.INITIALIZED, initialized, None),
    (types.SHUTDOWN, shutdown, None),
    (types.WORKSPACE_DID_CHANGE_CONFIGURATION, configuration_changed, None),
    (types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, folders_changed, None),
    (types.TEXT_DOCUMENT_DID_OPEN, document_changed, None),
    (types.TEXT_DOCUMENT_DID_CHANGE, document_changed, None),
    (types.TEXT_DOCUMENT_DID_CLOSE, document_changed, None),
    (
        types.TEXT_DOCUMENT_CODE_ACTION,
        actions.code_action,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    ),
    *[(name, _memory_request(name), None) for name in protocol.METHODS],
]
"""(method, handler, registration options) for every message memls answers."""

COMMANDS: list[tuple[str, Callable[..., Any]]] = [
    ("memls.resolve", actions.resolve),
    ("memls.open", actions.open_other),
]


def build(data_dir: str | None = None, token: str | None = None) -> MemlsServer:
    server = MemlsServer(data_dir=data_dir, token=token)
    for method, handler, options in FEATURES:
        server.feature(method, options)(handler)
    for name, command in COMMANDS:
        server.command(name)(command)
    return server


def serve_stdio(data_dir: str | None = None) -> None:
    from memls.config import apply_limits
    from memls.lsp import transport

    apply_limits(data_dir)
    transport.run_stdio(build(data_dir))
