"""What every LSP feature of memls shares: the engine handle (local or remote, the server does
not care which), the workspace's projects, the task set, the engine pool."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from memls import __version__, protocol
from memls.lsp.projects import Projects
from memls.lsp.settings import ClientSettings
from memls.lsp.wire import MemlsProtocol, converter

if TYPE_CHECKING:  # the engine loads after `initialize` is answered (see start_engine)
    from memls.daemon.handle import EngineHandle

log = logging.getLogger("memls.lsp")


class ServerBase(LanguageServer):
    def __init__(self, data_dir: str | None = None, token: str | None = None) -> None:
        super().__init__(
            "memls",
            __version__,
            protocol_cls=MemlsProtocol,
            converter_factory=converter,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
        )
        self.data_dir = data_dir
        self.token = token
        self.authenticated = token is None
        self.owns_engine = True  # False for a TCP connection: the daemon's engine is shared
        self.connection_only = False  # True for a TCP connection: `exit` ends only it
        self.close_connection: Any = None
        self.closed = False  # the connection ended (TCP): no new background work for it
        self.engine: EngineHandle | None = None
        self.ready = asyncio.Event()
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="memls-engine")
        self.projects = Projects()
        self.settings = ClientSettings()
        self.used_projects: set[str] = set()
        self.indexed: dict[str, str] = {}  # note uri -> project (kept by NoteSync)
        # note uri -> the secrets its text holds (kept by NoteSync, shown by Publisher)
        self.note_secrets: dict[str, list[protocol.NoteSecret]] = {}
        # project -> link uri -> a link the owner does not follow (kept by NoteSync, shown by
        # Publisher on the link)
        self.note_refused: dict[str, dict[str, protocol.RefusedNote]] = {}
        # project -> note uri -> what the owner could not read of it as its agent meant
        # (front matter, a glob, an import; a file another of its folder wins over)
        self.note_warnings: dict[str, dict[str, list[protocol.NoteWarning]]] = {}
        # open buffers the owner said are no notes: not sent again while open
        self.not_notes: set[str] = set()
        self.open_error: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._takeover = asyncio.Lock()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any] | None:
        """Run a background task; its failure is logged, never lost, never fatal. Nothing
        starts once the connection has ended."""
        if self.closed:
            coro.close()
            return None
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    def own_projects(self) -> set[str]:
        """This window's projects: its workspace folders' and those its requests named."""
        return {f.project for f in self.projects.folders} | self.used_projects

    # hooks the features provide
    async def run(self, method: str, params: Any, origin: str | None = None) -> Any:
        raise NotImplementedError

    async def rescope(self) -> None:
        raise NotImplementedError

    def schedule_refresh(self, project: str | None, delay: float = 0.15) -> None:
        raise NotImplementedError

    def publish(self, project: str) -> None:
        raise NotImplementedError

    async def open_buffers_again(self) -> None:
        raise NotImplementedError
