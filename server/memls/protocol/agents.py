"""What an agent gets without asking (the briefing) and what it shares with the team (promote)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from memls.protocol.base import Content, MemoryId, Project, Wire
from memls.protocol.records import Memory
from memls.protocol.requests import Depth

Budget = Annotated[int, msgspec.Meta(ge=50, le=32_000)]
SessionId = Annotated[str, msgspec.Meta(pattern=r"\S", max_length=200)]
PathText = Annotated[str, msgspec.Meta(max_length=4096)]
NotePath = Annotated[str, msgspec.Meta(pattern=r"\S", max_length=1024)]
#: "contradicted": an agent's own memory (Claude Code's auto memory, ...) that a note or
#: memory of the project contradicts, shown with the statement that stands
Section = Literal["contradicted", "standing", "relevant"]


class ContextParams(Wire):
    """memory/context: the briefing of a project, within a token budget.

    `prompt` and `paths` say what the agent is working on (both optional: without them the
    briefing is the standing conventions, decisions and constraints alone). Within one
    `session`, a memory already given is not given again; `reset` forgets what the session
    was given (the agent's context was cleared or compacted)."""

    project: Project | None = None
    prompt: Content | None = None
    paths: Annotated[list[PathText], msgspec.Meta(max_length=100)] = []
    budget: Budget = 800
    session: SessionId | None = None
    reset: bool = False
    standing: bool = True  # false: only what is relevant to the prompt and paths
    k: Annotated[int, msgspec.Meta(ge=1, le=50)] = 8  # relevant memories looked at, at most
    depth: Depth = "interactive"  # the query's re-ranking depth (docs/retrieval.md)


class ContextEntry(Wire):
    """One memory of the briefing, as shown."""

    section: Section
    memory: Memory
    tokens: int  # of its Markdown lines
    stale: bool = False
    score: float | None = None  # the query's score (relevant entries)


class ContextResult(Wire):
    project: str
    markdown: str  # empty when there is nothing new to give
    tokens: int  # of `markdown`, counted with `tokenizer`
    budget: int
    tokenizer: str
    entries: list[ContextEntry] = []
    dropped: int = 0  # entries left out to stay within the budget
    repeated: int = 0  # entries left out because the session was given them already
    session: str | None = None
    degraded: list[str] = []


class PromoteParams(Wire):
    """memory/promote: write a memory into a note of the project (a list item under the
    heading of its type), so it travels with the repository; the memory becomes that unit."""

    id: MemoryId
    project: Project | None = None
    to: NotePath = ".memls/memory.md"  # relative to the project's folder


class PromoteResult(Wire):
    project: str
    id: str
    path: str  # the note, absolute
    uri: str  # the note's file:// URI, as the editor's note watcher names it
    source_range: str  # the unit's place in the note
    created: bool  # the note did not exist before
    already: bool  # the memory was already that note's unit: nothing written
    memory: Memory
