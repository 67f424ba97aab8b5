"""A memory written into a note as one list item, under the heading of its type. Pure: the
note's text in, the new text and the unit the item became out (found by parsing the new text
with the same parser that indexes notes, so the watcher reads it back as the same memory)."""

from __future__ import annotations

import re
from typing import NamedTuple

from memls.notes.parse import Unit, parse, split_lines
from memls.protocol import MemoryType

HEADINGS: dict[str, str] = {
    "decision": "Decisions",
    "convention": "Conventions",
    "constraint": "Constraints",
    "preference": "Preferences",
    "lesson": "Lessons",
    "fact": "Facts",
    "note": "Notes",
}
"""The heading a memory of each type goes under; the note parser reads the type back from it
(`infer_type`), so a teammate's index gives the item the same type."""

PREAMBLE = (
    "<!-- Project memory shared through the repository: each list item is one memory "
    "(memls promote). Edit freely; memls re-reads this file. -->"
)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_ITEM_START = re.compile(r"^[ \t]*([-*+]|\d{1,9}[.)])([ \t]+|$)")


class Placed(NamedTuple):
    """The unit the memory became in `note` (the whole new text of the note)."""

    unit: Unit
    note: str
    changed: bool  # False: the note held the memory already; `note` is the text as it was


def _item(content: str) -> list[str]:
    lines = [line.rstrip() for line in content.strip().splitlines()]
    return ["- " + lines[0]] + [("  " + line) if line else "" for line in lines[1:]]


def _find(units: list[Unit], key: str) -> Unit | None:
    return next((u for u in units if u.key == key), None)


def place(note: str | None, content: str, memory_type: MemoryType, key: str) -> Placed:
    """`note` (None: no such file yet) with `content` added as a list item under the heading
    of `memory_type`; `key` is the memory's canonical hash, which the item must read back as.
    ValueError when it would not (the note is then not to be written)."""
    units = parse(note) if note else []
    found = _find(units, key)
    if found is not None and note is not None:
        return Placed(found, note, changed=False)
    heading = HEADINGS.get(memory_type, HEADINGS["note"])
    item = _item(content)
    lines = split_lines(note) if note else []
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        new = [PREAMBLE, "", f"## {heading}", "", *item]
    else:
        at = _section_end(lines, heading)
        if at is None:
            new = [*lines, "", f"## {heading}", "", *item]
        else:
            last = lines[at - 1]
            gap = [] if _ITEM_START.match(last) or last.startswith("  ") else [""]
            if _HEADING.match(last):
                gap = [""]
            new = [*lines[:at], *gap, *item, *lines[at:]]
    text = "\n".join(new) + "\n"
    placed = _find(parse(text), key)
    if placed is None:
        raise ValueError("its text does not read back as one list item of the same memory")
    return Placed(placed, text, changed=True)


def _section_end(lines: list[str], heading: str) -> int | None:
    """The index after the last non-blank line of the section under `## heading` (any level,
    same words, case ignored), or None when the note has no such heading."""
    start = level = None
    for i, line in enumerate(lines):
        m = _HEADING.match(line)
        if m is None:
            continue
        if start is None:
            if m.group(2).strip().casefold() == heading.casefold():
                start, level = i, len(m.group(1))
        elif level is not None and len(m.group(1)) <= level:
            return _last_filled(lines, start, i)
    return None if start is None else _last_filled(lines, start, len(lines))


def _last_filled(lines: list[str], start: int, end: int) -> int:
    i = end
    while i > start + 1 and not lines[i - 1].strip():
        i -= 1
    return i
