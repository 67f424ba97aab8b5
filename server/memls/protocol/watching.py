"""The projects whose notes the owning daemon watches: named by any front, kept across restarts."""

from __future__ import annotations

from typing import Annotated

import msgspec

from memls.protocol.base import AgentOrigin, NoteKind, Project, Wire
from memls.protocol.requests import NoteSecret


class WatchParams(Wire):
    """memory/watch: the owner watches this project's notes (AGENTS.md, CLAUDE.md, `.memls/`,
    decision records, rules files) from now on, across restarts. The project is a folder (its
    absolute path). Answered once the project's notes are in the record, or after `wait`
    seconds, whichever comes first (`indexed` says which)."""

    project: Project | None = None
    wait: Annotated[float, msgspec.Meta(ge=0, le=60)] = 10.0


class NoteFile(Wire):
    """One note file of a watched project, as the owner last indexed it."""

    uri: str
    kind: NoteKind = ""
    secrets: list[NoteSecret] = []  # its units are indexed with these redacted
    origin: AgentOrigin | None = None  # an agent's own memory of the project (outside its folder)


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
