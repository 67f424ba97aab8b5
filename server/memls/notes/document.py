"""A note read as a document: what the note says about its own standing (status, supersession,
amendment) and whether it records a change of its own. Pure: text in, facts out; no I/O, no
clock, no similarity. Which section a unit sits in and whether it states a claim are
`memls.notes.sections`; references between records and their resolution are
`memls.notes.references`.

Standing (`note_facts`). The status line ("## Status" then "Accepted", "Status: Rejected (see
[019](019-x.md))", "**Status**: Superseded by ADR-7") gives `status`; a supersession or
amendment phrase anywhere in the note's prose, FOLLOWED BY A REFERENCE, gives typed `Ref`s:
"Superseded by [036. Multi-cluster](036-multi-cluster.md)", "Supersedes 0003", "Amended by 12",
"this ADR supersedes some aspects of [ADR-15](adr-015-x.md)" (partial). A phrase with no
reference ("may be marked as superseded with a reference to its replacement") gives none:
references are resolved by link target or number (`resolve_ref`), never by similarity.
A rejected status with "see [019](...)" names 019 in `see`.

Changes (`records_change`, `comparable`). A note records a change when it has an `update`
section or a dated update paragraph ("Update 2021-03-04: ...", "**Edit (12/3/21)**: ..."). Two
units of one note are compared only across such a change: one before it, one inside it —
except in an instruction file (`kind`, from `globs.note_kind`: AGENTS.md, CLAUDE.md, rule
files), where every line is a standing instruction and edits pile up over years: any two of its
claims are compared, as two files would be.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal, cast

import msgspec

from memls.notes.references import Ref, note_number, number_of, scan_relations
from memls.notes.scan import split_lines
from memls.notes.sections import DATE, LINK, section_kind
from memls.protocol.base import NoteKind

Status = Literal[
    "", "proposed", "accepted", "rejected", "superseded", "deprecated", "amended", "completed"
]


class NoteFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What a note says about its own standing and history."""

    number: int | None = None  # from the file name ("0007-x.md", "adr-015-x.md") or the title
    status: Status = ""
    status_text: str = ""
    superseded_by: tuple[Ref, ...] = ()
    supersedes: tuple[Ref, ...] = ()
    amended_by: tuple[Ref, ...] = ()
    amends: tuple[Ref, ...] = ()
    see: tuple[Ref, ...] = ()
    records_change: bool = False
    change_lines: tuple[int, ...] = ()  # 0-based first line of each recorded change
    #: what kind of document the note is, by its path (`globs.note_kind`; the engine sets it:
    #: the text alone does not say)
    kind: NoteKind = ""

    @property
    def current(self) -> bool:
        """May this note be the current side of a conflict?"""
        return (
            self.status not in ("rejected", "superseded", "deprecated") and not self.superseded_by
        )


# ---------------------------------------------------------------- standing

_STATUS_WORDS: tuple[tuple[Status, re.Pattern[str]], ...] = tuple(
    (cast(Status, status), re.compile(pattern, re.IGNORECASE))
    for status, pattern in (
        ("superseded", r"\bsuperseded\b|\breplaced by\b"),
        ("deprecated", r"\bdeprecated\b|\bobsolete\b|\bretired\b"),
        ("rejected", r"\brejected\b|\bdeclined\b|\bwithdrawn\b|\babandoned\b"),
        ("amended", r"\bamended\b"),
        ("accepted", r"\baccepted\b|\bapproved\b|\badopted\b|\bagreed\b|\bdecided\b"),
        ("completed", r"\bcompleted?\b|\bdone\b|\bimplemented\b"),
        (
            "proposed",
            r"\bproposed\b|\bdraft\b|\bincomplete\b|\boutstanding\b|\bopen\b|"
            r"\bunder (discussion|review)\b",
        ),
    )
)

_UPDATE_PARAGRAPH = re.compile(
    r"^[>*_\s]*(?:update[ds]?|amendment|amended|edit(?:ed)?|revision|revised|addendum)\b"
    r"[^:\n]{0,40}:",
    re.IGNORECASE,
)
DATED_UPDATE = re.compile(
    r"^[>*_\s]*(?:update[ds]?|edit(?:ed)?|revised|amended)\b[^\n]{0,20}" + DATE, re.IGNORECASE
)


def note_facts(text: str, path: str = "") -> NoteFacts:
    """A note's standing and history, from its text (and its file name for the number)."""

    lines = split_lines(text)
    found: dict[str, list[Ref]] = {
        r: [] for r in ("superseded_by", "supersedes", "amended_by", "amends", "see")
    }
    status_text = ""
    title_number = None
    headings: list[tuple[int, str]] = []
    change_lines: list[int] = []
    in_fence = False
    in_status = False
    title_line = _first_heading(lines)
    for i, raw in enumerate(lines):
        line = raw.strip()
        if re.match(r"^(`{3,}|~{3,})", line):
            in_fence = not in_fence
            continue
        if in_fence or not line:
            continue
        heading = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if heading:
            level, title = len(heading.group(1)), heading.group(2)
            while headings and headings[-1][0] >= level:
                headings.pop()
            headings.append((level, title))
            if level == 1 and title_number is None:
                title_number = number_of(title)
            kind = section_kind(title)
            if i == title_line and level == 1 and kind != "status":
                kind = ""  # the note's title ("Configuration Updates") names no section
            in_status = kind == "status" and not status_text
            if kind == "update":
                change_lines.append(i)
            if kind == "status" and (
                rest := re.sub(r"^\s*status\b[*_\s:]*", "", title, flags=re.IGNORECASE)
            ):
                status_text = rest
                in_status = False
            continue
        label = re.match(r"^[*_\s]*status[*_\s]*:[*_\s]*(.*)$", line, re.IGNORECASE)
        if label and not status_text:
            if label.group(1).strip():
                status_text = label.group(1).strip()
            else:
                in_status = True
            scan_relations(line, i, found, status=True)
            continue
        if in_status and not status_text:
            status_text = re.sub(r"^[-*+>\s]+", "", line)
            in_status = False
            scan_relations(line, i, found, status=True)
            continue
        if _UPDATE_PARAGRAPH.match(line) or DATED_UPDATE.match(line):
            change_lines.append(i)
        scan_relations(line, i, found)
    status = _status_of(status_text)
    if status == "accepted" and found["superseded_by"]:
        status = "superseded"
    number = note_number(path) if path else None
    return NoteFacts(
        number=number if number is not None else title_number,
        status=status,
        status_text=LINK.sub(r"\1", status_text).strip(),
        superseded_by=tuple(found["superseded_by"]),
        supersedes=tuple(found["supersedes"]),
        amended_by=tuple(found["amended_by"]),
        amends=tuple(found["amends"]),
        see=tuple(found["see"]) if status in ("rejected", "superseded", "deprecated") else (),
        records_change=bool(change_lines),
        change_lines=tuple(sorted(set(change_lines))),
    )


def _first_heading(lines: list[str]) -> int:
    for i, raw in enumerate(lines):
        if re.match(r"^#{1,6}\s", raw.strip()):
            return i
    return -1


def _status_of(status_text: str) -> Status:
    plain = LINK.sub(r"\1", status_text)
    for status, rule in _STATUS_WORDS:
        if rule.search(plain):
            return status
    return ""


def comparable(a: tuple[int, str], b: tuple[int, str], facts: NoteFacts) -> bool:
    """May two units of ONE note, each given as (start_line, section), be checked against each
    other? In an instruction file, always; in any other note only across a change the note
    records: one unit inside it, the other before it."""
    if facts.kind == "instructions":
        return True
    if not facts.records_change:
        return False
    first = min(facts.change_lines)
    inside_a = a[1] == "update" or (a[0] >= first and a[1] == "")
    inside_b = b[1] == "update" or (b[0] >= first and b[1] == "")
    return inside_a != inside_b


def by_path(facts: Mapping[str, NoteFacts]) -> dict[int, list[str]]:
    """Note paths by record number (a helper for resolving many references at once)."""
    out: dict[int, list[str]] = {}
    for path, fact in facts.items():
        if fact.number is not None:
            out.setdefault(fact.number, []).append(path)
    return out
