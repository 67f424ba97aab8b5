"""A unit being built by the parser (`memls.notes.parse`): its rows, their kinds, and how
soft-wrapped lines join. Pure."""

from __future__ import annotations

from memls.notes.scan import strip_comments


class Block:
    """A unit being built: rendered rows with their kind (text, quote, item, raw, code)."""

    def __init__(
        self,
        kind: str,
        line: int,
        char: int,
        headings: tuple[str, ...],
        indent: int = 0,
        content: int = 0,
        quote: bool = False,
    ) -> None:
        self.kind, self.start_line, self.start_char = kind, line, char
        self.end_line, self.headings = line, headings
        self.indent, self.content, self.quote = indent, content, quote
        self.rows: list[list[str]] = []  # a row is its soft-wrapped pieces, joined by spaces
        self.kinds: list[str] = []
        self.pending_blank = False  # items only: a blank line since the last row
        self.lazy_ok = True  # items only: an unindented text line would continue the item
        self.in_table = False  # items only: the last rows are a table
        self.hard = False  # the last text row ended with a hard line break
        self.titled = False  # headings[0] is the note's title, which names no section

    def add(self, kind: str, row: str, line: int) -> None:
        if self.pending_blank and self.rows:
            self.rows.append([])
            self.kinds.append("blank")
        self.pending_blank = False
        self.rows.append([row])
        self.kinds.append(kind)
        self.end_line = max(self.end_line, line)

    def add_text(self, row: str, raw: str, line: int, quote: bool = False) -> None:
        joinable = (
            self.rows
            and not self.pending_blank
            and not self.hard
            and not quote
            and self.kinds[-1] in ("text", "quote", "item")
        )
        if joinable:
            self.rows[-1].append(row.strip())
            self.end_line = line
        else:
            self.add("quote" if quote else "text", row, line)
        self.hard = raw.endswith("  ") or raw.endswith("\\")

    def render(self) -> str:
        out: list[str] = []
        prose: list[str] = []
        for pieces, kind in zip(self.rows, self.kinds):
            row = " ".join(piece for piece in pieces if piece)
            if kind == "code":
                if prose:
                    out.append(strip_comments("\n".join(prose)))
                    prose = []
                out.append(row)
            else:
                prose.append(row)
        if prose:
            out.append(strip_comments("\n".join(prose)))
        return "\n".join(out).strip()
