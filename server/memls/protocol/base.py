"""The vocabularies of the wire, the base Struct, and the one typed form of a source range."""

from __future__ import annotations

import re
import typing
from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec

from memls import limits

MemoryType = Literal["decision", "convention", "preference", "fact", "lesson", "note", "constraint"]
Status = Literal["active", "superseded"]
Trust = Literal["candidate", "verified", "flagged", "rejected"]
ForgetReason = Literal[
    "user_deleted",
    "superseded",
    "ttl_expired",
    "decay",
    "dedup",
    "feedback_flagged",
    "source_removed",
    "source_changed",
]
FeedbackSignal = Literal["helpful", "unhelpful", "outdated"]
#: What kind of document a note file is (`memls.notes.conventions`): an instruction file
#: (AGENTS.md, CLAUDE.md, rule files: any two of its claims are compared), a decision record,
#: or "" (neither).
NoteKind = Literal["instructions", "record", ""]
#: Whose own memory a note file is, when an agent keeps it by itself outside the project's
#: folder (`memls.notes.agent_memory`): Claude Code's auto memory of the project, or the
#: user-wide memories of the Codex CLI and of the Gemini CLI (project `@user`).
AgentOrigin = Literal["claude-memory", "codex-memories", "gemini-memory"]
#: How each origin is named to people and to models.
ORIGIN_NAMES: dict[str, str] = {
    "claude-memory": "Claude Code auto memory",
    "codex-memories": "Codex memories",
    "gemini-memory": "Gemini CLI memory",
}
#: Another memory tool whose store a memory was imported from (`memls import --from`).
ImportSource = Literal["omega", "basic-memory", "claude-mem"]
#: How each is named to people and to models.
IMPORT_NAMES: dict[str, str] = {
    "omega": "OMEGA",
    "basic-memory": "basic-memory",
    "claude-mem": "claude-mem",
}
ReviewAction = Literal["list", "approve", "reject", "restore"]

MEMORY_TYPES: tuple[str, ...] = typing.get_args(MemoryType)
STATUSES: tuple[str, ...] = typing.get_args(Status)
TRUST_STATES: tuple[str, ...] = typing.get_args(Trust)
FORGET_REASONS: tuple[str, ...] = typing.get_args(ForgetReason)
FEEDBACK_SIGNALS: tuple[str, ...] = typing.get_args(FeedbackSignal)
REVIEW_ACTIONS: tuple[str, ...] = typing.get_args(ReviewAction)
AGENT_ORIGINS: tuple[str, ...] = typing.get_args(AgentOrigin)

Limit = Annotated[int, msgspec.Meta(ge=1, le=1000)]
Project = Annotated[
    str, msgspec.Meta(pattern=r"\S", max_length=512, description="project key: never empty")
]
MemoryId = Annotated[str, msgspec.Meta(pattern=r"\S", max_length=200)]
Content = Annotated[
    str,
    msgspec.Meta(
        max_length=4 * limits.MiB,  # the configurable bound (bytes) is applied by `parse`
        extra_json_schema={"x-memls-limit": "max_content_bytes"},
        description="free text: at most max_content_bytes of UTF-8 (default 32 KiB)",
    ),
]
"""A memory's text, a query, a note: bounded by the `[limits] max_content_bytes` setting."""
Timestamp = Annotated[str, msgspec.Meta(max_length=64, description="ISO 8601")]
Uri = Annotated[str, msgspec.Meta(max_length=4096)]
RangeText = Annotated[str, msgspec.Meta(max_length=64)]


class Wire(msgspec.Struct, kw_only=True, rename="camel", forbid_unknown_fields=True):
    """Base of every wire type."""


# ---------------------------------------------------------------- source ranges

_RANGE = re.compile(r"^\s*L?(\d+)(?::(\d+))?(?:\s*-\s*L?(\d+)(?::(\d+))?)?\s*$")


@dataclass(frozen=True, order=True)
class SourceRange:
    """Where a memory sits in its source: 0-based lines and characters, end exclusive.

    Stored and sent as text, `"start_line:start_char-end_line:end_char"` (`format`); read back
    with `SourceRange.parse`, which also takes a bare line (`"12"`, `"L12"`) or line span
    (`"3-5"`). This is the only place that knows the text form."""

    start_line: int
    start_char: int = 0
    end_line: int | None = None
    end_char: int = 0

    @classmethod
    def parse(cls, text: str | None) -> SourceRange | None:
        """The range a text names, or None when it names none."""
        match = _RANGE.match(text or "")
        if match is None:
            return None
        start_line, start_char, end_line, end_char = match.groups()
        return cls(
            int(start_line),
            int(start_char or 0),
            int(end_line) if end_line is not None else None,
            int(end_char or 0),
        )

    def format(self) -> str:
        end_line = self.start_line if self.end_line is None else self.end_line
        return f"{self.start_line}:{self.start_char}-{end_line}:{self.end_char}"
