"""A note read as a document: which section a unit sits in, whether it states a claim, what
the note says about its own standing (status, supersession, amendment) and whether it records
a change of its own. Pure: text in, facts out; no I/O, no clock, no similarity.

Sections. A unit's section is the kind of the nearest heading above it that names one
(`section_of`): ADR structure (`status`, `context`, `options`, `decision`, `consequences`),
a change the note records (`update`: "Update", "Amendment", "Revision", "Addendum",
"Changelog", a dated heading), `references` ("Links", "References", "See also") or
"" (any other heading, or none: an agent file's rules).

Claims. A unit states a claim about the project unless it is markup or not the note's own
word (`is_claim`): a fenced code block or a table on its own; a list of links (no more than
two words outside links, code spans and URLs); a label line ("Date: 2020-02-09", "Status:
Accepted"); fewer than three words; or a unit in the `status`, `context`, `options` or
`references` section (options considered and the context are not what was decided).

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
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, cast

import msgspec

from memls.notes.globs import NoteKind

SectionKind = Literal[
    "", "status", "context", "options", "decision", "consequences", "update", "references"
]
Status = Literal[
    "", "proposed", "accepted", "rejected", "superseded", "deprecated", "amended", "completed"
]
Relation = Literal["superseded_by", "supersedes", "amended_by", "amends", "see"]

#: Sections whose units are not claims of the note.
NOT_CLAIMS: frozenset[str] = frozenset({"status", "context", "options", "references"})
#: A context unit that reports a change of state is a claim after all: "As of November 2024,
#: we have migrated the logging service to OpenSearch", "The design of 018 proved impossible".
_REPORTED_CHANGE = re.compile(
    r"\b(?:as of|no longer|(?:is|are) now|we(?:'re| are)? now|(?:has|have) (?:now )?(?:been )?"
    r"(?:migrated|moved|replaced|switched|removed|retired|decommissioned|deprecated|dropped|"
    r"abandoned)|proved (?:impossible|unworkable|too))\b",
    re.IGNORECASE,
)

_DATE = (
    r"(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}\s+\w+\s+\d{4}"
    r"|\w+\s+\d{1,2},?\s+\d{4})"
)
_SECTION_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        (
            "update",
            r"\b(updates?|updated|amendments?|amended|revisions?|revised|addend(um|a)|"
            r"change ?log|errata|post[- ]?script)\b|^\s*" + _DATE + r"\s*$",
        ),
        ("status", r"^\s*status\b"),
        (
            "options",
            r"\b(options?|alternatives?|considered|pros and cons|trade-?offs?|"
            r"prior art|rejected approaches|approaches)\b",
        ),
        (
            "context",
            r"\b(context|background|problem|motivation|user needs|forces|"
            r"current (state|situation)|issues?)\b",
        ),
        (
            "decision",
            r"\b(decisions?|decided|proposal|proposed|what[’']?s proposed|chosen|"
            r"outcome|resolution)\b",
        ),
        ("consequences", r"\b(consequences?|implications?|impact|results?)\b"),
        ("references", r"\b(references?|links?|see also|further reading|related)\b"),
    )
)

_LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
_URL = re.compile(r"<?https?://\S+>?")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_LABEL_LINE = re.compile(
    r"^[*_\s]*(date|status|authors?|deciders?|owners?|reviewers?|technical story|tags?|"
    r"created|updated|last updated|version)[*_\s]*:",
    re.IGNORECASE,
)


class Ref(msgspec.Struct, frozen=True, kw_only=True):
    """A reference to another record: its number ("ADR-7", "0007", "[036. x]") and/or the link
    target as written ("0007-x.md"). `partial`: the note says only some aspects change."""

    relation: Relation
    number: int | None = None
    target: str | None = None
    label: str = ""
    partial: bool = False
    line: int = 0


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


# ---------------------------------------------------------------- sections and claims


def section_kind(heading: str) -> SectionKind:
    """The kind one heading names, or ""."""
    title = _LINK.sub(r"\1", heading).strip(" #*_:")
    for kind, rule in _SECTION_RULES:
        if rule.search(title):
            return kind  # type: ignore[return-value]
    return ""


def section_of(headings: Sequence[str], *, titled: bool = False) -> SectionKind:
    """The section of a unit under this heading path (outermost first): the nearest heading
    that names a kind. "Decision > Option: Raw txdata" is `options`. `titled`: the first
    heading is the note's title and names no section ("# Configuration Updates")."""
    for heading in reversed(headings[1:] if titled else headings):
        if kind := section_kind(heading):
            return kind
    return ""


def prose_words(text: str) -> list[str]:
    """Words outside links, URLs and code spans."""
    bare = _CODE_SPAN.sub(" ", _URL.sub(" ", _LINK.sub(" ", text)))
    return _WORD.findall(bare)


def is_claim(text: str, *, block: str = "para", section: str = "") -> bool:
    """Does this unit state something about the project (see the module docstring)?
    `block` is the unit's block kind: "para", "item", "table" or "code"."""
    if block in ("table", "code"):
        return False
    if section in NOT_CLAIMS and not (section == "context" and _REPORTED_CHANGE.search(text)):
        return False
    if re.fullmatch(r"\s*~~.*~~\s*", text, re.DOTALL):
        return False  # struck through: the note retracted it
    first = text.strip().splitlines()[0] if text.strip() else ""
    if _LABEL_LINE.match(first) and len(prose_words(text)) <= 12:
        return False
    if _LINK.search(text) or _URL.search(text):
        if len(prose_words(text)) <= 2:
            return False  # a link list entry
    return len(prose_words(text)) >= 3


# ---------------------------------------------------------------- standing


_NUMBER_IN_NAME = re.compile(r"(?:^|[^0-9])(\d{1,5})(?=[-_. ]|$)")
_ADR_NUMBER = re.compile(r"\b(?:ADR|RFC|decision|record)[-_ #]?0*(\d{1,5})\b", re.IGNORECASE)
_BARE_NUMBER = re.compile(r"^[\s:,(\[]*(?:no\.?\s*|number\s+|#)?0*(\d{1,5})\b")
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
_RELATIONS: tuple[tuple[Relation, re.Pattern[str]], ...] = tuple(
    (cast(Relation, relation), re.compile(pattern, re.IGNORECASE))
    for relation, pattern in (
        (
            "superseded_by",
            r"\b(?:superseded|replaced|obsoleted|deprecated)\s+(?:in favou?r of|by)\b",
        ),
        ("supersedes", r"\b(?:supersedes|supercedes|replaces|obsoletes)\b"),
        ("amended_by", r"\b(?:amended|modified|extended|updated)\s+by\b"),
        ("amends", r"\b(?:amends|modifies|extends)\b"),
        ("see", r"\bsee\b"),
    )
)
_PARTIAL = re.compile(
    r"^\s*(?:some|parts?|aspects?|portions?|sections?|part of)\b[^.;\n]{0,40}?"
    r"\bof\b",
    re.IGNORECASE,
)


def note_number(path: str) -> int | None:
    """The record number in a file name: "0007-x.md" -> 7, "adr-015-x.md" -> 15,
    "docs/adr/018-Dedicated.md" -> 18; None when the name carries none."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    match = _NUMBER_IN_NAME.search(name)
    return int(match.group(1)) if match else None


def _refs_after(relation: Relation, rest: str, line: int) -> list[Ref]:
    """The references that directly follow a relation phrase: links and numbers, joined by
    "and", ",", "or"; `rest` is the text after the phrase, up to the end of its sentence."""
    partial = bool(_PARTIAL.match(rest))
    if partial:
        rest = _PARTIAL.sub("", rest, count=1)
    refs: list[Ref] = []
    pos = 0
    while True:
        chunk = rest[pos:]
        lead = re.match(r"^[\s:,(]*(?:(?:and|or|&)\s+)?(?:the\s+)?", chunk, re.IGNORECASE)
        start = lead.end() if lead else 0
        link = _LINK.match(chunk, start)
        if link:
            label, target = link.group(1), link.group(2)
            number = _number_of(label)
            if number is None:
                number = note_number(target) if target and not target.startswith("#") else None
            refs.append(
                Ref(
                    relation=relation,
                    number=number,
                    target=target or None,
                    label=label.strip(),
                    partial=partial,
                    line=line,
                )
            )
            pos += link.end()
            continue
        adr = _ADR_NUMBER.match(chunk, start)
        if adr:
            refs.append(
                Ref(
                    relation=relation,
                    number=int(adr.group(1)),
                    label=adr.group(0),
                    partial=partial,
                    line=line,
                )
            )
            pos += adr.end()
            continue
        bare = _BARE_NUMBER.match(chunk[start:])
        if bare:
            refs.append(
                Ref(
                    relation=relation,
                    number=int(bare.group(1)),
                    label=bare.group(0).strip(" :,([#"),
                    partial=partial,
                    line=line,
                )
            )
            pos += start + bare.end()
            continue
        return refs


def _number_of(label: str) -> int | None:
    if m := _ADR_NUMBER.search(label):
        return int(m.group(1))
    if m := re.match(r"^\s*0*(\d{1,5})\b", label):
        return int(m.group(1))
    return None


_UPDATE_PARAGRAPH = re.compile(
    r"^[>*_\s]*(?:update[ds]?|amendment|amended|edit(?:ed)?|revision|revised|addendum)\b"
    r"[^:\n]{0,40}:",
    re.IGNORECASE,
)
_DATED_UPDATE = re.compile(
    r"^[>*_\s]*(?:update[ds]?|edit(?:ed)?|revised|amended)\b[^\n]{0,20}" + _DATE, re.IGNORECASE
)


def note_facts(text: str, path: str = "") -> NoteFacts:
    """A note's standing and history, from its text (and its file name for the number)."""
    from memls.notes.parse import split_lines

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
                title_number = _number_of(title)
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
            _scan_relations(line, i, found, status=True)
            continue
        if in_status and not status_text:
            status_text = re.sub(r"^[-*+>\s]+", "", line)
            in_status = False
            _scan_relations(line, i, found, status=True)
            continue
        if _UPDATE_PARAGRAPH.match(line) or _DATED_UPDATE.match(line):
            change_lines.append(i)
        _scan_relations(line, i, found)
    status = _status_of(status_text)
    if status == "accepted" and found["superseded_by"]:
        status = "superseded"
    number = note_number(path) if path else None
    return NoteFacts(
        number=number if number is not None else title_number,
        status=status,
        status_text=_LINK.sub(r"\1", status_text).strip(),
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
    plain = _LINK.sub(r"\1", status_text)
    for status, rule in _STATUS_WORDS:
        if rule.search(plain):
            return status
    return ""


def _sentence(text: str) -> str:
    """`text` up to the end of its sentence; a full stop inside a link label or target
    ("[036. Multi-cluster](036-x.md)") does not end it."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth = max(0, depth - 1)
        elif ch in ".;!?" and depth == 0 and (i + 1 == len(text) or text[i + 1].isspace()):
            return text[:i]
    return text


def _scan_relations(
    line: str, i: int, found: dict[str, list[Ref]], *, status: bool = False
) -> None:
    for relation, rule in _RELATIONS:
        if relation == "see" and not status:
            continue  # "see X" is a reference only on the status line ("Rejected (see 019)")
        for match in rule.finditer(line):
            rest = _sentence(line[match.end() :])
            if relation == "supersedes" and re.search(
                r"superseded|replaced", line[: match.start()], re.IGNORECASE
            ):
                continue
            for ref in _refs_after(relation, rest, i):
                if ref not in found[relation]:
                    found[relation].append(ref)


# ---------------------------------------------------------------- resolving and comparing


def resolve_ref(ref: Ref, from_path: str, paths: Iterable[str]) -> str | None:
    """The path among `paths` (the project's note files, '/'-separated, relative to one root)
    that `ref` names: by link target resolved against `from_path`'s folder, else by record
    number among the files of the same folder, else by number anywhere (when unique). None
    when nothing matches or the number is ambiguous."""
    paths = list(paths)
    folder = from_path.replace("\\", "/").rsplit("/", 1)[0] if "/" in from_path else ""
    if ref.target and not re.match(r"^[a-z]+://", ref.target):
        target = ref.target.split("#", 1)[0]
        joined = _normalise(
            f"{folder}/{target}" if folder and not target.startswith("/") else target.lstrip("/")
        )
        for path in paths:
            if _normalise(path) == joined:
                return path
    if ref.number is None:
        return None
    same = [
        p
        for p in paths
        if p.rsplit("/", 1)[0] == folder and note_number(p) == ref.number and p != from_path
    ]
    if len(same) == 1:
        return same[0]
    anywhere = [p for p in paths if note_number(p) == ref.number and p != from_path]
    return anywhere[0] if len(anywhere) == 1 else None


def _normalise(path: str) -> str:
    parts: list[str] = []
    for part in path.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


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
