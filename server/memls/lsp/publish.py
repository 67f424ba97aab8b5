"""Diagnostics: the open contradictions of each of this window's projects, published on the
notes they sit in, with the secrets of notes, the links to notes that are not read and what
the owner could not read of a note as its agent meant (front matter, a glob, an import). A
project's open pairs are read once (at start, and when a change touches a memory of a shown
pair); a `memory/conflicts` notification carries the new pairs itself, so they are shown
without asking the engine again."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from lsprotocol import types

from memls import protocol
from memls.lsp import diagnostics as diag
from memls.lsp.base import ServerBase

Pair = tuple[str, str]
_EOL = re.compile(r"\r\n|\r|\n")  # LSP's line ends


class Publisher(ServerBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.published: dict[str, set[str]] = {}  # project -> uris with diagnostics
        self.open_pairs: dict[str, dict[Pair, protocol.Conflict]] = {}  # project -> pairs
        self.note_links: dict[str, list[protocol.NoteLink]] = {}  # project -> links
        self._refresh: dict[str, asyncio.TimerHandle] = {}

    def schedule_refresh(self, project: str | None, delay: float = 0.15) -> None:
        """Read the project's open pairs again (debounced) and publish them."""
        if project is None or self._loop is None:
            return
        old = self._refresh.pop(project, None)
        if old is not None:
            old.cancel()
        self._refresh[project] = self._loop.call_later(
            delay, lambda: self.spawn(self.refresh_diagnostics(project))
        )

    async def refresh_diagnostics(self, project: str) -> None:
        self._refresh.pop(project, None)
        if project not in {f.project for f in self.projects.folders}:
            return
        found = await self.run(
            "conflicts", protocol.ConflictsParams(project=project, status="open", limit=1000)
        )
        self.open_pairs[project] = {(c.newer.id, c.older.id): c for c in found.conflicts}
        self.note_links[project] = list(found.links)
        self.publish(project)

    def conflicts_found(self, payload: protocol.ConflictsNotification) -> None:
        """New pairs, as the notification carries them: shown at once, no query."""
        pairs = self.open_pairs.setdefault(payload.project, {})
        for c in payload.conflicts:
            if c.status == "open":
                pairs[(c.newer.id, c.older.id)] = c
            else:
                pairs.pop((c.newer.id, c.older.id), None)
        self.publish(payload.project)

    def memories_changed(self, payload: protocol.ChangedNotification) -> None:
        """A change can alter what is shown only if it touches a memory of a shown pair (its
        range moved, it went, it was superseded or resolved): then read the pairs again."""
        touched = set(payload.ids)
        shown = self.open_pairs.get(payload.project, {})
        if payload.op == "links" or any(touched & set(pair) for pair in shown):
            self.schedule_refresh(payload.project)

    def publish(self, project: str) -> None:
        if project not in {f.project for f in self.projects.folders}:
            return
        by_uri: dict[str, list[protocol.Conflict]] = {}
        for c in self.open_pairs.get(project, {}).values():
            for uri in {m.source_uri for m in (c.newer, c.older)}:
                if uri and uri in self.indexed:
                    by_uri.setdefault(uri, []).append(c)
        links: dict[str, list[protocol.NoteLink]] = {}
        for link in self.note_links.get(project, []):
            if link.older_uri in self.indexed:
                links.setdefault(link.older_uri, []).append(link)
        leaks = {
            uri: found
            for uri, found in self.note_secrets.items()
            if found and self.indexed.get(uri) == project
        }
        refused = self.note_refused.get(project, {})
        warned = {u: w for u, w in self.note_warnings.get(project, {}).items() if w}
        previous = self.published.get(project, set())
        shown = set(by_uri) | set(links) | set(leaks) | set(refused) | set(warned)
        for uri in previous | shown:
            doc = self.workspace.text_documents.get(uri)
            lines = _EOL.split(doc.source) if doc is not None else None
            items = diag.for_document(uri, by_uri.get(uri, []), lines)
            items += diag.for_links(uri, links.get(uri, []), lines)
            items += diag.for_secrets(leaks.get(uri, []), lines)
            items += diag.for_refused(refused.get(uri))
            items += diag.for_warnings(warned.get(uri, []), lines)
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=items)
            )
        self.published[project] = shown
