"""Many memories at once: ingest (stores, all or none), export and import (the file format
of `memls.transfer`), each told as memory/progress ("writing", then "indexing")."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import msgspec

from memls import protocol, transfer
from memls.engine.shared import Announcer, Clock, Indexing, Units
from memls.errors import InvalidInput, MemlsError
from memls.scope import project_key
from memls.store.unit import Store


class Transfers:
    """ingest (through `store`, the writes' own), export, import_."""

    def __init__(
        self,
        units: Units,
        storage: Store,
        clock: Clock,
        indexing: Indexing,
        announcer: Announcer,
        *,
        vectors: bool,
        store: Callable[[protocol.StoreParams], protocol.StoreResult],
        redact: bool = False,
    ) -> None:
        self.units = units
        self.storage = storage
        self.clock = clock
        self.indexing = indexing
        self.announcer = announcer
        self.vectors = vectors
        self.store = store
        self.redact = redact  # [privacy] secrets = "redact": imports redact too

    def ingest(self, params: protocol.IngestParams) -> protocol.IngestResult:
        """Store many memories, all or none (one transaction), then wait until the vector
        index holds them; progress as memory/progress ("writing", then "indexing"). A
        restatement of a memory (of the project, or of an earlier item) counts as a duplicate
        and its id is that memory's, as for an exact duplicate."""
        project = project_key(params.project)
        items = []
        for number, item in enumerate(params.items, start=1):
            if item.project is not None and project_key(item.project) != project:
                raise InvalidInput(
                    f"item {number} names project {item.project!r}, not {project!r}",
                    field="items",
                )
            items.append(
                msgspec.structs.replace(item, project=project, redact=item.redact or params.redact)
            )
        work = self.announcer.work(project, "ingest")
        work.start("writing", len(items))
        ids: list[str] = []
        duplicates = 0
        try:
            with self.units.write(project):  # the stores below nest in it: all or nothing
                for number, item in enumerate(items, start=1):
                    try:
                        stored = self.store(item)
                    except MemlsError as exc:
                        exc.message = f"item {number}: {exc.message}"
                        raise
                    ids.append(stored.id)
                    duplicates += bool(stored.duplicate)
                    work.advance(number)
        except BaseException:
            work.end("nothing stored")
            raise
        self.indexing.kick()
        indexed = (
            self.indexing.wait(work, project, len(items) - duplicates, timeout=3600)
            if self.vectors
            else True
        )
        # restatements were merged after indexing (Writes.merge_restated): answered, as an
        # exact duplicate is, with the memory they restate
        merged = self.storage.search.merged_into(project, ids)
        ids = [merged.get(i, i) for i in ids]
        duplicates += len(merged)
        work.end(f"stored {len(items) - duplicates} memories ({duplicates} duplicates)")
        return protocol.IngestResult(
            project=project,
            stored=len(items) - duplicates,
            duplicates=duplicates,
            ids=ids,
            indexed=indexed,
        )

    def export(self, project: str | None) -> Iterator[dict[str, Any]]:
        return transfer.export(self.storage, project_key(project))

    def import_(
        self, project: str | None, lines: Iterable[str], *, redact: bool = False
    ) -> dict[str, int]:
        """All or nothing (one transaction), then the wait until the vector index holds the
        imported memories; progress as memory/progress ("writing", then "indexing"). A memory
        holding a secret refuses the import (naming its line), or is redacted when asked."""
        key = project_key(project)
        lines = list(lines)
        work = self.announcer.work(key, "import")
        work.start("writing", len(lines))
        try:
            counts = transfer.import_lines(
                self.storage,
                key,
                lines,
                now=self.clock(),
                front=self.units.front,
                redact=redact or self.redact,
            )
        except BaseException:
            work.end("nothing imported")
            raise
        work.advance(len(lines))
        self.indexing.kick()
        if self.vectors:
            self.indexing.wait(work, key, counts.get("memories", 0), timeout=3600)
        work.end("imported " + ", ".join(f"{n} {t}" for t, n in counts.items() if n))
        return counts
