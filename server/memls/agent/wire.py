"""What an agent's model reads: lean shapes built from the `memls.protocol` records.

Clients such as Claude Code and Codex hand the model a tool's structured result, not its
text, so the structured result holds what a model needs and nothing else: each recalled
memory's id, type, trust, age, source and lines (and, for an agent's own memory, its
origin), the state of the code it cites, the other
sides of its open contradictions and of its supersessions, and its text. No hashes, no
internal timestamps; a field at its default is left out. `explain` (how the score was made)
only when the call asks for it.

- `RecallResult`: the `recall` tool's output schema.
- `RememberParams` / `RememberResult`: `memory/store` plus `check` (wait for the statement's
  contradiction check) and what it found (`contradicts`), the stored memory shown lean too.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from memls import protocol


class Lean(protocol.Wire, kw_only=True, omit_defaults=True):
    """A shape for the model: fields at their default are left out."""


class Cited(Lean, kw_only=True):
    """A place of code the memory cites, and whether it still says what it said."""

    path: str
    lines: str | None = None  # "10-14" (1-based); none: the whole file
    symbol: str | None = None
    state: str  # fresh, moved, changed or missing
    was: str | None = None  # the path it was cited at, when the file moved
    diff: str | None = None  # what changed, capped


class Side(Lean, kw_only=True):
    """The other statement of an open contradiction, verbatim, with where it stands."""

    id: str
    text: str
    source: str | None = None
    origin: str | None = None  # whose own memory it is, when an agent's ("Codex memories")
    trust: protocol.Trust
    newer: bool  # the other statement was recorded later than this one
    stands: bool = False  # the other statement is the one that holds now
    confidence: float


class Recalled(Lean, kw_only=True):
    id: str
    type: protocol.MemoryType
    trust: protocol.Trust
    age: str  # today, 3d, 5w, 8mo, 2y
    source: str | None = None  # path:line, relative to the project
    #: whose own memory it is, when an agent keeps it outside the project ("Claude Code auto
    #: memory"): what the agent told itself, not the project's
    origin: str | None = None
    text: str
    score: float
    stale: bool = False  # the code it cites changed or is gone: check it first
    valid_until: str | None = None
    cites: list[Cited] = []
    contested: list[Side] = []  # its open contradictions
    supersedes: list[str] = []
    superseded_by: list[str] = []
    explain: protocol.Explain | None = None  # only when the call asked


class RecallResult(Lean, kw_only=True):
    kind: Literal["recalled_project_memory"] = "recalled_project_memory"
    notice: str
    project: str
    results: list[Recalled]
    degraded: list[str] = []


class RememberParams(protocol.StoreParams, kw_only=True):
    """`memory/store`'s params, and whether to wait for the statement's contradiction check."""

    check: bool = True


class Stored(Lean, kw_only=True):
    id: str
    type: protocol.MemoryType
    trust: protocol.Trust
    text: str
    cites: list[Cited] = []


class RememberResult(Lean, kw_only=True):
    project: str
    id: str
    created: bool  # false: the same (or a near-same) statement was there already
    duplicate: bool | Literal["near"] = False  # true: the same text; "near": a restatement
    memory: Stored
    checked: bool = False  # the contradiction check finished within the wait
    contradicts: list[Side] = []


def cited(m: protocol.Memory) -> list[Cited]:
    """The memory's citations as the model reads them (1-based lines; none: the whole file)."""
    out = []
    for c in m.citations:
        lines = None
        if c.kind != "file":
            same = c.start_line == c.end_line
            lines = f"{c.start_line}" if same else f"{c.start_line}-{c.end_line}"
        out.append(
            Cited(
                path=c.path,
                lines=lines,
                symbol=c.symbol,
                state=c.state,
                was=c.cited_path,
                diff=c.diff,
            )
        )
    return out


def store_params(params: RememberParams) -> protocol.StoreParams:
    fields = msgspec.structs.asdict(params)
    fields.pop("check")
    return protocol.StoreParams(**fields)
