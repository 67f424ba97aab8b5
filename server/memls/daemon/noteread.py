"""One watched project's notes as the owner reads them: found by the table of the agents'
conventions (`memls.notes.files.find`), each read and synced, Claude Code's `@path` imports
followed, and what could not be read kept as warnings (`memory/watch`'s `warnings`, shown on
the file by an editor).

- A file the table names is synced with the kind, default type and scope the table and its
  front matter give (the engine asks the table too, `Notes.sync_note`); a note read under the
  name a link leads to takes what the link's name says.
- An import (`@AGENTS.md` in a `CLAUDE.md`) of a file that is a note already adds nothing (the
  importing file is named in its `importedBy`; its lines are stored once); an import of any
  other file inside the project makes it a note of its own, with the importing note's kind and
  scope, up to five hops. A file no note imports any more is forgotten like a removed one.
- A file that another of its folder wins over (`AGENTS.md` beside a non-empty
  `AGENTS.override.md`: Codex reads one) is not read, and carries a warning saying why.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pygls import uris

from memls import protocol
from memls.files import LeadsOut
from memls.notes import Match, Table
from memls.notes.files import Found, Unreadable, find, imported, read_note, watch_folders
from memls.notes.ignore import Ignores
from memls.notes.imports import MAX_DEPTH
from memls.notes.scope import scope_of

log = logging.getLogger("memls.daemon.notewatch")

Sync = Callable[[protocol.SyncNoteParams], protocol.SyncNoteResult]


@dataclass
class Imported:
    """A file read because notes import it: as the first importer says."""

    importers: set[str]
    kind: protocol.NoteKind
    scope: list[str]
    memory_type: protocol.MemoryType
    origin: str
    depth: int


@dataclass
class ProjectNotes:
    """What the owner knows of one project's notes. Fields are read and changed under the
    watcher's lock (`lock`); a file is read and synced under `syncing`."""

    root: Path
    table: Table
    lock: threading.Condition
    syncing: threading.Lock
    scanned: threading.Event = field(default_factory=threading.Event)
    notes: dict[str, protocol.NoteFile] = field(default_factory=dict)
    folders: set[Path] = field(default_factory=set)
    links: set[Path] = field(default_factory=set)  # links the table names (or holds notes in)
    linked_folders: set[Path] = field(default_factory=set)  # folders reached through a link
    #: notes the table names only by the link they were found through -> that link's match
    targets: dict[Path, Match] = field(default_factory=dict)
    imported: dict[Path, Imported] = field(default_factory=dict)
    importers: dict[Path, set[str]] = field(default_factory=dict)  # of notes imported too
    shadowed: dict[Path, Path] = field(default_factory=dict)
    refused: dict[str, protocol.RefusedNote] = field(default_factory=dict)
    warnings: dict[str, list[protocol.NoteWarning]] = field(default_factory=dict)
    fresh: bool = False  # a reading stored units not yet waited for (embedded, checked)
    #: set when the next reading to start is done (`memory/watch` with `reread`)
    waiting: list[threading.Event] = field(default_factory=list)
    ignores: Ignores | None = None

    @property
    def project(self) -> str:
        return str(self.root)

    def relative(self, path: Path) -> str | None:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return None

    # ------------------------------------------------------------ what a path is

    def named(self, path: Path) -> Match | None:
        """What the table says a file of the project is (by a link's name when it was found
        through one); None when it names no note there, or the file is not read (in an
        ignored folder, or another file of its folder wins)."""
        with self.lock:
            if path in self.targets:
                return self.targets[path]
            if path in self.shadowed:
                return None
        relative = self.relative(path)
        if relative is None:
            return None
        found = self.table.match(relative)
        if found is None or self._ignores().outside_of(relative):
            return None
        return found

    def is_note(self, path: Path) -> bool:
        with self.lock:
            if path in self.imported:
                return True
        return self.named(path) is not None

    def mine(self, uri: str) -> bool:
        """A note file of the record that the watcher owns: one the table names."""
        path = uris.to_fs_path(uri)
        relative = self.relative(Path(path)) if path else None
        return relative is not None and self.table.match(relative) is not None

    def _ignores(self) -> Ignores:
        if self.ignores is None:
            self.ignores = Ignores(self.root)
        return self.ignores

    # ------------------------------------------------------------ a scan

    def scan(
        self, sync: Sync, note_uris: Callable[[], list[str]], held: Callable[[str], bool]
    ) -> bool:
        """Find the notes, sync each (and what they import), forget those that went; True
        when the folders to watch changed."""
        if not self.root.is_dir():
            return False
        self.ignores = Ignores(self.root)
        found = find(self.root, self.table, self.ignores)
        with self.lock:
            before = {uris.from_fs_path(str(p)) for p in (*self.targets, *self.imported)}
            self.imported, self.importers = {}, {}
        self._found(found)
        seen: set[str | None] = set()
        for path, named in found.notes.items():
            seen |= self.read(sync, path, held, named)
        for uri in note_uris():
            if uri not in seen and (uri in before or self.mine(uri)):
                with self.syncing:
                    if not held(uri):
                        self.sync_text(sync, uri, None)
        with self.lock:
            reading = [*found.notes, *self.imported]
        folders = watch_folders(self.root, self.table, reading) | found.linked_folders
        with self.lock:
            changed = folders != self.folders
            self.folders = folders
        return changed

    def _found(self, found: Found) -> None:
        for link in found.refused:
            log.warning("not read as a note of %s: %s", self.root, link)
        shadow = {
            uris.from_fs_path(str(path)) or "": [
                protocol.NoteWarning(
                    uri=uris.from_fs_path(str(path)) or "",
                    line=0,
                    message=f"not read: {winner.name} beside it is read instead (its agent "
                    "reads one file a folder, this one only when the other is empty)",
                )
            ]
            for path, winner in found.shadowed.items()
        }
        with self.lock:
            self.refused = {
                uri: protocol.RefusedNote(uri=uri, target=link.target or "", message=str(link))
                for link in found.refused
                if (uri := uris.from_fs_path(str(link.path)) or "")
            }
            self.links, self.linked_folders = found.links, found.linked_folders
            self.shadowed = found.shadowed
            self.targets = {
                path: named
                for path, named in found.notes.items()
                if self.table.match(path.relative_to(self.root).as_posix()) is None
            }
            self.warnings = {u: w for u, w in self.warnings.items() if u not in shadow}
            self.warnings.update(shadow)

    # ------------------------------------------------------------ one file

    def read(
        self, sync: Sync, path: Path, held: Callable[[str], bool], named: Match | None = None
    ) -> set[str | None]:
        """Read one note (found by a scan, changed, or imported) and sync it, then what it
        imports. The uris read ({None} when `path` is not the note it was: it became a link,
        in or out of the folder; a scan, queued by `rescan`, sorts that out)."""
        uri = uris.from_fs_path(str(path)) or ""
        with self.syncing:
            if held(uri):
                return {uri}
            try:
                name, text = read_note(self.root, path)
            except LeadsOut:
                return {None}
            except Unreadable as exc:
                log.warning("not indexing %s", exc)  # keep what was indexed before
                return {uri}
            if name != path:
                return {None}
            result = self.sync_text(sync, uri, text, named)
        seen: set[str | None] = {uri}
        if text is not None:
            seen |= self._imports(sync, path, uri, text, result, held)
        return seen

    def sync_text(
        self,
        sync: Sync,
        uri: str,
        text: str | None,
        named: Match | None = None,
        *,
        open_buffer: bool = False,
    ) -> protocol.SyncNoteResult:
        """Sync a note. The engine asks the table by its path; a note the table does not name
        by its own path (read through a link, or imported) gets what the link's name or the
        importing note says."""
        path = Path(uris.to_fs_path(uri) or "")
        own = self.table.match(self.relative(path) or "")
        with self.lock:
            extra = self.imported.get(path) if own is None else None
            named = named or (self.targets.get(path) if own is None else None)
        params = protocol.SyncNoteParams(uri=uri, text=text, project=self.project, open=open_buffer)
        warnings: list[protocol.NoteWarning] = []
        if own is None and named is not None:
            scoped = scope_of(named, text or "")
            params = _with(params, named.kind, named.memory_type, list(scoped.globs))
            warnings = [
                protocol.NoteWarning(uri=uri, line=n, message=m) for n, m in scoped.warnings
            ]
        elif extra is not None:
            params = _with(params, extra.kind, extra.memory_type, extra.scope)
        result = sync(params)
        found = own or named
        with self.lock:
            if result.added:
                self.fresh = True
            if text is None:
                self.notes.pop(uri, None)
                self.warnings.pop(uri, None)
                return result
            self.notes[uri] = protocol.NoteFile(
                uri=uri,
                kind=params.kind if params.kind is not None else (found.kind if found else ""),
                secrets=result.secrets,
                origin=result.origin or (found.origin if found else extra.origin if extra else ""),
                scope=result.scope,
                imported_by=sorted(
                    self.importers.get(path, set()) | (extra.importers if extra else set())
                ),
            )
            self.warnings[uri] = warnings + list(result.warnings)
        return result

    def _imports(
        self,
        sync: Sync,
        path: Path,
        uri: str,
        text: str,
        result: protocol.SyncNoteResult,
        held: Callable[[str], bool],
    ) -> set[str | None]:
        """Claude Code's imports of a note: see the module doc."""
        with self.lock:
            mine = self.imported.get(path)
        named = self.named(path)
        depth = mine.depth if mine is not None else 0
        follows = (named is not None and named.convention.imports) or mine is not None
        found, warnings = imported(self.root, path, text, self._ignores()) if follows else ([], [])
        if depth >= MAX_DEPTH:
            found = []
        seen: set[str | None] = set()
        with self.lock:
            self.warnings.setdefault(uri, []).extend(
                protocol.NoteWarning(uri=uri, line=line, message=message)
                for line, message in warnings
            )
            for target in list(self.imported):
                entry = self.imported[target]
                if uri in entry.importers and target not in found:
                    entry.importers.discard(uri)
        for target in found:
            target_uri = uris.from_fs_path(str(target)) or ""
            if self.named(target) is not None:  # a note already: its lines are stored once
                with self.lock:
                    self.importers.setdefault(target, set()).add(uri)
                    note = self.notes.get(target_uri)
                    if note is not None and uri not in note.imported_by:
                        note.imported_by = sorted({*note.imported_by, uri})
                continue
            with self.lock:
                existing = self.imported.get(target)
                new = existing is None
                if existing is not None:
                    entry = existing
                else:
                    entry = self.imported[target] = Imported(
                        {uri},
                        self.notes[uri].kind if uri in self.notes else "",
                        result.scope,
                        (named.memory_type if named else mine.memory_type if mine else "note"),
                        f"{(named.origin if named else mine.origin if mine else '')} import",
                        depth + 1,
                    )
                entry.importers.add(uri)
            if new:
                seen |= self.read(sync, target, held)
                with self.lock:
                    note = self.notes.get(target_uri)
                    if note is not None:
                        note.imported_by = sorted(entry.importers)
        return seen

    def orphans(self) -> list[Path]:
        """Imported files no note imports any more (to be forgotten)."""
        with self.lock:
            gone = [p for p, e in self.imported.items() if not e.importers]
            for path in gone:
                del self.imported[path]
        return gone


def _with(
    params: protocol.SyncNoteParams,
    kind: protocol.NoteKind,
    memory_type: protocol.MemoryType,
    scope: list[str],
) -> protocol.SyncNoteParams:
    return protocol.SyncNoteParams(
        uri=params.uri,
        text=params.text,
        project=params.project,
        default_type=memory_type,
        kind=kind,
        scope=scope,
        open=params.open,
    )
