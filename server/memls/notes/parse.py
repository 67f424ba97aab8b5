"""Markdown notes -> memory units with exact source ranges. Pure: text in, units out.

A unit is one top-level list item (with its nested items and continuation lines), one
paragraph, one table or one fenced code block that stands alone. Headings are not units; they
give each unit its heading path and help infer its memory type. The rules, in the order they
bite (a small, forgiving subset of CommonMark + GFM; see the tests for examples):

- Lines end at `\\r\\n`, `\\r` or `\\n` (the LSP rule), so CRLF files report the same line
  numbers. Ranges are 0-based; `end_line` is inclusive and is the unit's last non-blank line;
  `start_char` is the first non-blank column (the list marker for items), `end_char` is
  exclusive (the end of the last line without trailing whitespace). Columns count code points.
- YAML front matter (`---` on the first line up to the next `---` or `...` line) is skipped; with
  no closing line there is no front matter.
- Fences (``` or ~~~, closed by a run of the same character at least as long, or by the end of
  the text) are never looked into. A fence directly below a paragraph, table or list item (no
  blank line between) belongs to that unit; a fence indented inside a list item belongs to the
  item; any other fence is a unit of its own. The line after a fence starts a new unit (unless
  it is indented into the list item that owns the fence).
- An HTML comment that starts a line is skipped up to the line holding `-->` (to the end of
  the text if unclosed, as renderers do) and separates units like a blank line; comments inside
  a unit's text are removed from the text (not from inside code spans or fences).
- A list item (`-`, `*`, `+`, `1.`, `1)`, task items `- [ ]`) is a unit; its marker and task
  box are stripped. Lines indented deeper than its marker (nested items, paragraphs after a
  blank line, fences, tables) belong to it, and so do unindented lines directly below its
  text (lazy continuation). An item at the same or a smaller indent starts the next unit.
- Soft-wrapped lines are joined with one space; nested items, block-quote lines, table rows,
  code and hard breaks (two trailing spaces or `\\`) keep their own lines.
- ATX (`# x`) and setext (`x` over `===`/`---`) headings set the heading path; thematic breaks
  separate units. A table (a row with `|` over a delimiter row) is one unit until a line
  without `|`.
- Units with no text left (blank, only a comment, only markup) are dropped. A unit longer than
  MAX_UNIT_CHARS is kept as one unit whose text is cut: see `_truncate`. Units with the same key
  in one file are kept once, the first (the engine dedups by the same canonical hash anyway).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import cast

import msgspec

from memls.notes.blocks import Block
from memls.notes.imports import only_imports
from memls.notes.memory_type import infer_type
from memls.notes.scan import dedent, indent_of, line_events, split_lines
from memls.notes.sections import is_claim, section_of
from memls.protocol import MEMORY_TYPES, MemoryType
from memls.textnorm import canonical, canonical_hash

MAX_UNIT_CHARS = 8000
"""A unit's text is at most this long (the engine accepts 64 KiB; 8,000 characters is a
memory, longer is a document). The source range still covers the whole block."""

_ATX = re.compile(r"^(#{1,6})(?:[ \t]+(.*))?$")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_SETEXT = re.compile(r"^(=+|-+)[ \t]*$")
_THEMATIC = re.compile(r"^([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_ITEM = re.compile(r"^[ \t]*([-*+]|(\d{1,9})[.)])(?:[ \t]+|$)")
_TASK = re.compile(r"^\[[ xX]\](?:[ \t]+|$)")
_DELIMITER = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")

# ---------------------------------------------------------------- types


class Unit(msgspec.Struct, frozen=True, kw_only=True):
    """One memory parsed from a note file, with where it is in the original text."""

    text: str
    start_line: int
    start_char: int
    end_line: int
    end_char: int
    heading: str
    type: MemoryType
    key: str
    truncated: bool = False
    #: The kind of section the unit sits in (`memls.notes.sections.section_of`): "status",
    #: "context", "options", "decision", "consequences", "update", "references" or "".
    section: str = ""
    #: Does the unit state something about the project? False for code blocks, tables, link
    #: lists, label lines and the status/context/options/references sections.
    claim: bool = True

    @property
    def span(self) -> tuple[int, int, int, int]:
        return (self.start_line, self.start_char, self.end_line, self.end_char)


def index(units: Iterable[Unit]) -> dict[str, Unit]:
    """Units by key, the first of each key kept."""
    out: dict[str, Unit] = {}
    for unit in units:
        out.setdefault(unit.key, unit)
    return out


# ---------------------------------------------------------------- parsing


def _truncate(text: str) -> tuple[str, bool]:
    """Longer than MAX_UNIT_CHARS: cut to MAX_UNIT_CHARS - 1 characters, back to the last
    whitespace if there is one in the final tenth, and end with "…"."""
    if len(text) <= MAX_UNIT_CHARS:
        return text, False
    cut = text[: MAX_UNIT_CHARS - 1]
    space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
    if space >= MAX_UNIT_CHARS * 9 // 10:
        cut = cut[:space]
    return cut.rstrip() + "…", True


class _Parser:
    def __init__(self, lines: list[str], default_type: str) -> None:
        self.lines, self.default_type = lines, default_type
        self.headings: list[tuple[int, str]] = []
        self.cur: Block | None = None
        self.units: list[Unit] = []
        self.title: tuple[int, str] | None = None  # the note's first heading, when level 1
        self.seen_heading = False

    def run(self) -> list[Unit]:
        for event, first, last in line_events(self.lines):
            if event == "fence":
                self.fence(first, last)
            elif event == "line":
                self.line(first)
            elif self.cur is not None and self.cur.kind == "item":
                self.cur.pending_blank = True
            else:
                self.close()
        self.close()
        return [self.lead_in(u) for u in index(self.units).values()]

    def lead_in(self, unit: Unit) -> Unit:
        """A paragraph ending with ":" right before a code block introduces an example ("As a
        trivial example, instead of writing the verbose configuration data:"): what it says
        is in the code, so it is no claim of its own."""
        if not unit.claim or not unit.text.rstrip().endswith(":"):
            return unit
        for line in self.lines[unit.end_line + 1 :]:
            if line.strip():
                if re.match(r"^\s*(`{3,}|~{3,})", line):
                    return msgspec.structs.replace(unit, claim=False)
                return unit
        return unit

    # -- blocks

    def new(self, kind: str, line: int, **extra: object) -> Block:
        self.close()
        char = indent_of(self.lines[line])[1]
        self.cur = Block(kind, line, char, tuple(t for _, t in self.headings if t), **extra)  # type: ignore[arg-type]
        self.cur.titled = (
            bool(self.headings)
            and self.headings[0] == self.title
            and bool(self.title and self.title[1])
        )
        return self.cur

    def close(self) -> None:
        block, self.cur = self.cur, None
        if block is None:
            return
        text = block.render()
        if not canonical(text):
            return
        text, truncated = _truncate(text)
        section = section_of(block.headings, titled=block.titled)
        self.units.append(
            Unit(
                text=text,
                start_line=block.start_line,
                start_char=block.start_char,
                end_line=block.end_line,
                end_char=len(self.lines[block.end_line].rstrip()),
                heading=" > ".join(block.headings),
                type=cast(MemoryType, infer_type(text, block.headings, self.default_type)),
                key=canonical_hash(text),
                truncated=truncated,
                section=section,
                claim=is_claim(text, block=block.kind, section=section),
            )
        )

    def heading(self, level: int, title: str) -> None:
        self.close()
        if not self.seen_heading:
            self.seen_heading = True
            self.title = (level, title.strip()) if level == 1 else None
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, title.strip()))

    # -- events

    def fence(self, first: int, last: int) -> None:
        lines = self.lines[first : last + 1]
        end = max(i for i in range(first, last + 1) if self.lines[i].strip())
        cur = self.cur
        if cur is not None and cur.kind == "item":
            if not cur.pending_blank or indent_of(lines[0])[0] > cur.indent:
                for offset, line in enumerate(lines):
                    cur.add("code", dedent(line, cur.content), first + offset)
                cur.end_line = end
                cur.lazy_ok = cur.in_table = False
                return
        if cur is None or cur.kind == "item":
            cur = self.new("code", first)
        width = indent_of(lines[0])[0]
        for offset, line in enumerate(lines):
            cur.add("code", dedent(line, width), first + offset)
        cur.end_line = end
        self.close()

    def line(self, i: int) -> None:
        raw = self.lines[i]
        width, lead = indent_of(raw)
        body = raw[lead:].rstrip()
        cur = self.cur
        if cur is not None and cur.kind == "item" and width > cur.indent:
            self.item_line(cur, i, raw, body)
            return
        if cur is not None and cur.kind == "table":
            if "|" in body and not _ATX.match(body):
                cur.add("raw", body, i)
                return
            self.close()
            cur = None
        if width <= 3 and (m := _ATX.match(body)):
            self.heading(len(m.group(1)), _ATX_CLOSE.sub("", m.group(2) or ""))
            return
        if (
            cur is not None
            and cur.kind == "para"
            and not cur.quote
            and width <= 3
            and _SETEXT.match(body)
        ):
            title = " ".join(piece.strip() for row in cur.rows for piece in row if piece)
            self.cur = None
            self.heading(1 if body[0] == "=" else 2, title)
            return
        if width <= 3 and _THEMATIC.match(body):
            self.close()
            return
        if m := _ITEM.match(raw):
            self.item_start(cur, i, raw, m)
            return
        if self.table_starts(i, body):
            self.new("table", i).add("raw", body, i)
            return
        quote = body.startswith(">")
        if cur is not None and cur.kind == "para" and (cur.quote or not quote):
            cur.add_text(body, raw, i, quote)
        elif (
            cur is not None
            and cur.kind == "item"
            and not cur.pending_blank
            and cur.lazy_ok
            and not quote
        ):
            cur.add_text(body, raw, i)
        else:
            self.new("para", i, quote=quote).add_text(body, raw, i, quote)

    def table_starts(self, i: int, body: str) -> bool:
        below = self.lines[i + 1] if i + 1 < len(self.lines) else ""
        return "|" in body and "|" in below and bool(_DELIMITER.match(below))

    def item_start(self, cur: Block | None, i: int, raw: str, m: re.Match[str]) -> None:
        rest = raw[m.end() :]
        number = m.group(2)
        if (
            cur is not None
            and cur.kind == "para"
            and (not rest.strip() or (number is not None and int(number) != 1))
        ):
            cur.add_text(raw.strip(), raw, i)  # cannot interrupt a paragraph (CommonMark)
            return
        width = indent_of(raw)[0]
        marker = len(m.group(1))
        content = len(raw[: m.end()].expandtabs(4))
        if not rest.strip() or content - width - marker > 4:
            content = width + marker + 1
        block = self.new("item", i, indent=width, content=content)
        block.add_text(_TASK.sub("", rest.strip(), count=1), raw, i)

    def item_line(self, cur: Block, i: int, raw: str, body: str) -> None:
        """A line indented deeper than the item's marker: it belongs to the item."""
        if "|" in body and (cur.in_table and not cur.pending_blank or self.table_starts(i, body)):
            cur.add("raw", dedent(raw, cur.content), i)
            cur.in_table, cur.lazy_ok = True, False
            return
        cur.in_table, cur.lazy_ok = False, True
        if _ITEM.match(raw) or body.startswith(">"):
            cur.add("item", dedent(raw, cur.content), i)
            cur.hard = False
        elif cur.pending_blank or cur.kinds[-1] not in ("text", "quote", "item"):
            cur.add("text", dedent(raw, cur.content), i)
            cur.hard = raw.endswith("  ") or raw.endswith("\\")
        else:
            cur.add_text(body, raw, i)


def parse(text: str, *, default_type: MemoryType = "note", imports: bool = False) -> list[Unit]:
    """The memory units of one note file, in file order (see the module docstring); with
    `imports`, a unit made only of Claude Code `@path` imports is left out (the imported
    file's lines are the memories: `memls.notes.imports`)."""
    if default_type not in MEMORY_TYPES:
        raise ValueError(f"unknown memory type {default_type!r}")
    lines = split_lines(text)
    if lines[0].startswith("\ufeff"):  # a byte order mark: a column, never content
        lines[0] = " " + lines[0][1:]
    units = _Parser(lines, default_type).run()
    return [u for u in units if not only_imports(u.text)] if imports else units
