"""memory/importFrom: another memory tool's store (OMEGA, basic-memory, claude-mem) brought into
a project, read-only, with what memls can keep of its history."""

from __future__ import annotations

from typing import Annotated

import msgspec

from memls.protocol.base import ImportSource, Project, Uri, Wire


class ImportFromParams(Wire):
    #: the tool whose store is read
    from_: ImportSource = msgspec.field(name="from")
    #: its store: an absolute path (OMEGA: omega.db or its folder)
    source: Uri
    project: Project | None = None
    #: where rows of no project (or an empty-string one: OMEGA's global escape) go; absent:
    #: they are listed, not imported
    unscoped_to: Project | None = None
    #: what would come in, and nothing changed
    dry_run: bool = False
    #: a secret in a memory is replaced by [REDACTED:kind] instead of leaving the memory out
    redact: bool = False


class UnscopedRow(Wire):
    """A row of no project, listed and left out (no `unscopedTo`)."""

    key: str
    preview: str


class ImportedCounts(Wire):
    """What one target project got (or would get, on a dry run)."""

    project: str
    #: memories of the source read for this project
    read: int
    #: new memories (`superseded` and `flagged` of them kept their source's state)
    stored: int
    #: already in the project from an earlier import of this store: nothing changed
    already: int = 0
    #: the project held the same text: counted on that memory, not stored twice
    duplicates: int = 0
    #: restatements of another memory, merged into it once indexed
    merged: int = 0
    superseded: int = 0
    #: flagged for review in the source: in memls's review queue
    flagged: int = 0
    #: supersedes, contradicts and named (`relates`) relations between the imported memories
    edges: int = 0
    #: tags given to the imported memories
    tags: int = 0
    #: files in the project the imported memories name (claude-mem's files read and
    #: changed), cited as a store's citations are: stale once the file changes
    citations: int = 0
    #: named files that could not be cited (not readable as text, say): left uncited
    citations_skipped: int = 0
    #: deletions the source logged, in the forgetting log (with tombstones)
    forgotten: int = 0
    #: memories left out because their text holds a secret (no `redact`)
    refused: int = 0
    #: memories whose secrets were replaced by [REDACTED:kind]
    redacted: int = 0
    #: the kinds of secret found, with how many memories held each
    secrets: dict[str, int] = {}
    #: texts memls forgot before (tombstones): left out, as a store without force is
    tombstoned: int = 0
    #: texts over the `[limits] max_content_bytes` setting: left out, as a store of them is
    too_long: int = 0
    #: open contradictions of the imported memories with the others, once indexed
    conflicts: int = 0
    ids: list[str] = []


class ImportFromResult(Wire):
    tool: ImportSource
    #: the store's schema or package version the reader recognised
    version: str
    source: str
    dry_run: bool
    projects: list[ImportedCounts]
    #: rows of no project (listed when not imported)
    unscoped: Annotated[list[UnscopedRow], msgspec.Meta(max_length=100_000)] = []
    unscoped_count: int = 0
    #: rows of other projects: never imported
    other_projects: int = 0
    #: forgetting rows not tied to the project, or naming a memory the source still keeps
    forgetting_skipped: int = 0
    indexed: bool = True
