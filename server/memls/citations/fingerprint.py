"""Cited text, normalised and fingerprinted; a file's text indexed for finding it again.

A cited span is compared line by line after normalisation: white space is removed (as
`git diff -w` ignores it) and blank lines are dropped. So re-indenting, re-aligning, spacing
around operators or adding blank lines does not change what a citation says; changing a token
does. The fingerprint is a short hash of the normalised lines joined by newlines. (The cost:
`"a b"` and `"ab"` in a string read the same.) For display, `display` keeps one space where
there was white space.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

_EOL = re.compile(r"\r\n|\r|\n")
_SPACE = re.compile(r"\s+")


def split_lines(text: str) -> list[str]:
    """Lines as an editor counts them (`\\r\\n`, `\\r` or `\\n`); a final newline ends the last
    line rather than starting an empty one."""
    lines = text.split("\n") if "\r" not in text else _EOL.split(text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def normalise(line: str) -> str:
    """The comparison key of a line: its text without white space."""
    return "".join(line.split())


def display(line: str) -> str:
    """A line as a diff shows it: white space runs made one space, ends stripped."""
    return _SPACE.sub(" ", line).strip()


def normalised(lines: Sequence[str]) -> list[str]:
    """The non-blank lines of `lines`, normalised."""
    out = []
    for line in lines:
        value = normalise(line)
        if value:
            out.append(value)
    return out


def fingerprint_lines(lines: Sequence[str]) -> str:
    """The fingerprint of already normalised lines."""
    digest = hashlib.blake2b("\n".join(lines).encode("utf-8"), digest_size=12)
    return digest.hexdigest()


def fingerprint(text: str) -> str:
    """The fingerprint of a span of text (normalised first)."""
    return fingerprint_lines(normalised(split_lines(text)))


def fingerprint_bytes(data: bytes) -> str:
    """A file-level fingerprint of raw bytes (binary files, files over the size limit)."""
    return "b:" + hashlib.blake2b(data, digest_size=12).hexdigest()


class FileView:
    """One file's text, split once, to locate many citations in it.

    `norm[i]` is the i-th non-blank normalised line and `line_of[i]` its 1-based line number;
    `index_at[n]` is the position in `norm` of the first non-blank line at or after line n.
    These are built on first use: a citation whose lines are still where they were is
    checked from its own lines alone (`span`), which is what most checks find.
    """

    __slots__ = ("lines", "_norm", "_line_of", "_index_at", "_starts")

    def __init__(self, text: str) -> None:
        self.lines = split_lines(text)
        self._norm: list[str] | None = None
        self._line_of: list[int] = []
        self._index_at: list[int] = []
        self._starts: dict[str, list[int]] | None = None

    def _build(self) -> list[str]:
        keys = ["".join(line.split()) for line in self.lines]
        self._line_of = [n for n, key in enumerate(keys, start=1) if key]
        norm = [key for key in keys if key]
        index_at = [0] * (len(self.lines) + 2)
        position = 0
        for number, key in enumerate(keys, start=1):
            index_at[number] = position
            if key:
                position += 1
        index_at[len(self.lines) + 1] = position
        self._index_at = index_at
        self._norm = norm
        return norm

    @property
    def norm(self) -> list[str]:
        return self._norm if self._norm is not None else self._build()

    @property
    def line_of(self) -> list[int]:
        if self._norm is None:
            self._build()
        return self._line_of

    @property
    def index_at(self) -> list[int]:
        if self._norm is None:
            self._build()
        return self._index_at

    @property
    def line_count(self) -> int:
        return len(self.lines)

    def span(self, start: int, end: int) -> list[str]:
        """The normalised non-blank lines of lines start..end (1-based, inclusive)."""
        if start < 1 or end < start or end > len(self.lines):
            return []
        if self._norm is None:
            keys = ("".join(line.split()) for line in self.lines[start - 1 : end])
            return [key for key in keys if key]
        return self._norm[self._index_at[start] : self._index_at[end + 1]]

    def text(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start - 1 : end])

    def occurrences(self, block: Sequence[str]) -> list[int]:
        """Positions in `norm` where `block` starts (every occurrence, in order)."""
        if not block:
            return []
        if self._starts is None:
            starts: dict[str, list[int]] = {}
            for i, value in enumerate(self.norm):
                starts.setdefault(value, []).append(i)
            self._starts = starts
        n = len(block)
        first = block[0]
        rest = list(block)
        return [i for i in self._starts.get(first, ()) if self.norm[i : i + n] == rest]

    def lines_at(self, index: int, count: int) -> tuple[int, int]:
        """The 1-based line range covered by `count` normalised lines from position `index`."""
        return self.line_of[index], self.line_of[index + count - 1]
