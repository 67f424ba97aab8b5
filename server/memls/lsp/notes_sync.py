"""What an editor adds to the owner's note watcher.

The process that owns the store indexes and watches the notes of every workspace folder
(`memory/watch`, `memls.daemon.notewatch`): this window names its folders, shows `$/progress`
while they are read and embedded, and learns which note files there are (for diagnostics).
What only an editor has is its open buffers: they win over the disk, so an open buffer is
sent as it is edited (`open`: the owner's watcher leaves it alone), and the owner reads the
disk again when it is closed (`fromDisk`). The owner says whether a buffer is a note at all,
and under which name (`note`, `uri`); this front keeps the answer and sends a buffer that is
no note again only when the owner's list of notes names it.

The memories an agent keeps by itself outside the folder (Claude Code's auto memory of the
project: `NoteFile.agentMemory`) are notes of the project too: the owner lists them with its
notes, so they get diagnostics, and an open buffer of one is sent like a note's, under the
project the owner listed it in (the owner reads it inside its own folder).
"""

from __future__ import annotations

import asyncio
from typing import Any

from memls import protocol
from memls.errors import MemlsError
from memls.lsp import notes
from memls.lsp.base import ServerBase, log
from memls.lsp.progress import Progress
from memls.lsp.projects import Folder

WATCH_WAIT = 30.0  # s a folder's first reading may take before progress stops waiting


class NoteSync(ServerBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sync_debounce = notes.Debouncer(0.25, self._sync_uri)
        self.notes_debounce = notes.Debouncer(0.3, self._refresh_notes)
        self.agent_notes: dict[str, str] = {}  # uri of an agent's own memory -> its project

    async def index_workspace(self) -> None:
        await self.ready.wait()
        if self.engine is None:
            return
        folders = list(self.projects.folders)
        progress = await Progress(self, "memls: indexing notes").begin(f"{len(folders)} folder(s)")
        count = 0
        for n, folder in enumerate(folders, start=1):
            count += await self._watch(folder, WATCH_WAIT)
            progress.report(f"{n}/{len(folders)} {folder.path.name}", int(100 * n / len(folders)))
        for uri in list(self.workspace.text_documents):
            self.sync_debounce.touch(uri)  # buffers opened before the engine was ready
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
        progress.end(f"indexed {count} note files")
        for folder in folders:
            self.schedule_refresh(folder.project, delay=0.0)

    async def _watch(self, folder: Folder, wait: float) -> int:
        """Ask the owner to watch the folder; take the notes it has. Returns how many."""
        try:
            result = await self.run(
                "watch", protocol.WatchParams(project=folder.project, wait=wait)
            )
        except MemlsError as exc:
            log.warning("the notes of %s are not watched: %s", folder.path, exc)
            return 0
        self._take(folder.project, result.notes, result.refused, result.warnings)
        return len(result.notes)

    def _take(
        self,
        project: str,
        found: list[protocol.NoteFile],
        refused: list[protocol.RefusedNote],
        warnings: list[protocol.NoteWarning],
    ) -> None:
        """The owner's list of the project's notes (and their secrets) replaces ours, and so
        do its lists of the links it does not follow (shown on each link) and of what it could
        not read of a note as meant (shown on the line)."""
        links = {r.uri: r for r in refused}
        changed = self.note_refused.get(project, {}) != links
        self.note_refused[project] = links
        warned: dict[str, list[protocol.NoteWarning]] = {}
        for w in warnings:
            warned.setdefault(w.uri, []).append(w)
        changed = changed or self.note_warnings.get(project, {}) != warned
        self.note_warnings[project] = warned
        for uri in [u for u, p in self.agent_notes.items() if p == project]:
            del self.agent_notes[uri]
        self.agent_notes.update({n.uri: project for n in found if n.agent_memory})
        mine = {uri for uri, p in self.indexed.items() if p == project}
        listed = {n.uri for n in found}
        for uri in mine - listed:
            if uri not in self.workspace.text_documents:
                self.indexed.pop(uri, None)
                self.note_secrets.pop(uri, None)
                changed = True
        for note in found:
            if note.uri in self.workspace.text_documents:
                if note.uri in self.not_notes:  # a note now (imported, or its folder changed)
                    self.not_notes.discard(note.uri)
                    self.sync_debounce.touch(note.uri)
                continue  # the buffer's own sync says what it holds
            if self.indexed.get(note.uri) != project or self.note_secrets.get(note.uri) != (
                note.secrets
            ):
                changed = True
            self.indexed[note.uri] = project
            self.note_secrets[note.uri] = list(note.secrets)
        if changed:
            self.publish(project)

    async def _refresh_notes(self, project: str) -> None:
        folder = next((f for f in self.projects.folders if f.project == project), None)
        if folder is not None:
            await self._watch(folder, 0.0)

    def notes_changed(self, project: str) -> None:
        """The owner synced notes of the project: learn its list again (debounced)."""
        if project in {f.project for f in self.projects.folders}:
            self.notes_debounce.touch(project)

    async def open_buffers_again(self) -> None:
        """After a takeover: the new owner knows nothing of this window's open buffers, which
        win over the disk: sync them to it again, before anything else is asked of it."""
        uris_open = list(self.workspace.text_documents)
        await asyncio.gather(*(self._sync_uri(uri, takeover=True) for uri in uris_open))

    async def _sync_uri(self, uri: str, refresh: bool = True, takeover: bool = False) -> None:
        """An open buffer (or, once it is closed, the disk) sent to the owner, which answers
        whether it is a note and under which name (a link's target's, inside the folder); an
        agent's own memory file goes to the project the owner listed it in."""
        folder = self.projects.containing(uri)
        project = folder.project if folder is not None else self.agent_notes.get(uri)
        if project is None or self.engine is None:
            return
        doc = self.workspace.text_documents.get(uri)
        if uri in self.not_notes and not takeover:
            if doc is None:
                self.not_notes.discard(uri)  # closed: asked again when opened again
            return
        params = protocol.SyncNoteParams(
            uri=uri,
            text=doc.source if doc is not None else None,  # the open buffer wins over the disk
            project=project,
            open=doc is not None,
            from_disk=doc is None,
        )
        try:
            if takeover:  # inside the takeover itself: straight to the new owner
                engine = self.engine
                loop = asyncio.get_running_loop()
                result = await loop.run_in_executor(self.pool, engine.sync_note, params)
            else:
                result = await self.run("sync_note", params)
        except MemlsError as exc:
            log.warning("indexing %s failed: %s", uri, exc)
            return
        if not result.note:
            if doc is not None:
                self.not_notes.add(uri)
            return
        synced = result.uri
        first = synced not in self.indexed
        self.indexed[synced] = project
        secrets_changed = self.note_secrets.get(synced, []) != result.secrets
        self.note_secrets[synced] = result.secrets
        warned = self.note_warnings.setdefault(project, {})
        warnings_changed = warned.get(synced, []) != result.warnings
        warned[synced] = list(result.warnings)
        # pairs read before may sit in this note, and its secrets and warnings are shown as
        # they change
        if (refresh and first) or secrets_changed or warnings_changed:
            self.publish(project)
