"""Promote (memory/promote): a memory written into a note of the project as one list item, so
it travels with the repository to the rest of the team; the memory becomes that note unit
(its source is the note and the item's lines), and the note is synced at once, so the note
watcher reads the item back as the same memory, never as a second one.

`to` may also name an agent's own memory: `claude-memory` writes the memory as one topic file
of Claude Code's auto memory of the project (front matter `name`, `description`,
`metadata.type`, as Claude Code writes one) with its pointer in that folder's MEMORY.md, so
Claude Code loads it in its next session. memls writes into an agent's files only then."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from memls import protocol
from memls.errors import InvalidInput, NotFound, Refused
from memls.files import replace_text
from memls.notes import agent_memory, parse
from memls.notes.agent_places import claude_memory
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


#: The agents' own memories promote can write into, by name.
AGENT_TARGETS = frozenset({"claude-memory"})


def _agent_target(project: str, memory: protocol.Memory) -> Path:
    """The topic file a memory becomes in Claude Code's auto memory of the project."""
    folder = Path(project)
    if not folder.is_absolute() or not folder.is_dir():
        raise Refused(
            f"the project {project!r} is not a folder on this machine: Claude Code keeps an "
            "auto memory for a project folder",
            field="project",
        )
    place = claude_memory(folder, Path.home(), os.environ)
    name, _ = agent_memory.claude_topic(memory.content, memory.type)
    return place.folder / f"{name}.md"


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
        if params.to in AGENT_TARGETS:
            path = _agent_target(project, memory)
        else:
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
        if params.to in AGENT_TARGETS:
            return self._into_claude_memory(project, memory, path)
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
        where = self._become(project, memory.id, uri, placed.unit, placed.changed)
        self._sync(protocol.SyncNoteParams(uri=uri, text=placed.note, project=project))
        return self._promoted(
            project, memory.id, path, uri, where, existed=existed, already=not placed.changed
        )

    def _promoted(
        self,
        project: str,
        memory_id: str,
        path: Path,
        uri: str,
        where: str,
        *,
        existed: bool,
        already: bool,
    ) -> protocol.PromoteResult:
        """What a promotion answers, once the note is written and synced."""
        self._changed(project, "promote", [memory_id])
        return protocol.PromoteResult(
            project=project,
            id=memory_id,
            path=str(path),
            uri=uri,
            source_range=where,
            created=not existed,
            already=already,
            memory=self._get(protocol.GetParams(id=memory_id, project=project)),
        )

    def _become(self, project: str, memory_id: str, uri: str, unit: Any, wrote: bool) -> str:
        """The memory becomes the note's unit (its source, section, claim), audited; the
        unit's range."""
        where = protocol.SourceRange(
            unit.start_line, unit.start_char, unit.end_line, unit.end_char
        ).format()
        with self._write(project) as tx:
            if tx.memories.fetch(memory_id) is None:  # forgotten meanwhile: the sync adds it
                raise NotFound(f"no memory {memory_id} in project {project!r}", field="id")
            tx.memories.set_source(memory_id, uri, where)
            tx.note_units.put(memory_id, unit.section, unit.claim)
            tx.audit("promote", memory_id, self._clock(), note=uri, range=where, wrote=wrote)
        return where

    def _into_claude_memory(
        self, project: str, memory: protocol.Memory, path: Path
    ) -> protocol.PromoteResult:
        """The memory as a topic file of Claude Code's auto memory, with its MEMORY.md pointer;
        the memory becomes that file's unit."""
        name, text = agent_memory.claude_topic(memory.content, memory.type)
        kept = agent_memory.readable(text, "claude-memory", path.name)
        units = parse(kept, default_type=agent_memory.memory_type(text, "claude-memory", path.name))
        unit = next((u for u in units if u.key == memory.canonical_hash), None)
        if unit is None:
            raise Refused(f"memory {memory.id} cannot be written as one memory file", field="id")
        index = path.parent / agent_memory.INDEX
        try:
            existed = path.exists()
            already = existed and path.read_text(encoding="utf-8") == text
            before = index.read_text(encoding="utf-8") if index.exists() else None
            if not already:
                replace_text(path, text)
            pointed = agent_memory.claude_index(before, path.name, name, memory.content)
            if pointed != before:
                replace_text(index, pointed)
        except (OSError, UnicodeDecodeError) as exc:
            raise Refused(
                f"Claude Code's auto memory cannot be written: {exc}", field="to"
            ) from None
        uri = note_uri(path)
        where = self._become(project, memory.id, uri, unit, not already)
        for synced, body in ((uri, text), (note_uri(index), pointed)):
            self._sync(
                protocol.SyncNoteParams(
                    uri=synced, text=body, project=project, agent_memory="claude-memory"
                )
            )
        return self._promoted(
            project, memory.id, path, uri, where, existed=existed, already=already
        )
