"""Workspace notes kept indexed: discovered at start (with `$/progress`), re-read on edits
(open buffers win over the disk) and on file changes (the client's dynamic
`workspace/didChangeWatchedFiles` where it offers it, `watchfiles` otherwise)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls import uris

from memls import protocol
from memls.errors import MemlsError
from memls.lsp import notes
from memls.lsp.base import ServerBase, log
from memls.lsp.progress import Progress
from memls.lsp.projects import Folder


class NoteSync(ServerBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sync_debounce = notes.Debouncer(0.25, self._sync_uri)

    async def index_workspace(self) -> None:
        await self.ready.wait()
        if self.engine is None:
            return
        files = [
            (folder, path)
            for folder in self.projects.folders
            for path in await asyncio.get_running_loop().run_in_executor(
                self.pool, notes.discover, folder.path, self.globs
            )
        ]
        progress = await Progress(self, "memls: indexing notes").begin(f"{len(files)} files")
        for n, (_folder, path) in enumerate(files, start=1):
            await self._sync_uri(uris.from_fs_path(str(path)), refresh=False)
            progress.report(f"{n}/{len(files)} {path.name}", int(100 * n / max(1, len(files))))
        if progress.shown:
            # the notes are in the record; progress stays open until they are embedded too,
            # since search by meaning and the contradiction check wait for that
            deadline = asyncio.get_running_loop().time() + 600
            while asyncio.get_running_loop().time() < deadline:
                health = await self.run("health", protocol.HealthParams())
                if health.index_pending == 0 or health.degraded:
                    break
                progress.report(f"embedding: {health.index_pending} left")
                await asyncio.sleep(0.25)
        progress.end(f"indexed {len(files)} note files")
        for folder in self.projects.folders:
            self.schedule_refresh(folder.project, delay=0.0)

    def note_folder(self, uri: str) -> Folder | None:
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
                    self.pool, notes.read_disk, path
                )
            except notes.Unreadable as exc:
                log.warning("not indexing %s", exc)  # keep what was indexed before
                return
        params = protocol.SyncNoteParams(
            uri=uri,
            text=text,
            project=folder.project,
            default_type=notes.note_type(uri, folder.path),  # type: ignore[arg-type]
            kind=notes.kind_of(
                uri, folder.path, self.settings.notes.instructions, self.settings.notes.records
            ),
        )
        try:
            result = await self.run("sync_note", params)
        except MemlsError as exc:
            log.warning("indexing %s failed: %s", uri, exc)
            return
        first = uri not in self.indexed
        self.indexed[uri] = folder.project
        secrets_changed = self.note_secrets.get(uri, []) != result.secrets
        self.note_secrets[uri] = result.secrets
        # pairs read before may sit in this note, and its secrets are shown as they change
        if (refresh and first) or secrets_changed:
            self.publish(folder.project)

    async def watch(self) -> None:
        caps = self.client_capabilities.workspace
        dynamic = (
            caps is not None
            and caps.did_change_watched_files is not None
            and caps.did_change_watched_files.dynamic_registration
        )
        if dynamic:
            watchers = [
                types.FileSystemWatcher(
                    glob_pattern=types.RelativePattern(base_uri=f.uri, pattern=g)
                )
                for f in self.projects.folders
                for g in self.globs
            ]
            try:
                await self.client_register_capability_async(
                    types.RegistrationParams(
                        registrations=[
                            types.Registration(
                                id=str(uuid.uuid4()),
                                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                                    watchers=watchers
                                ),
                            )
                        ]
                    )
                )
                return
            except Exception:  # noqa: BLE001 - fall back to our own watcher
                log.warning("client refused file watching; using watchfiles")
        self.spawn(self._watchfiles())

    async def _watchfiles(self) -> None:
        import watchfiles

        roots = [str(f.path) for f in self.projects.folders]
        if not roots:
            return

        def wanted(_change: Any, path: str) -> bool:
            uri = uris.from_fs_path(path)
            return self.note_folder(uri) is not None

        async for changes in watchfiles.awatch(
            *roots, watch_filter=wanted, debounce=200, step=50, recursive=True
        ):
            for _change, path in changes:
                uri = uris.from_fs_path(path)
                if uri not in self.workspace.text_documents:
                    self.sync_debounce.touch(uri)
