"""References between records: a note's number ("0007-x.md", "ADR-7"), the references that
follow a supersession or amendment phrase ("Superseded by [036. x](036-x.md)", "Supersedes
0003", "this ADR supersedes some aspects of [ADR-15](adr-015-x.md)": partial), and the path a
reference names among the project's notes (by link target or number, never by similarity).
Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal, cast

import msgspec

from memls.notes.sections import LINK

Relation = Literal["superseded_by", "supersedes", "amended_by", "amends", "see"]


class Ref(msgspec.Struct, frozen=True, kw_only=True):
    """A reference to another record: its number ("ADR-7", "0007", "[036. x]") and/or the link
    target as written ("0007-x.md"). `partial`: the note says only some aspects change."""

    relation: Relation
    number: int | None = None
    target: str | None = None
    label: str = ""
    partial: bool = False
    line: int = 0


_NUMBER_IN_NAME = re.compile(r"(?:^|[^0-9])(\d{1,5})(?=[-_. ]|$)")
_ADR_NUMBER = re.compile(r"\b(?:ADR|RFC|decision|record)[-_ #]?0*(\d{1,5})\b", re.IGNORECASE)
_BARE_NUMBER = re.compile(r"^[\s:,(\[]*(?:no\.?\s*|number\s+|#)?0*(\d{1,5})\b")
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
        link = LINK.match(chunk, start)
        if link:
            label, target = link.group(1), link.group(2)
            number = number_of(label)
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


def number_of(label: str) -> int | None:
    if m := _ADR_NUMBER.search(label):
        return int(m.group(1))
    if m := re.match(r"^\s*0*(\d{1,5})\b", label):
        return int(m.group(1))
    return None


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


def scan_relations(line: str, i: int, found: dict[str, list[Ref]], *, status: bool = False) -> None:
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
