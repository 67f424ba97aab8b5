"""`memls check --sarif`: the report as a SARIF 2.1.0 log (OASIS), the format code-scanning
services read (GitHub's upload-sarif among them). One run; the driver `memls` with one rule a
kind of finding; each result on its file and lines, relative to the project folder
(`uriBaseId` PROJECTROOT), the other side of a contradiction and the code a stale memory cites
as related locations. Pure: a report in, plain data out."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from memls import __version__, protocol
from memls.cli.findings import kind_of

SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
BASE = "PROJECTROOT"

RULES: dict[str, dict[str, Any]] = {
    "secret": {
        "name": "SecretInNote",
        "short": "A secret in an agent's note",
        "full": "A note line (AGENTS.md, CLAUDE.md, a rules file, a decision record) holds a "
        "credential: every agent that reads the note reads it, and the repository keeps it.",
        "help": "Move the secret to your secret store, rotate it, and name it in the note by "
        "where it lives (an environment variable, a vault path). memls indexes the line with "
        "the secret redacted; the file still holds it.",
        "tags": ["security", "secret"],
        "severity": "8.0",
    },
    "contradiction": {
        "name": "ContradictingNotes",
        "short": "Two note lines contradict each other",
        "full": "Two lines of the project's notes give an agent opposite instructions, "
        "different values or different choices for the same thing.",
        "help": "Keep the line that holds and edit or delete the other (or say which replaces "
        "which). In an editor, memls shows both lines with Supersede and Not a contradiction.",
        "tags": ["maintainability", "agent-instructions"],
    },
    "stale": {
        "name": "StaleCitation",
        "short": "A memory's cited code changed or is gone",
        "full": "A memory cites code (a file, lines, a symbol) whose text changed or went "
        "since the memory was written: what it says may no longer hold.",
        "help": "Check the memory against the code: `memls reconfirm ID` when it still holds, "
        "a new statement that supersedes it when it does not, or `memls forget ID --reason "
        "source_changed`.",
        "tags": ["maintainability", "citation"],
    },
}
LEVELS = {"secret": "error", "contradiction": "warning", "stale": "warning"}


def _rule(kind: str) -> dict[str, Any]:
    r = RULES[kind]
    properties: dict[str, Any] = {"tags": r["tags"]}
    if "severity" in r:
        properties["security-severity"] = r["severity"]
    return {
        "id": kind,
        "name": r["name"],
        "shortDescription": {"text": r["short"]},
        "fullDescription": {"text": r["full"]},
        "help": {"text": r["help"], "markdown": r["help"]},
        "defaultConfiguration": {"level": LEVELS[kind]},
        "properties": properties,
    }


def _artifact(path: str) -> dict[str, Any]:
    """A project-relative path against PROJECTROOT; a path outside the folder as a file URI."""
    if PurePosixPath(path).is_absolute():
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path, safe="/"), "uriBaseId": BASE}


def _location(
    path: str, line: int, end_line: int, columns: tuple[int, int] | None = None
) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": line, "endLine": max(line, end_line)}
    if columns is not None:
        region["startColumn"], region["endColumn"] = columns
    return {"physicalLocation": {"artifactLocation": _artifact(path), "region": region}}


def _result(f: protocol.Finding, index: int) -> dict[str, Any]:
    kind = kind_of(f)
    columns = None
    related: list[dict[str, Any]] = []
    properties: dict[str, Any] = {}
    if isinstance(f, protocol.SecretFinding):
        columns = (f.column, f.end_column)
        properties = {"secretKind": f.secret_kind}
    elif isinstance(f, protocol.ContradictionFinding):
        other = f.older
        related.append(
            {
                "id": 1,
                **_location(other.path, other.line, other.end_line),
                "message": {"text": f"the contradicting line: “{other.text}”"},
            }
        )
        properties = {
            "newer": protocol.to_wire(f.newer),
            "older": protocol.to_wire(f.older),
            "signals": protocol.to_wire(f.signals),
            "confidence": f.confidence,
        }
    elif isinstance(f, protocol.StaleFinding):
        c = f.cited
        if (c.path, c.line) != (f.path, f.line):
            related.append(
                {
                    "id": 1,
                    **_location(c.path, c.line, c.end_line),
                    "message": {"text": f"the cited code ({f.state})"},
                }
            )
        properties = {"memory": f.memory, "state": f.state}
        if f.diff:
            properties["diff"] = f.diff
    result: dict[str, Any] = {
        "ruleId": kind,
        "ruleIndex": index,
        "level": f.level,
        "message": {"text": f.message},
        "locations": [_location(f.path, f.line, f.end_line, columns)],
    }
    if related:
        result["relatedLocations"] = related
    if properties:
        result["properties"] = properties
    return result


def log(r: protocol.CheckReport) -> dict[str, Any]:
    """The SARIF 2.1.0 log of one check."""
    kinds = list(protocol.FINDING_KINDS)
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "memls",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": [_rule(kind) for kind in kinds],
                    }
                },
                "originalUriBaseIds": {BASE: {"uri": Path(r.project).as_uri().rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": [_result(f, kinds.index(kind_of(f))) for f in r.findings],
            }
        ],
    }
