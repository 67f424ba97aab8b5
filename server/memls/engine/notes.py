"""Notes as memories: one note file's units kept in step with its text."""

from __future__ import annotations

from memls import protocol
from memls.engine.writes import Writes
from memls.notes import index, parse
from memls.scope import project_key


class Notes(Writes):
    def sync_note(self, params: protocol.SyncNoteParams) -> protocol.SyncNoteResult:
        """Make the project's memories from one note file match its text: new units stored,
        vanished units forgotten (reason source_removed), moved units re-ranged. The note is
        the source of truth, so a unit whose content was forgotten before comes back."""
        project = project_key(params.project)
        uri = self._text(params.uri, "uri")
        assert uri is not None
        units = parse(params.text, default_type=params.default_type) if params.text else []
        now = self.clock()
        added: list[str] = []
        removed: list[str] = []
        moved: list[str] = []
        shared: list[str] = []
        unchanged = 0
        with self._write(project) as tx:
            existing = {row["canonical_hash"]: row for row in tx.memories.active_by_source(uri)}
            wanted = index(units)
            for key, unit in wanted.items():
                where = protocol.SourceRange(
                    unit.start_line, unit.start_char, unit.end_line, unit.end_char
                ).format()
                row = existing.get(key)
                if row is not None:
                    if row["source_range"] != where:
                        tx.memories.set_range(row["id"], where)
                        moved.append(row["id"])
                    else:
                        unchanged += 1
                    continue
                other = tx.memories.active_by_canonical(key)
                if other is not None:
                    shared.append(other["id"])
                    continue
                self._clear_tombstone(tx, key, now, force=True)
                added.append(
                    self._insert(
                        tx,
                        unit.text,
                        unit.type,
                        now,
                        None,
                        now,
                        source_uri=uri,
                        source_range=where,
                        canonical=key,
                    )
                )
            for key, row in existing.items():
                if key not in wanted:
                    tx.forget(row, "source_removed", now)
                    removed.append(row["id"])
        self._kick()
        self._changed(project, "sync", added + removed + moved)
        return protocol.SyncNoteResult(
            project=project,
            uri=uri,
            added=added,
            removed=removed,
            moved=moved,
            unchanged=unchanged,
            shared=shared,
        )
