"""The memls language server (pygls 2): one class composed of its features.

- `initialize` is answered at once; the engine handle opens after `initialized`, off the event
  loop (`open_engine`: this process owns the store, or it talks to the owner's socket; the
  server does not care which), and models load lazily on their own pool.
- requests.py: every `memory/*` request; notes_sync.py: the workspace's folders named to the
  owner's note watcher, and the open buffers, which win over the disk; publish.py +
  diagnostics.py: contradictions as diagnostics; actions.py: code actions and commands;
  progress.py; settings.py; features.py: the one registration table.
"""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types

from memls import protocol
from memls.errors import MemlsError
from memls.lsp import settings as client_settings
from memls.lsp.base import log
from memls.lsp.notes_sync import NoteSync
from memls.lsp.progress import EngineWork
from memls.lsp.publish import Publisher
from memls.lsp.requests import Requests


class MemlsServer(Requests, NoteSync, Publisher):
    engine_work: EngineWork | None = None

    async def start_engine(self) -> None:
        loop = asyncio.get_running_loop()
        self._loop = loop
        if self.engine is not None:  # opened at process start (TCP daemon)
            self.ready.set()
            return
        try:
            scope = frozenset(self.own_projects())  # read on the loop, which changes it

            def opened() -> Any:
                # imported here, off the event loop: `initialize` never waits for the engine
                from memls.daemon.handle import open_engine

                engine = open_engine(self.data_dir, front="lsp", serve=True)
                engine.subscribed_projects = scope  # an owner elsewhere sends only ours
                engine.listeners.append(self._engine_event)  # a subscription: not on the loop
                return engine

            self.engine = await loop.run_in_executor(self.pool, opened)
        except Exception as exc:  # noqa: BLE001 - reported to the editor, never silent
            self.open_error = str(exc)
            log.exception("engine failed to open")
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Error, message=f"memls: {exc}")
            )
        finally:
            self.ready.set()
        if self.engine is not None:
            health = await self.run("health", protocol.HealthParams())
            if health.degraded:
                self.window_show_message(
                    types.ShowMessageParams(
                        type=types.MessageType.Warning,
                        message="memls is degraded: " + "; ".join(health.degraded),
                    )
                )

    def _engine_event(self, method: str, payload: Any) -> None:
        """Engine notifications arrive on the indexer thread: hop to the event loop."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._forward, method, payload)

    async def rescope(self) -> None:
        """Narrow (or widen) the owner's notifications to this window's projects (a no-op when
        this process owns the store); an owner that has gone is dealt with by the next request."""
        await self.ready.wait()
        engine, mine = self.engine, frozenset(self.own_projects())
        if engine is None or engine.subscribed_projects == mine:
            return
        try:
            await asyncio.get_running_loop().run_in_executor(self.pool, engine.subscribe, mine)
        except MemlsError as exc:
            log.warning("memls: could not rescope notifications: %s", exc)

    def _forward(self, method: str, payload: Any) -> None:
        project = getattr(payload, "project", None)
        if project not in self.own_projects():
            return  # another window's project: never sent here
        if method == "memory/progress":  # long engine work: the editor's own progress UI
            if self.engine_work is None:
                self.engine_work = EngineWork(self)
            self.engine_work.relay(payload)
            return
        self.protocol.notify(method, protocol.to_wire(payload))
        if method == "memory/conflicts":
            self.conflicts_found(payload)
        elif method == "memory/changed":
            self.memories_changed(payload)
            if payload.op == "sync":  # the owner read notes: which there are may have changed
                self.notes_changed(payload.project)

    def apply_settings(self, raw: Any, where: str) -> bool:
        """Take the client's settings; a bad value is logged and shown, the old ones stay."""
        try:
            self.settings = client_settings.read(raw, where)
        except MemlsError as exc:
            message = f"memls: ignored invalid settings: {exc}"
            log.warning(message)
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=message)
            )
            return False
        return True
