"""Notes as memories: one note file's units kept in step with its text, read as a document
(each unit's section and claim flag, the note's standing, the supersession/amendment links
between notes, resolved by link or number)."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

import msgspec

from memls import protocol, secrets, textnorm
from memls.engine.shared import Announcer, Clock, Indexing, Units, checked_text
from memls.engine.writes import clear_tombstone, insert
from memls.notes import (
    DEFAULT,
    NoteFacts,
    Table,
    agent_memory,
    index,
    note_facts,
    parse,
    resolve_ref,
)
from memls.notes.scope import Scoped, scope_of
from memls.scope import project_key
from memls.store.memories import scope_column
from memls.store.memories import scope_of as scope_of_column
from memls.store.unit import Tx

_FACTS = msgspec.json.Decoder(NoteFacts)


def note_links(facts: dict[str, NoteFacts]) -> list[dict[str, Any]]:
    """The links the notes state (uri -> its facts): newer_uri supersedes or amends
    older_uri. A reference is resolved by its link target or record number among the
    project's note files (`notes.resolve_ref`), never by similarity; one that names no known
    note gives no link (yet: it is resolved again when that note is synced)."""
    by_path = {unquote(uri): uri for uri in facts}
    out: list[dict[str, Any]] = []
    for uri, fact in facts.items():
        path = unquote(uri)
        stated = [(ref, True) for ref in (*fact.superseded_by, *fact.amended_by, *fact.see)] + [
            (ref, False) for ref in (*fact.supersedes, *fact.amends)
        ]
        for ref, names_newer in stated:
            found = resolve_ref(ref, path, by_path)
            if found is None or by_path[found] == uri:
                continue
            other = by_path[found]
            amends = ref.relation in ("amended_by", "amends") or ref.partial
            label = ref.label or (f"ADR-{ref.number}" if ref.number is not None else "")
            out.append(
                {
                    "newer_uri": other if names_newer else uri,
                    "older_uri": uri if names_newer else other,
                    "relation": "amends" if amends else "supersedes",
                    "label": label or found.rsplit("/", 1)[-1],
                    "stated_in": uri,
                    "line": ref.line,
                }
            )
    return out


def note_secrets(text: str) -> list[protocol.NoteSecret]:
    """The secrets in a note's text, each on the line where it starts (0-based, as LSP)."""
    out = []
    for finding in secrets.find(text):
        line_start = text.rfind("\n", 0, finding.start) + 1
        line_end = text.find("\n", finding.start)
        line_end = len(text) if line_end < 0 else line_end
        out.append(
            protocol.NoteSecret(
                line=finding.line,
                start=finding.start - line_start,
                end=min(finding.end, line_end) - line_start,
                kind=finding.kind,
            )
        )
    return out


def _redacted(unit: Any) -> Any:
    text = secrets.redact(unit.text)
    if text == unit.text:
        return unit
    return msgspec.structs.replace(unit, text=text, key=textnorm.canonical_hash(text))


def uri_path(uri: str) -> str:
    """The file path of a `file:` URI (the URI itself for any other scheme)."""
    parts = urlsplit(uri)
    return unquote(parts.path) if parts.scheme == "file" else uri


class Notes:
    """sync_note: a note file's units kept in step with its text, its facts (and its kind of
    document, default memory type and scope, from the table of the agents' conventions with
    config.toml's `[notes]`, `table`, for a front that does not say) and the project's note
    links recorded."""

    def __init__(
        self,
        units: Units,
        clock: Clock,
        indexing: Indexing,
        announcer: Announcer,
        table: Table = DEFAULT,
    ) -> None:
        self.units = units
        self.clock = clock
        self.indexing = indexing
        self.announcer = announcer
        self.table = table

    def sync_note(self, params: protocol.SyncNoteParams) -> protocol.SyncNoteResult:
        """Make the project's memories from one note file match its text: new units stored,
        vanished units forgotten (reason source_removed), moved units re-ranged. The note is
        the source of truth, so a unit whose content was forgotten before comes back. Each
        unit's section and claim flag and the note's facts are recorded (schema 6), and the
        project's links between notes resolved again."""
        project = project_key(params.project)
        uri = checked_text(params.uri, "uri")
        assert uri is not None
        relative = self._relative(uri, project)
        found_as = self.table.match(relative) if relative is not None else None
        origin = params.agent_memory or self._origin(project, uri)
        if origin:  # an agent's own memory, outside the folder: the table names no file there
            found_as = None
        default_type = params.default_type or (found_as.memory_type if found_as else "note")
        imports = found_as is not None and found_as.convention.imports
        text = params.text or ""
        if not text:
            units = []
        elif origin:
            units = self._agent_units(text, uri, origin)
        else:
            units = parse(text, default_type=default_type, imports=imports)
        if params.scope is not None:
            scoped = Scoped(tuple(params.scope))
        else:
            scoped = scope_of(found_as, text)
        path_scope = scope_column(scoped.globs)
        found = note_secrets(params.text or "")
        if found:  # the note is the source of truth: its units are kept, their secrets not
            units = [_redacted(unit) for unit in units]
        now = self.clock()
        with self.units.write(project) as tx:
            added, removed, moved, shared, unchanged = _state(tx, uri, units, path_scope, now)
            kind: protocol.NoteKind
            if origin:  # an agent's memory: every line a standing statement of its own
                kind = "instructions"
            elif params.kind is not None:
                kind = params.kind
            elif found_as is not None:
                kind = found_as.kind
            else:  # a file of no agent's: config.toml's `[notes]` may still say its kind
                kind = self.table.kind_of(relative) if relative is not None else ""
            relinked = self._record_facts(
                tx, uri, params.text or "", bool(units), now, kind, origin
            )
        self.indexing.kick()
        self.announcer.changed(project, "sync", added + removed + moved + shared)
        self.announcer.changed(project, "links", relinked)  # the first units of the notes concerned
        return protocol.SyncNoteResult(
            project=project,
            uri=uri,
            added=added,
            removed=removed,
            moved=moved,
            unchanged=unchanged,
            shared=shared,
            secrets=found,
            origin=found_as.origin if found_as else protocol.ORIGIN_NAMES.get(origin, ""),
            scope=list(scoped.globs),
            warnings=[
                protocol.NoteWarning(uri=uri, line=line, message=message)
                for line, message in scoped.warnings
            ],
        )

    def instruction_units(self, project: str) -> list[protocol.Memory]:
        """The active units of the project's instruction files (AGENTS.md, CLAUDE.md, rules):
        each of their lines is a standing instruction."""
        with self.units.read(project) as tx:
            facts = tx.note_files.facts()
            uris = [u for u, raw in facts.items() if _FACTS.decode(raw).kind == "instructions"]
            rows = {
                row["id"]: row for uri in sorted(uris) for row in tx.note_sources.stated_in(uri)
            }
            return tx.records(list(rows.values())) if rows else []

    def _origin(self, project: str, uri: str) -> str:
        """The origin a note file was synced with before (a sync that does not say it)."""
        with self.units.read(project) as tx:
            return tx.note_files.origin(uri)

    @staticmethod
    def _agent_units(text: str, uri: str, origin: str) -> list[Any]:
        """An agent's own memory read as that agent writes it: front matter and index lines
        are no memory, its type from its front matter (`agent_memory`)."""
        name = PurePosixPath(uri_path(uri)).name
        return parse(
            agent_memory.readable(text, origin, name),
            default_type=agent_memory.memory_type(text, origin, name),
        )

    @staticmethod
    def _relative(uri: str, project: str) -> str | None:
        """The note's path in the project folder (a project named by its folder's path, as
        the editor names it), which the table is asked about; None when it is not inside."""
        try:
            return PurePosixPath(uri_path(uri)).relative_to(PurePosixPath(project)).as_posix()
        except ValueError:
            return None

    @staticmethod
    def _record_facts(
        tx: Tx,
        uri: str,
        text: str,
        present: bool,
        now: str,
        kind: protocol.NoteKind = "",
        origin: str = "",
    ) -> list[str]:
        """The note's standing (and its kind of document), then the project's note links
        resolved again. Returns the ids of the first units of the notes whose links changed
        (for `memory/changed`)."""
        if present:
            facts = msgspec.structs.replace(note_facts(text, unquote(uri)), kind=kind)
            tx.note_files.put(
                uri,
                number=facts.number,
                status=facts.status,
                current=facts.current,
                facts=msgspec.json.encode(facts).decode(),
                at=now,
                origin=origin,
            )
        else:
            tx.note_files.remove(uri)
        before = {(r["newer_uri"], r["older_uri"]) for r in tx.note_links.listed()}
        known = {u: _FACTS.decode(j) for u, j in tx.note_files.facts().items()}
        if not tx.note_links.replace_all(note_links(known), now):
            return []
        after = {(r["newer_uri"], r["older_uri"]) for r in tx.note_links.listed()}
        touched = {u for pair in before ^ after for u in pair}
        return list(tx.note_links.anchors(touched).values())


def _state(
    tx: Tx, uri: str, units: list[Any], path_scope: str | None, now: str
) -> tuple[list[str], list[str], list[str], list[str], int]:
    """The memories the note `uri` states made its units (see `Notes.sync_note`): a unit
    another note states already adds this note to that memory's sources; a unit the note no
    longer states drops this note from its sources, and is forgotten (source_removed) only
    when no note states it any more. Returns (added, removed, moved, shared, unchanged)."""
    added: list[str] = []
    removed: list[str] = []
    moved: list[str] = []
    shared: list[str] = []
    unchanged = 0
    existing = {row["canonical_hash"]: row for row in tx.note_sources.stated_in(uri)}
    wanted = index(units)
    for key, unit in wanted.items():
        where = protocol.SourceRange(
            unit.start_line, unit.start_char, unit.end_line, unit.end_char
        ).format()
        row = existing.get(key)
        if row is not None:
            first = row["source_uri"] == uri
            if row["stated_range"] != where:
                if first:
                    tx.memories.set_range(row["id"], where)
                moved.append(row["id"])
            else:
                unchanged += 1
            tx.note_sources.put(row["id"], uri, where, path_scope)
            scope = _scope(tx, row["id"])
            if scope != row["path_scope"]:  # a front matter or folder changed
                tx.memories.set_scope(row["id"], scope)
                moved.append(row["id"])
            if first:
                tx.note_units.put(row["id"], unit.section, unit.claim)
            continue
        other = tx.memories.active_by_canonical(key)
        if other is not None:
            shared.append(other["id"])
            if tx.note_sources.is_note_unit(other["id"]):  # another note states it too
                if not tx.note_sources.of_memory(other["id"]) and other["source_uri"]:
                    tx.note_sources.put(
                        other["id"],
                        other["source_uri"],
                        other["source_range"] or "",
                        other["path_scope"],
                    )
                tx.note_sources.put(other["id"], uri, where, path_scope)
                scope = _scope(tx, other["id"])
                if scope != other["path_scope"]:
                    tx.memories.set_scope(other["id"], scope)
            continue
        clear_tombstone(tx, key, now, force=True)
        memory_id = insert(
            tx,
            unit.text,
            unit.type,
            now,
            None,
            now,
            source_uri=uri,
            source_range=where,
            canonical=key,
            path_scope=path_scope,
        )
        tx.note_sources.put(memory_id, uri, where, path_scope)
        tx.note_units.put(memory_id, unit.section, unit.claim)
        added.append(memory_id)
    for key, row in existing.items():
        if key in wanted:
            continue
        left = tx.note_sources.drop(row["id"], uri)
        if not left:
            tx.forget(row, "source_removed", now)
            removed.append(row["id"])
            continue
        if row["source_uri"] == uri:  # its first source went: the next is first now
            tx.memories.set_source(row["id"], left[0]["uri"], left[0]["source_range"])
        if _scope(tx, row["id"]) != row["path_scope"]:
            tx.memories.set_scope(row["id"], _scope(tx, row["id"]))
        moved.append(row["id"])
    return added, removed, moved, shared, unchanged


def _scope(tx: Tx, memory_id: str) -> str | None:
    """The files a memory of notes applies to: those of every note that states it (the whole
    project when one of them applies to it all)."""
    scopes = [row["path_scope"] for row in tx.note_sources.of_memory(memory_id)]
    if not scopes or any(scope is None for scope in scopes):
        return None
    return scope_column(dict.fromkeys(glob for scope in scopes for glob in scope_of_column(scope)))
