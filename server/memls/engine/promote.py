"""Promote (memory/promote): a memory written into a note of the project as one list item, so
it travels with the repository to the rest of the team; the memory becomes that note unit
(its source is the note and the item's lines), and the note is synced at once, so the note
watcher reads the item back as the same memory, never as a second one."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from memls import protocol
from memls.errors import InvalidInput, NotFound, Refused
from memls.files import replace_text
from memls.notes.promote import place
from memls.scope import VISIBLE_TRUST, project_key
from memls.store.unit import Tx


def note_uri(path: Path) -> str:
    """The note's URI as the editor's note watcher names a file it finds on disk: percent-
    encoded (a space is %20, a '#' is %23 and not the start of a fragment)."""
    return path.as_uri()


def _target(project: str, to: str) -> Path:
    folder = Path(project)
    if not folder.is_absolute() or not folder.is_dir():
        raise Refused(
            f"the project {project!r} is not a folder on this machine: promote writes a note "
            "inside the project's folder",
            field="project",
        )
    relative = Path(to)
    if relative.is_absolute() or ".." in relative.parts or relative.suffix.lower() != ".md":
        raise InvalidInput(
            "a Markdown file (.md) inside the project, relative to its folder", field="to"
        )
    try:
        target = (folder / relative).resolve()
    except OSError as exc:  # a name too long, a link loop
        raise InvalidInput(f"not a usable path: {exc.strerror}", field="to") from None
    if not target.is_relative_to(folder.resolve()):
        raise InvalidInput("the note must be inside the project's folder", field="to")
    return target


class Promote:
    """memory/promote, given what it reads and writes by the constructor."""

    def __init__(
        self,
        *,
        write: Callable[[str], AbstractContextManager[Tx]],
        get: Callable[[protocol.GetParams], protocol.Memory],
        sync_note: Callable[[protocol.SyncNoteParams], protocol.SyncNoteResult],
        changed: Callable[[str, str, list[str]], None],
        clock: Callable[[], str],
    ) -> None:
        self._write = write
        self._get = get
        self._sync = sync_note
        self._changed = changed
        self._clock = clock

    def promote(self, params: protocol.PromoteParams) -> protocol.PromoteResult:
        project = project_key(params.project)
        memory = self._get(protocol.GetParams(id=params.id, project=project))
        path = _target(project, params.to)
        uri = note_uri(path)
        if memory.status != "active" or memory.trust not in VISIBLE_TRUST:
            raise Refused(
                f"memory {memory.id} is {memory.status}, trust {memory.trust}: only an active "
                "candidate or verified memory is promoted",
                field="id",
            )
        if memory.source_uri and memory.source_uri != uri and memory.source_range:
            raise Refused(
                f"memory {memory.id} is already a unit of {memory.source_uri}: it travels with "
                "that note",
                field="id",
            )
        try:
            existed = path.exists()  # a name too long for the file system is an OSError
            before = path.read_text(encoding="utf-8") if existed else None
        except (OSError, UnicodeDecodeError) as exc:
            raise Refused(
                f"the note {path} cannot be read as UTF-8 text: {exc}", field="to"
            ) from None
        try:
            placed = place(before, memory.content, memory.type, memory.canonical_hash)
        except ValueError as exc:
            raise Refused(f"memory {memory.id} cannot be written as a note item: {exc}") from None
        if placed.changed:
            try:
                replace_text(path, placed.note)
            except OSError as exc:
                raise Refused(f"the note {path} cannot be written: {exc}", field="to") from None
        unit = placed.unit
        where = protocol.SourceRange(
            unit.start_line, unit.start_char, unit.end_line, unit.end_char
        ).format()
        now = self._clock()
        with self._write(project) as tx:
            row = tx.memories.fetch(memory.id)
            if row is None:  # forgotten meanwhile: the note keeps the item, the sync adds it
                raise NotFound(f"no memory {memory.id} in project {project!r}", field="id")
            tx.memories.set_source(memory.id, uri, where)
            tx.note_units.put(memory.id, unit.section, unit.claim)
            tx.audit("promote", memory.id, now, note=uri, range=where, wrote=placed.changed)
        self._sync(protocol.SyncNoteParams(uri=uri, text=placed.note, project=project))
        self._changed(project, "promote", [memory.id])
        return protocol.PromoteResult(
            project=project,
            id=memory.id,
            path=str(path),
            uri=uri,
            source_range=where,
            created=not existed,
            already=not placed.changed,
            memory=self._get(protocol.GetParams(id=memory.id, project=project)),
        )
