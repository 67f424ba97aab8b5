"""Another memory tool's store brought into a project (`memls import --from`, memory/importFrom).

A reader under `store/foreign/` reads the tool's store read-only and hands over one project's
memories (`records.ForeignStore`); this writes them through the checks of any write, in one
transaction for the whole run (all or nothing):

- a memory whose text holds a secret is left out and counted by kind, or redacted when asked;
- a text the project forgot before (a tombstone) is left out, as a store without force is;
- a text the project already holds counts on that memory (`seenAgain`) and is not stored twice;
  a restatement is merged into what it restates once indexed, and the contradiction check runs
  over the old and the new (both on the indexer, as for every write);
- every row taken is recorded by the source's own id (`imported`): a second import of the same
  store finds each of them there and changes nothing.

A memory keeps its source's times (recorded_at, valid_from, valid_until), type, feedback score,
tags, supersession (status, successor, the `supersedes` edge), contradictions and named
relations (a `relates` edge with the source's name for it); a review flag puts
it in the review queue (trust `flagged`), which a person can clear. A deletion the source logged
becomes a forgetting-log entry and a tombstone. Rows of no project come in only into the project
named by `unscopedTo`; other projects' rows never."""

from __future__ import annotations

import importlib
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec

from memls import limits, protocol, secrets, textnorm, timeutil
from memls.engine import cite
from memls.engine.progress import Work
from memls.engine.shared import Announcer, Clock, Indexing, Units
from memls.errors import InvalidInput
from memls.scope import project_key
from memls.store.foreign.records import ForeignForgetting, ForeignMemory, ForeignStore
from memls.store.unit import Store, Tx

#: the reader module of each tool, under memls.store.foreign
READERS = {"omega": "omega", "basic-memory": "basic_memory", "claude-mem": "claude_mem"}


class _DryRun(Exception):
    """Raised at the end of a dry run's transaction: everything it wrote is rolled back."""


def reader(tool: str) -> ModuleType:
    try:
        return importlib.import_module(f"memls.store.foreign.{READERS[tool]}")
    except (KeyError, ModuleNotFoundError):
        raise InvalidInput(f"memls cannot read {tool} stores yet", field="from") from None


class Adopt:
    """import_from: a foreign store, through the write checks, in one unit of work."""

    def __init__(
        self,
        units: Units,
        storage: Store,
        clock: Clock,
        indexing: Indexing,
        announcer: Announcer,
        *,
        vectors: bool,
        redact: bool = False,
    ) -> None:
        self.units = units
        self.storage = storage
        self.clock = clock
        self.indexing = indexing
        self.announcer = announcer
        self.vectors = vectors
        self.redact = redact  # [privacy] secrets = "redact": imports redact too

    def import_from(self, params: protocol.ImportFromParams) -> protocol.ImportFromResult:
        project = project_key(params.project)
        source = Path(params.source).expanduser()
        if not source.is_absolute():
            raise InvalidInput("give the store as an absolute path", field="source")
        unscoped_to = (
            project_key(params.unscoped_to, field="unscopedTo") if params.unscoped_to else None
        )
        found: ForeignStore = reader(params.from_).read(source, Path(project))
        plan = [(project, found.memories, found.forgotten)]
        if unscoped_to is not None and found.unscoped:
            if unscoped_to == project:
                plan = [(project, found.memories + found.unscoped, found.forgotten)]
            else:
                plan.append((unscoped_to, found.unscoped, []))
        redact = params.redact or self.redact
        work = self.announcer.work(project, "import")
        work.start("writing", sum(len(memories) + len(gone) for _, memories, gone in plan))
        counts: list[protocol.ImportedCounts] = []
        try:
            with self.units.write(project):  # the targets nest in it: one transaction
                for target, memories, gone in plan:
                    with self.units.write(target) as tx:
                        counts.append(
                            _Run(tx, params.from_, self.clock(), redact, work).all(memories, gone)
                        )
                if params.dry_run:
                    raise _DryRun
        except _DryRun:
            work.end("nothing changed (a dry run)")
        except BaseException:
            work.end("nothing imported")
            raise
        indexed = True
        if not params.dry_run:
            counts, indexed = self._settle(work, counts)
        listed = [] if unscoped_to is not None else found.unscoped
        return protocol.ImportFromResult(
            tool=found.tool,
            version=found.version,
            source=found.source,
            dry_run=params.dry_run,
            projects=counts,
            unscoped=[
                protocol.UnscopedRow(key=m.key, preview=textnorm.preview(m.text)) for m in listed
            ],
            unscoped_count=len(found.unscoped),
            other_projects=found.other_projects,
            forgetting_skipped=found.forgetting_skipped,
            indexed=indexed,
        )

    def _settle(
        self, work: Work, counts: list[protocol.ImportedCounts]
    ) -> tuple[list[protocol.ImportedCounts], bool]:
        """After the commit: the fronts told, the indexer's checks (restatements merged,
        contradictions found) waited for, and what they did counted."""
        indexed = True
        for c in counts:
            self.announcer.changed(c.project, "store", c.ids)
        self.indexing.kick()
        if self.vectors:
            for c in counts:
                indexed &= self.indexing.wait(work, c.project, len(c.ids), timeout=3600)
        settled = []
        for c in counts:
            merged = self.storage.search.merged_into(c.project, c.ids)
            ids = [i for i in c.ids if i not in merged]
            with self.units.read(c.project) as tx:
                pairs = tx.conflicts.listed(status="open", memory_id=None, limit=1_000_000)
            among = set(ids)
            conflicts = sum(1 for row in pairs if row["src"] in among or row["dst"] in among)
            settled.append(
                msgspec.structs.replace(c, merged=len(merged), ids=ids, conflicts=conflicts)
            )
        work.end(
            "imported "
            + ", ".join(f"{c.stored - c.merged} memories into {c.project}" for c in settled)
        )
        return settled, indexed


class _Run:
    """The writes of one target project, inside the run's transaction."""

    def __init__(self, tx: Tx, tool: str, now: str, redact: bool, work: Work) -> None:
        self.tx = tx
        self.tool = tool
        self.now = now
        self.redact = redact
        self.work = work
        self.known = tx.imported.known(tool)
        self.ids: dict[str, str] = dict(self.known)  # source key -> memory id
        self.new: list[str] = []
        self.kinds: Counter[str] = Counter()
        self.c: dict[str, Any] = Counter()

    def all(
        self, memories: list[ForeignMemory], gone: list[ForeignForgetting]
    ) -> protocol.ImportedCounts:
        done = self.work.done
        for n, memory in enumerate(memories, start=1):
            self.memory(memory)
            self.work.advance(done + n)
        new = set(self.new)
        fresh = {m.key for m in memories if self.ids.get(m.key) in new}
        for memory in memories:
            if memory.key in fresh:
                self.relations(memory)
        for n, entry in enumerate(gone, start=1):
            self.forgotten(entry)
            self.work.advance(done + len(memories) + n)
        return protocol.ImportedCounts(
            project=self.tx.project,
            read=len(memories),
            stored=len(self.new),
            ids=list(self.new),
            secrets=dict(self.kinds),
            **self.c,
        )

    def memory(self, m: ForeignMemory) -> None:
        tx = self.tx
        if m.key in self.known:
            self.c["already"] += 1
            return
        text = m.text
        if len(text.encode()) > limits.current().max_content_bytes:
            self.c["too_long"] += 1  # as a store of it would be refused
            return
        findings = secrets.find(text)
        if findings:
            for kind in sorted({f.kind for f in findings}):
                self.kinds[kind] += 1
            if not self.redact:
                self.c["refused"] += 1
                return
            text = secrets.redact(text, findings)
            self.c["redacted"] += 1
        canonical = textnorm.canonical_hash(text)
        if tx.tombstones.find(canonical) is not None:
            self.c["tombstoned"] += 1
            return
        existing = tx.memories.active_by_canonical(canonical)
        if existing is not None:
            tx.memories.seen_again(existing["id"], self.now)
            tx.imported.add(self.tool, m.key, existing["id"], "duplicate", self.now)
            self.ids[m.key] = existing["id"]
            self.c["duplicates"] += 1
            return
        recorded = _ts(m.created_at, self.now, "createdAt", m.key)
        valid_from = _ts(m.valid_from, recorded, "validFrom", m.key)
        until = _ts(m.valid_until, None, "validUntil", m.key) if m.valid_until else None
        if until is not None and until < valid_from:
            until = valid_from
        superseded = m.status == "superseded"
        memory_id = tx.memories.insert(
            content=text,
            type_=m.type,
            valid_from=valid_from,
            valid_until=None if superseded else until,
            recorded_at=recorded,
            content_hash=textnorm.content_hash(text),
            canonical=canonical,
            source_uri=None,
            source_range=None,
            derived_from=None,
        )
        tx.outbox.enqueue(memory_id, "index", self.now)
        # audited as a store (what it is: the near-duplicate rule merges a store's
        # restatements, never an export's rows), naming where it came from
        detail: dict[str, Any] = {
            "type": m.type,
            "canonicalHash": canonical,
            "importedFrom": self.tool,
            "key": m.key,
        }
        if m.source_type:
            detail["sourceType"] = m.source_type
        tx.audit("store", memory_id, self.now, **detail)
        if superseded:
            end = until or self.now
            tx.memories.supersede(memory_id, end, max(end, recorded))
            self.c["superseded"] += 1
        if m.feedback_score:
            tx.memories.set_feedback_score(memory_id, m.feedback_score)
        if m.flagged:
            tx.memories.set_trust(memory_id, "flagged")
            tx.transitions.add(
                memory_id,
                "candidate",
                "flagged",
                "feedback",
                f"flagged for review in {protocol.IMPORT_NAMES[self.tool]} "
                f"(feedback score {m.feedback_score})",
                self.now,
                tx.front,
            )
            self.c["flagged"] += 1
        self.cited(memory_id, m)
        self.c["tags"] += self.tx.tags.add(memory_id, m.tags)
        tx.imported.add(self.tool, m.key, memory_id, "stored", self.now)
        self.ids[m.key] = memory_id
        self.new.append(memory_id)

    def cited(self, memory_id: str, m: ForeignMemory) -> None:
        """The project's files the memory names (claude-mem's files read and changed), each
        cited as a whole file the way a store with citations cites it, so it turns stale when
        the file changes; a file gone from the project, or one that cannot be cited, is not."""
        found = []
        for c in m.citations:
            spec = protocol.CitationSpec(path=c.path, start_line=c.start_line, end_line=c.end_line)
            try:
                found += cite.prepare(self.tx.project, [spec])
            except InvalidInput:
                self.c["citations_skipped"] += 1
        if found:
            self.c["citations"] += self.tx.citations.add(memory_id, found, self.now)

    def relations(self, m: ForeignMemory) -> None:
        """The successor of a superseded memory, and its edges to the others imported: a
        supersession, a contradiction, or a named relation (`relates`, its name kept)."""
        mine = self.ids[m.key]
        pairs: list[tuple[str, str, str, str]] = []
        if m.superseded_by in self.ids:
            pairs.append(("supersedes", self.ids[m.superseded_by], mine, ""))
        for edge in m.edges:
            if edge.target in self.ids:
                label = (edge.label or "").strip() if edge.kind == "relates" else ""
                pairs.append((edge.kind, mine, self.ids[edge.target], label))
        for kind, src, dst, label in dict.fromkeys(pairs):
            if src == dst:
                continue
            if kind == "relates":
                if not self.tx.edges.relate(src, dst, label, self.now):
                    continue
            elif kind == "supersedes":
                if self.tx.edges.has(src, dst, "supersedes"):  # named both ways (status, edge)
                    continue
                self.tx.edges.add(src, dst, "supersedes", self.now)
            elif not self.tx.conflicts.exists(src, dst):
                detail = {
                    "newer": src,
                    "older": dst,
                    "signals": [],
                    "similarity": 0.0,
                    "similaritySource": "none",
                    "proposal": None,
                    "importedFrom": self.tool,
                }
                self.tx.conflicts.add(src, dst, 1.0, detail, self.now)
            else:
                continue
            self.c["edges"] += 1

    def forgotten(self, entry: ForeignForgetting) -> None:
        tx = self.tx
        if entry.key in self.known:
            self.c["already"] += 1
            return
        name = f"{self.tool}:{entry.key}"
        at = _ts(entry.forgotten_at, self.now, "forgottenAt", entry.key)
        preview = textnorm.preview(secrets.redact(entry.text or "")) or "(no text kept)"
        tx.forgetting.log(name, entry.reason, preview, "note", at, tx.front)
        if entry.text and not secrets.find(entry.text):
            canonical = textnorm.canonical_hash(entry.text)
            if tx.memories.active_by_canonical(canonical) is None:
                tx.tombstones.put(canonical, name, entry.reason, at)
        tx.imported.add(self.tool, entry.key, name, "forgotten", self.now)
        tx.audit("import_forgotten", None, self.now, key=entry.key, reason=entry.reason)
        self.c["forgotten"] += 1


def _ts(value: str | None, default: str | None, field: str, key: str) -> str:
    if not value:
        assert default is not None
        return default
    try:
        return timeutil.parse_ts(value, field=field)
    except InvalidInput as exc:
        raise InvalidInput(f"{key}: {exc.message}", field="source") from None
