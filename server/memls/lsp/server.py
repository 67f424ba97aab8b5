"""The memls language server (pygls 2).

- `initialize` is answered at once; the engine opens after `initialized`, off the event loop,
  and models load lazily on their own pool. Requests that arrive first wait for it.
- Every `memory/*` request of `protocol.METHODS` is served generically: raw params are decoded
  once with msgspec (`protocol.parse`), the project is settled by `lsp.projects`, the engine
  runs on a dedicated thread pool, the result goes back as plain data.
- Notes of the workspace are indexed at start (with `$/progress`), on edits (open buffers win),
  and on file changes (dynamic `workspace/didChangeWatchedFiles` where the client offers it,
  `watchfiles` otherwise); contradictions come back as diagnostics with code actions.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types
from pygls import uris
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcServerError
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCProtocol,
    LanguageServerProtocol,
    default_converter,
)

from memls import __version__, protocol
from memls.errors import InvalidInput, MemlsError
from memls.lsp import diagnostics as diag
from memls.lsp import notes
from memls.lsp.projects import Projects
from memls.notes.parse import split_lines

log = logging.getLogger("memls.lsp")

READS = {"query", "get", "list", "forgotten", "conflicts", "stats", "audit", "health",
         "doctor", "dead_letters", "check_pair"}
ORIGIN = re.compile(r"[A-Za-z0-9_-]{1,40}")
ERROR_CODES = {"not_found": -32004, "refused": -32005, "store": -32006,
               "model_unavailable": -32007, "error": -32000}


class RawParams:
    """Marker: custom requests keep their params as the JSON the client sent."""


@attrs.define
class RawRequest:
    id: int | str
    method: str
    jsonrpc: str
    params: RawParams = None  # type: ignore[assignment]


def _converter():
    converter = default_converter()
    converter.register_structure_hook(RawParams, lambda value, _type: value)
    return converter


class MemlsProtocol(LanguageServerProtocol):
    def get_message_type(self, method: str):
        if method in protocol.METHODS:
            return RawRequest
        return super().get_message_type(method)

    def handle_message(self, message):
        server = self._server
        method = getattr(message, "method", None)
        if (server.token is not None and not server.authenticated and method is not None
                and method not in (types.INITIALIZE, types.EXIT)):
            if getattr(message, "id", None) is not None:  # a request: refuse it, answered
                self._send_response(message.id, error=JsonRpcServerError(
                    "not initialized with the token", -32002).to_response_error())
            return None
        return super().handle_message(message)

    def notify(self, method: str, params: Any | None = None) -> None:
        # memory/conflicts is a request (client -> server) and a notification (server ->
        # client): ours go out as plain notifications, whatever get_message_type says.
        if method in protocol.NOTIFICATIONS:
            self._send_data(JsonRPCNotification(method=method, params=params,
                                                jsonrpc=JsonRPCProtocol.VERSION))
        else:
            super().notify(method, params)


class MemlsServer(LanguageServer):
    def __init__(self, data_dir: str | None = None, token: str | None = None) -> None:
        super().__init__("memls", __version__, protocol_cls=MemlsProtocol,
                         converter_factory=_converter,
                         text_document_sync_kind=types.TextDocumentSyncKind.Full)
        self.data_dir = data_dir
        self.token = token
        self.authenticated = token is None
        self.owns_engine = True    # False for a TCP connection: the daemon's engine is shared
        self.engine: Any = None
        self.ready = asyncio.Event()
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="memls-engine")
        self.projects = Projects()
        self.globs: list[str] = list(notes.DEFAULT_GLOBS)
        self.used_projects: set[str] = set()
        self.published: dict[str, set[str]] = {}  # project -> uris with diagnostics
        self.indexed: dict[str, str] = {}         # note uri -> project
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task] = set()
        self._refresh: dict[str, asyncio.TimerHandle] = {}
        self.sync_debounce = notes.Debouncer(0.25, self._sync_uri)
        self.open_error: str | None = None
        self._takeover = asyncio.Lock()

    # ------------------------------------------------------------ engine access

    def spawn(self, coro) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    async def run(self, method: str, params: Any, origin: str | None = None) -> Any:
        """Run one engine method on the engine pool, after the engine is open. `origin` (a
        part of the client, e.g. an editor's language-model tool) is named in the audit log
        as the front `lsp:<origin>` where this process owns the store."""
        await self.ready.wait()
        if self.engine is None:
            raise JsonRpcServerError(f"the memls engine could not start: {self.open_error}",
                                     ERROR_CODES["store"])
        from memls.daemon.handle import OwnerExited, reconnect

        loop = asyncio.get_running_loop()
        engine = self.engine
        call = getattr(engine, method)
        if origin is not None and hasattr(engine, "acting_for"):
            def call(p: Any, engine: Any = engine) -> Any:
                with engine.acting_for(f"lsp:{origin}"):
                    return getattr(engine, method)(p)
        try:
            return await loop.run_in_executor(self.pool, call, params)
        except OwnerExited:
            # The owning process went away: take over (or join the next owner), then retry
            # reads; a write's outcome is unknown, so it is reported, not repeated.
            async with self._takeover:
                if self.engine is engine:  # not yet replaced by a concurrent call
                    self.engine = await loop.run_in_executor(self.pool, reconnect, engine)
            if method in READS:
                return await loop.run_in_executor(self.pool, getattr(self.engine, method),
                                                  params)
            raise

    async def request(self, name: str, raw: Any) -> Any:
        method = protocol.METHODS[name]
        try:
            if raw is None:
                raw = {}
            if not isinstance(raw, dict):
                raise InvalidInput("params must be an object", field=None)
            data = dict(raw)
            origin = data.pop("origin", None)  # who inside the client asks (audit log)
            if origin is not None and not (isinstance(origin, str) and ORIGIN.fullmatch(origin)):
                raise InvalidInput("must be 1-40 letters, digits, '-' or '_'", field="origin")
            if name == "memory/syncNote":  # its uri is the note itself
                uri = data.get("uri")
                folder = self.projects.containing(uri) if isinstance(uri, str) else None
                if folder is None:
                    raise InvalidInput("the note is outside the workspace folders", field="uri")
                data["project"] = folder.project
            else:
                uri = data.pop("uri", None)  # names the document, for the project only
                if "project" in method.params.__struct_fields__:
                    data["project"] = self.projects.resolve({"project": data.get("project"),
                                                             "uri": uri})
                    if data["project"] not in self.used_projects:
                        self.used_projects.add(data["project"])
                        await self.rescope()  # before the request: its notifications reach us
            params = protocol.parse(method.params, data)
            result = await self.run(method.engine, params, origin)
        except InvalidInput as exc:
            raise JsonRpcInvalidParams(
                message=f"{exc.field}: {exc.message}" if exc.field else exc.message,
                data={"field": exc.field}) from None
        except MemlsError as exc:
            raise JsonRpcServerError(str(exc), ERROR_CODES.get(exc.kind, -32000),
                                     data={"kind": exc.kind, "field": exc.field}) from None
        if name in ("memory/resolve", "memory/supersede", "memory/forget", "memory/review"):
            self.schedule_refresh(getattr(params, "project", None))
        return protocol.to_wire(result)

    # ------------------------------------------------------------ start-up

    async def start_engine(self) -> None:
        from memls.daemon.handle import open_engine

        loop = asyncio.get_running_loop()
        self._loop = loop
        if self.engine is not None:  # opened at process start (TCP daemon)
            self.ready.set()
            return
        try:
            scope = frozenset(self.own_projects())  # read on the loop, which changes it

            def opened():
                from memls.daemon.client import RemoteEngine

                engine = open_engine(self.data_dir, front="lsp", serve=True)
                if isinstance(engine, RemoteEngine):  # the owner sends only our projects'
                    engine.subscribed_projects = scope
                engine.listeners.append(self._engine_event)  # a subscription: not on the loop
                return engine

            self.engine = await loop.run_in_executor(self.pool, opened)
        except Exception as exc:  # noqa: BLE001 - reported to the editor, never silent
            self.open_error = str(exc)
            log.exception("engine failed to open")
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Error, message=f"memls: {exc}"))
        finally:
            self.ready.set()
        if self.engine is not None:
            health = await self.run("health", protocol.HealthParams())
            if health.degraded:
                self.window_show_message(types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message="memls is degraded: " + "; ".join(health.degraded)))

    def _engine_event(self, method: str, payload: Any) -> None:
        """Engine notifications arrive on the indexer thread: hop to the event loop."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._forward, method, payload)

    def own_projects(self) -> set[str]:
        """This window's projects: its workspace folders' and those its requests named."""
        return {f.project for f in self.projects.folders} | self.used_projects

    async def rescope(self) -> None:
        """Narrow (or widen) the owner's notifications to this window's projects when another
        process owns the store; an owner that has gone is dealt with by the next request."""
        from memls.daemon.client import RemoteEngine

        await self.ready.wait()
        engine, mine = self.engine, frozenset(self.own_projects())
        if not isinstance(engine, RemoteEngine) or engine.subscribed_projects == mine:
            return
        try:
            await asyncio.get_running_loop().run_in_executor(self.pool, engine.subscribe, mine)
        except MemlsError as exc:
            log.warning("memls: could not rescope notifications: %s", exc)

    def _forward(self, method: str, payload: Any) -> None:
        project = getattr(payload, "project", None)
        if project not in self.own_projects():
            return  # another window's project: never sent here
        self.protocol.notify(method, protocol.to_wire(payload))
        if method == "memory/conflicts" or (
                method == "memory/changed" and payload.op != "store"):
            self.schedule_refresh(project)

    # ------------------------------------------------------------ notes

    async def index_workspace(self) -> None:
        await self.ready.wait()
        if self.engine is None:
            return
        files = [(folder, path) for folder in self.projects.folders
                 for path in await asyncio.get_running_loop().run_in_executor(
                     self.pool, notes.discover, folder.path, self.globs)]
        token = None
        caps = self.client_capabilities.window
        if caps is not None and caps.work_done_progress:
            token = str(uuid.uuid4())
            try:
                await self.work_done_progress.create_async(token)
                self.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                    title="memls: indexing notes", percentage=0, cancellable=False,
                    message=f"{len(files)} files"))
            except Exception:  # noqa: BLE001 - a client may refuse progress
                token = None
        for n, (folder, path) in enumerate(files, start=1):
            await self._sync_uri(uris.from_fs_path(str(path)), refresh=False)
            if token is not None:
                self.work_done_progress.report(token, types.WorkDoneProgressReport(
                    message=f"{n}/{len(files)} {path.name}",
                    percentage=int(100 * n / max(1, len(files)))))
        if token is not None:
            # the notes are in the record; progress stays open until they are embedded too,
            # since search by meaning and the contradiction check wait for that
            deadline = asyncio.get_running_loop().time() + 600
            while asyncio.get_running_loop().time() < deadline:
                health = await self.run("health", protocol.HealthParams())
                if health.index_pending == 0 or health.degraded:
                    break
                self.work_done_progress.report(token, types.WorkDoneProgressReport(
                    message=f"embedding: {health.index_pending} left"))
                await asyncio.sleep(0.25)
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(
                message=f"indexed {len(files)} note files"))
        for folder in self.projects.folders:
            self.schedule_refresh(folder.project, delay=0.0)

    def note_folder(self, uri: str):
        folder = self.projects.containing(uri)
        if folder is None or not notes.is_note(uri, folder.path, self.globs):
            return None
        return folder

    async def _sync_uri(self, uri: str, refresh: bool = True) -> None:
        folder = self.note_folder(uri)
        if folder is None:
            return
        doc = self.workspace.text_documents.get(uri)
        if doc is not None:
            text = doc.source  # the open buffer wins over the disk
        else:
            path = Path(uris.to_fs_path(uri) or "")
            try:
                text = await asyncio.get_running_loop().run_in_executor(
                    self.pool, notes.read_disk, path)
            except notes.Unreadable as exc:
                log.warning("not indexing %s", exc)  # keep what was indexed before
                return
        params = protocol.SyncNoteParams(uri=uri, text=text, project=folder.project,
                                         default_type=notes.note_type(uri, folder.path))
        try:
            await self.run("sync_note", params)
        except MemlsError as exc:
            log.warning("indexing %s failed: %s", uri, exc)
            return
        self.indexed[uri] = folder.project
        if refresh:
            self.schedule_refresh(folder.project)

    # ------------------------------------------------------------ diagnostics

    def schedule_refresh(self, project: str | None, delay: float = 0.15) -> None:
        if project is None or self._loop is None:
            return
        old = self._refresh.pop(project, None)
        if old is not None:
            old.cancel()
        self._refresh[project] = self._loop.call_later(
            delay, lambda: self.spawn(self.refresh_diagnostics(project)))

    async def refresh_diagnostics(self, project: str) -> None:
        self._refresh.pop(project, None)
        if project not in {f.project for f in self.projects.folders}:
            return
        found = await self.run("conflicts", protocol.ConflictsParams(
            project=project, status="open", limit=1000))
        by_uri: dict[str, list] = {}
        for c in found.conflicts:
            for uri in {m.source_uri for m in (c.newer, c.older)}:
                if uri and uri in self.indexed:
                    by_uri.setdefault(uri, []).append(c)
        previous = self.published.get(project, set())
        for uri in previous | set(by_uri):
            doc = self.workspace.text_documents.get(uri)
            lines = split_lines(doc.source) if doc is not None else None
            items = diag.for_document(uri, by_uri.get(uri, []), lines)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=items))
        self.published[project] = set(by_uri)

    # ------------------------------------------------------------ watching

    async def watch(self) -> None:
        caps = self.client_capabilities.workspace
        dynamic = (caps is not None and caps.did_change_watched_files is not None
                   and caps.did_change_watched_files.dynamic_registration)
        if dynamic:
            watchers = [types.FileSystemWatcher(glob_pattern=types.RelativePattern(
                base_uri=f.uri, pattern=g)) for f in self.projects.folders for g in self.globs]
            try:
                await self.client_register_capability_async(types.RegistrationParams(
                    registrations=[types.Registration(
                        id=str(uuid.uuid4()),
                        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(
                            watchers=watchers))]))
                return
            except Exception:  # noqa: BLE001 - fall back to our own watcher
                log.warning("client refused file watching; using watchfiles")
        self.spawn(self._watchfiles())

    async def _watchfiles(self) -> None:
        import watchfiles

        roots = [str(f.path) for f in self.projects.folders]
        if not roots:
            return

        def wanted(_change, path: str) -> bool:
            uri = uris.from_fs_path(path)
            return self.note_folder(uri) is not None

        async for changes in watchfiles.awatch(*roots, watch_filter=wanted, debounce=200,
                                               step=50, recursive=True):
            for _change, path in changes:
                uri = uris.from_fs_path(path)
                if uri not in self.workspace.text_documents:
                    self.sync_debounce.touch(uri)


server_instance: MemlsServer | None = None


def build(data_dir: str | None = None, token: str | None = None) -> MemlsServer:
    server = MemlsServer(data_dir=data_dir, token=token)

    for name in protocol.METHODS:
        def make(name: str = name):
            async def handler(ls: MemlsServer, params: Any) -> Any:
                return await ls.request(name, params)
            return handler
        server.feature(name)(make())

    @server.feature(types.INITIALIZE)
    def initialize(ls: MemlsServer, params: types.InitializeParams) -> None:
        options = params.initialization_options or {}
        if ls.token is not None:
            given = options.get("token") if isinstance(options, dict) else None
            if not isinstance(given, str) or not secrets.compare_digest(given, ls.token):
                raise JsonRpcInvalidParams(
                    message="initializationOptions.token is missing or wrong")
            ls.authenticated = True
        folders = [f.uri for f in params.workspace_folders or []]
        if not folders and params.root_uri:
            folders = [params.root_uri]
        ls.projects.set(folders)
        globs = (options.get("notes") or {}).get("globs") if isinstance(options, dict) else None
        if isinstance(globs, list) and all(isinstance(g, str) for g in globs):
            ls.globs = globs

    @server.feature(types.INITIALIZED)
    async def initialized(ls: MemlsServer, params: types.InitializedParams) -> None:
        ls._loop = asyncio.get_running_loop()
        ls.spawn(ls.start_engine())
        caps = ls.client_capabilities.workspace
        if caps is not None and caps.configuration:
            try:
                config = await ls.workspace_configuration_async(types.ConfigurationParams(
                    items=[types.ConfigurationItem(section="memls")]))
                globs = ((config or [None])[0] or {}).get("notes", {}).get("globs")
                if isinstance(globs, list) and all(isinstance(g, str) for g in globs):
                    ls.globs = globs
            except Exception:  # noqa: BLE001 - settings are optional
                pass
        ls.spawn(ls.index_workspace())
        ls.spawn(ls.watch())

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(ls: MemlsServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        current = {f.uri for f in ls.projects.folders}
        current -= {f.uri for f in params.event.removed}
        current |= {f.uri for f in params.event.added}
        ls.projects.set(sorted(current))
        ls.spawn(ls.rescope())
        ls.spawn(ls.index_workspace())

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: MemlsServer, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            if change.uri not in ls.workspace.text_documents:
                ls.sync_debounce.touch(change.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MemlsServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.sync_debounce.touch(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MemlsServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.sync_debounce.touch(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MemlsServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.sync_debounce.touch(params.text_document.uri)  # back to the disk's text

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(ls: MemlsServer, params: types.CodeActionParams):
        return diag.actions(list(params.context.diagnostics)) or None

    @server.command("memls.resolve")
    async def resolve(ls: MemlsServer, *args: Any) -> Any:
        arg = args[0] if args else {}
        if isinstance(arg, list):
            arg = arg[0] if arg else {}
        data = dict(arg) if isinstance(arg, dict) else {
            k: getattr(arg, k) for k in ("project", "a", "b", "action") if hasattr(arg, k)}
        return await ls.request("memory/resolve", data)

    @server.command("memls.open")
    async def open_other(ls: MemlsServer, *args: Any) -> Any:
        arg = args[0] if args else {}
        if isinstance(arg, list):
            arg = arg[0] if arg else {}
        get = arg.get if isinstance(arg, dict) else (lambda k: getattr(arg, k, None))
        where = diag.parse_range(get("range"))
        result = await ls.window_show_document_async(types.ShowDocumentParams(
            uri=get("uri"), take_focus=True, selection=where))
        return {"success": bool(getattr(result, "success", False))}

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: MemlsServer, *args: Any) -> None:
        engine, ls.engine = ls.engine, None
        if engine is not None and ls.owns_engine:  # off the loop: close waits for work
            await asyncio.get_running_loop().run_in_executor(None, engine.close)

    return server


def serve_stdio(data_dir: str | None = None) -> None:
    build(data_dir).start_io()


def serve_tcp(host: str, port: int, token: str, data_dir: str | None = None) -> None:
    """The long-lived daemon: owns the store from the start (the CLI and other windows go
    through its socket at once), and speaks LSP on loopback TCP. Each connection gets its
    own server (its own replies, workspace and notes) over the one shared engine, and must
    initialize with the token before anything else is answered. A client leaving does not
    stop the daemon."""
    import threading

    from pygls.io_ import run_async

    from memls.daemon.handle import open_engine

    engine = open_engine(data_dir, front="lsp", serve=True)

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server = build(data_dir, token=token)
        server.engine, server.owns_engine = engine, False
        server.ready.set()
        engine.listeners.append(server._engine_event)
        server.protocol.set_writer(writer)
        try:
            await run_async(stop_event=threading.Event(), reader=reader,
                            protocol=server.protocol, logger=log,
                            error_handler=server.report_server_error)
        finally:
            engine.listeners.remove(server._engine_event)
            server._loop = None
            server.pool.shutdown(wait=False)
            writer.close()

    async def main() -> None:
        listener = await asyncio.start_server(connection, host, port)
        async with listener:
            await listener.serve_forever()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    finally:
        engine.close()
