"""The projects whose notes the owning daemon watches: named by any front, kept across restarts."""

from __future__ import annotations

from typing import Annotated

import msgspec

from memls.protocol.base import AgentOrigin, NoteKind, Project, Wire
from memls.protocol.requests import NoteSecret, NoteWarning


class WatchParams(Wire):
    """memory/watch: the owner watches this project's notes (AGENTS.md, CLAUDE.md, `.memls/`,
    decision records, rules files) from now on, across restarts. The project is a folder (its
    absolute path). Answered once the project's notes are in the record, or after `wait`
    seconds, whichever comes first (`indexed` says which)."""

    project: Project | None = None
    wait: Annotated[float, msgspec.Meta(ge=0, le=60)] = 10.0
    #: true: the notes are read from the disk again now, even when the owner has read them
    #: already (a file an editor holds open excepted: its buffer wins), and the answer waits
    #: for that reading (`memls check` reads what is on the disk, not a debounced change)
    reread: bool = False


class NoteFile(Wire):
    """One note file of a watched project, as the owner last indexed it."""

    uri: str
    kind: NoteKind = ""
    secrets: list[NoteSecret] = []  # its units are indexed with these redacted
    origin: str = ""  # whose convention the file is ("Codex AGENTS.md", "Cursor rules")
    scope: list[str] = []  # the files its lines apply to (globs); empty: the whole project
    imported_by: list[str] = []  # the notes that import it (Claude Code `@path`)
    #: an agent's own memory of the project, kept outside its folder (Claude Code's auto
    #: memory); null: a file of the project's folder
    agent_memory: AgentOrigin | None = None


class RefusedNote(Wire):
    """A path a note glob names that the owner does not read: a link (to a file or a folder)
    that leads out of the project's folder, or round a loop of links."""

    uri: str  # the link
    target: str  # where it leads ("" for a loop)
    message: str  # the warning, naming the link


class WatchResult(Wire):
    project: str
    added: bool  # the project was not watched before
    watching: bool  # the owner follows its changes (false: indexed once by a passing process)
    indexed: bool  # the notes are in the record (false: still being read after `wait`)
    notes: list[NoteFile] = []
    refused: list[RefusedNote] = []  # links not followed: nothing outside the folder is read
    warnings: list[NoteWarning] = []  # what of its notes could not be read as meant


class UnwatchParams(Wire):
    """memory/unwatch: stop watching a project's notes (its memories stay)."""

    project: Project | None = None


class UnwatchResult(Wire):
    project: str
    removed: bool  # false: it was not watched


class WatchedParams(Wire):
    """memory/watched: every project the owner watches."""


class WatchedProject(Wire):
    project: str
    via: str  # the front that named it first
    since: str
    exists: bool  # its folder is there
    notes: int  # note files indexed


class WatchedResult(Wire):
    projects: list[WatchedProject]
