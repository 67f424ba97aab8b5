"""`memls check`'s report: every finding on a project's notes (a secret in a note line, two note
lines that contradict each other, a memory whose cited code changed or went), as `--json`
prints it. Lines are 1-based and inclusive, columns 1-based with the end exclusive (as SARIF
counts them); a path is relative to the project folder (POSIX), absolute when the file is
outside it. No finding carries a secret's value."""

from __future__ import annotations

from typing import Literal

from memls.protocol.base import Wire
from memls.protocol.citations import CitationStatus
from memls.protocol.conflicts import Signal

FindingKind = Literal["secret", "contradiction", "stale"]
FINDING_KINDS: tuple[FindingKind, ...] = ("secret", "contradiction", "stale")
FindingLevel = Literal["error", "warning"]


class FileLines(Wire):
    """A span of lines of a file."""

    path: str
    line: int
    end_line: int


class NoteStatement(FileLines, kw_only=True):
    """One side of a contradiction: a note line (or paragraph), its text and its memory."""

    text: str
    memory: str


class CitedCode(FileLines, kw_only=True):
    """Where a citation stands now (the cited file's path and lines)."""

    symbol: str | None = None


class _Finding(Wire, tag_field="kind"):
    """Where the finding is reported (`path`, `line`, `endLine`), how bad it is and what it
    says in one line."""

    level: FindingLevel
    path: str
    line: int
    end_line: int
    message: str


class SecretFinding(_Finding, tag="secret", kw_only=True):
    """A secret in a note line: memls indexed the line redacted; the file still holds it."""

    secret_kind: str  # what kind of secret (a rule's name), never its value
    column: int
    end_column: int


class ContradictionFinding(_Finding, tag="contradiction", kw_only=True):
    """Two note lines that contradict each other (reported on the newer one)."""

    newer: NoteStatement
    older: NoteStatement
    signals: list[Signal]
    confidence: float


class StaleFinding(_Finding, tag="stale", kw_only=True):
    """A memory whose cited code changed or went: reported on its note line when it comes
    from one of the project's notes, else on the cited code."""

    memory: str
    text: str
    state: Literal["changed", "missing"]
    cited: CitedCode
    diff: str | None = None


Finding = SecretFinding | ContradictionFinding | StaleFinding


class FindingCounts(Wire):
    secret: int = 0
    contradiction: int = 0
    stale: int = 0


class CheckReport(Wire):
    """What `memls check --json` prints: the notes read, every finding (sorted by path and
    line), their counts, and every citation of the project with its state (`memory/check`'s
    answer: fresh and moved ones are not findings)."""

    project: str
    notes: list[str]
    findings: list[Finding]
    counts: FindingCounts
    citations: list[CitationStatus]
    changed: list[str] = []  # memories whose citations' states changed in this check
