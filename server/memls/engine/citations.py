"""The citations use case: checking what memories cite against the project folder, the
memories that cite a document, and re-confirming a memory whose code changed.

Composed, not inherited: it is given the units of work it opens, the clock and the announcer
of changes by its constructor. States come from the folder as it is (each citation's anchor,
made when the memory was stored, against the current text), never accumulated; a check
records the new states in one transaction, audits moves and changes of state, and announces
the memories whose citations changed (`memory/changed`, op "citations")."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from memls import protocol, textnorm
from memls.citations import STALE_STATES, anchor_file, anchor_span, anchor_symbol, git
from memls.citations.files import read as read_file
from memls.citations.tree import Workspace
from memls.engine.cite import decode, encode, project_root
from memls.errors import InvalidInput, NotFound, Refused
from memls.scope import folder_path, project_key
from memls.store.unit import Tx

log = logging.getLogger("memls.engine.citations")

Opener = Callable[[str], AbstractContextManager[Tx]]
CHUNK = 200
"""Cited paths read from the store at a time during a check."""
Changed = Callable[[str, str, list[str]], None]


class Citations:
    def __init__(
        self,
        write: Opener,
        read: Opener,
        clock: Callable[[], str],
        changed: Changed,
        *,
        projects: Callable[[], list[str]] = list,
    ) -> None:
        """`projects` names every project with citations (the owner's watcher asks)."""
        self.projects = projects
        self._write = write
        self._read = read
        self._clock = clock
        self._changed = changed
        self._lock = threading.Lock()  # one check of a project's citations at a time

    # ------------------------------------------------------------ checking

    def check(self, params: protocol.CheckParams) -> protocol.CheckResult:
        project = project_key(params.project)
        return self.recheck(project, report=True)

    def recheck(
        self, project: str, paths: Iterable[str] | None = None, *, report: bool = False
    ) -> protocol.CheckResult:
        """Check the project's citations (those at `paths` only, when given) and record what
        changed; `report`: list every citation's state in the result (`memls check`), else
        only the memories that changed (the watcher). Files are read CHUNK paths at a time, one
        file's text held at a time. A project folder that is gone is refused; nothing is
        recorded then."""
        root = project_root(project, field="project")
        with self._lock:
            if paths is None:
                with self._read(project) as tx:
                    wanted = sorted(tx.citations.paths())
            else:
                wanted = sorted(set(paths))
            space = Workspace(root)
            results: list[protocol.CitationStatus] = []
            updates: list[tuple[Any, tuple]] = []
            for first in range(0, len(wanted), CHUNK):
                chunk = wanted[first : first + CHUNK]
                with self._read(project) as tx:
                    rows = tx.citations.at_paths(chunk)
                if paths is None:  # each row once: in the chunk of the path it stands at
                    rows = [r for r in rows if r["path"] in chunk]
                self._check_rows(space, project, rows, results if report else None, updates)
                space.release()
            if not root.is_dir():  # gone while checking: record nothing
                raise Refused(f"the project folder {project!r} is gone", field="project")
            changed = self._record(project, updates) if updates else []
        return protocol.CheckResult(project=project, citations=results, changed=changed)

    def _check_rows(
        self,
        space: Workspace,
        project: str,
        rows: list[Any],
        results: list[protocol.CitationStatus] | None,
        updates: list[tuple[Any, tuple]],
    ) -> None:
        rows = sorted(rows, key=lambda r: r["path"])
        for i, row in enumerate(rows):
            if i and row["path"] != rows[i - 1]["path"]:
                space.release()  # file by file: one file's text held at a time
            anchor = decode(row["anchor"])
            try:
                located, diff = space.check(anchor, since=row["commit_id"])
            except OSError as error:  # unreadable: keep the last state, say why
                log.warning("citation %s of %s unreadable: %s", row["path"], project, error)
                if results is not None:
                    results.append(_status(row, row["state"], row["diff"]))
                continue
            new = (located.path, located.start_line, located.end_line, located.state, diff)
            old = (row["path"], row["start_line"], row["end_line"], row["state"], row["diff"])
            if new != old:
                updates.append((row, new))
            if results is not None:
                results.append(
                    protocol.CitationStatus(
                        memory=row["memory_id"],
                        path=located.path,
                        start_line=located.start_line,
                        end_line=located.end_line,
                        state=located.state,
                        symbol=row["symbol"],
                        diff=diff,
                    )
                )

    def _record(self, project: str, updates: list[tuple[Any, tuple]]) -> list[str]:
        now = self._clock()
        ids: list[str] = []
        with self._write(project) as tx:
            for row, (path, start, end, state, diff) in updates:
                tx.citations.update(
                    row["memory_id"],
                    row["ordinal"],
                    path=path,
                    start_line=start,
                    end_line=end,
                    state=state,
                    diff=diff,
                    at=now,
                )
                if (path, start, end) != (row["path"], row["start_line"], row["end_line"]):
                    tx.audit(
                        "citation_moved",
                        row["memory_id"],
                        now,
                        fromPath=row["path"],
                        fromLines=[row["start_line"], row["end_line"]],
                        toPath=path,
                        toLines=[start, end],
                    )
                if state != row["state"]:
                    tx.audit(
                        "citation_state",
                        row["memory_id"],
                        now,
                        path=path,
                        before=row["state"],
                        after=state,
                    )
                if state != row["state"] or (state in STALE_STATES and diff != row["diff"]):
                    if row["memory_id"] not in ids:
                        ids.append(row["memory_id"])
        self._changed(project, "citations", ids)
        return ids

    def cited_code_changed(self, project: str) -> list[protocol.Memory]:
        """The review group "Cited code changed": active memories whose cited code changed
        or is gone (re-confirm, edit, or forget with reason source_changed)."""
        with self._read(project) as tx:
            rows = tx.memories.fetch_many(tx.citations.stale_ids())
            active = [row for row in rows.values() if row["status"] == "active"]
            return tx.records(active)

    def cited_paths(self, project: str) -> list[str]:
        with self._read(project) as tx:
            return tx.citations.paths()

    # ------------------------------------------------------------ from the code

    def citations(self, params: protocol.CitationsParams) -> protocol.CitationsResult:
        """The memories that cite one document (by URI), with their ranges and states."""
        project = project_key(params.project)
        root = project_root(project, field="project")
        path = _relative_uri(root, params.uri)
        with self._read(project) as tx:
            rows = tx.citations.at_paths([path])
            current = [r for r in rows if r["path"] == path]
            memories = tx.memories.fetch_many({r["memory_id"] for r in current})
        ranges = [
            protocol.CitedRange(
                memory=row["memory_id"],
                preview=textnorm.preview(memories[row["memory_id"]]["content"]),
                start_line=row["start_line"],
                end_line=row["end_line"],
                state=row["state"],
                stale=row["state"] in STALE_STATES,
                symbol=row["symbol"],
            )
            for row in current
            if row["memory_id"] in memories
        ]
        return protocol.CitationsResult(project=project, path=path, ranges=ranges)

    # ------------------------------------------------------------ review

    def reconfirm(self, params: protocol.ReconfirmParams) -> protocol.ReconfirmResult:
        """The memory's citations take the code as it is now: each anchor is made again at
        where the citation stands (the same symbol, span or file). A citation whose file or
        symbol is gone cannot be re-confirmed (edit the memory, or forget it)."""
        project = project_key(params.project)
        root = project_root(project, field="project")
        memory_id = params.id.strip()
        with self._read(project) as tx:
            if tx.memories.fetch(memory_id) is None:
                raise NotFound(f"no memory {memory_id} in project {project!r}", field="id")
            rows = tx.citations.of([memory_id]).get(memory_id, [])
        if rows:  # where each stands now, then take the code there
            self.recheck(project, [row["path"] for row in rows])
            with self._read(project) as tx:
                rows = tx.citations.of([memory_id]).get(memory_id, [])
        if not rows:
            raise Refused(f"memory {memory_id} cites no code", field="id")
        commit = git.head(root)
        fresh = [(row, _anchor_now(root, row)) for row in rows]
        now = self._clock()
        with self._write(project) as tx:
            for row, anchor in fresh:
                tx.citations.replace_anchor(
                    memory_id,
                    row["ordinal"],
                    path=anchor.path,
                    start_line=anchor.start_line,
                    end_line=anchor.end_line,
                    fingerprint=anchor.fingerprint,
                    anchor=encode(anchor),
                    commit_id=commit,
                    at=now,
                )
            tx.audit("citation_reconfirmed", memory_id, now, citations=len(fresh))
            memory = tx.records([tx.memories.existing(memory_id)])[0]
        self._changed(project, "citations", [memory_id])
        return protocol.ReconfirmResult(project=project, memory=memory)


def _anchor_now(root: Path, row: Any) -> Any:
    path = row["path"]
    if row["state"] == "missing":
        raise Refused(
            f"{path} (or its symbol) is gone: edit the memory or forget it (source_changed)",
            field="id",
        )
    found = read_file(root, path)
    if found is None or found.view is None:
        raise Refused(f"{path} cannot be read as text now", field="id")
    view = found.view
    if row["kind"] == "file":
        return anchor_file(path, view)
    if row["kind"] == "symbol":
        return anchor_symbol(path, view, row["symbol"], row["start_line"], row["end_line"])
    return anchor_span(path, view, row["start_line"], min(row["end_line"], view.line_count))


def _status(row: Any, state: Any, diff: str | None) -> protocol.CitationStatus:
    return protocol.CitationStatus(
        memory=row["memory_id"],
        path=row["path"],
        start_line=row["start_line"],
        end_line=row["end_line"],
        state=state,
        symbol=row["symbol"],
        diff=diff,
    )


def _relative_uri(root: Path, uri: str) -> str:
    path = folder_path(uri) if "://" in uri else Path(uri)
    if path is None:
        raise InvalidInput("names no file", field="uri")
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (OSError, ValueError):
        raise InvalidInput(f"{uri} is not inside project {str(root)!r}", field="uri") from None
