"""Claude Code's `@path` imports in a note, found as Claude Code finds them. Pure.

A `@path` preceded by the start of a line or white space is an import (`@AGENTS.md`,
`See @README for an overview`), except inside a code span or a fenced code block (or an HTML
comment or the front matter). The path is relative to the importing file (`@./x`, `@../x`),
absolute (`@/x`) or in the home folder (`@~/x`); it is a path when it starts like one (not
`@@`, not punctuation). Imported files may import others, five hops at most (`MAX_DEPTH`);
an import of a file that does not exist is nothing. The owner follows them
(`memls.notes.files.imported`); a unit made only of imports is no memory of its own
(`parse(..., imports=True)`): the imported file's lines are its memories, once.
"""

from __future__ import annotations

import re

from memls.notes.scan import line_events, split_lines

MAX_DEPTH = 5
_TOKEN = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
_SPAN = re.compile(r"(`+)(.+?)\1")
_START = re.compile(r"^(?:\./|\.\./|~/|/.|[A-Za-z0-9._-])")


def _is_path(token: str) -> bool:
    return bool(_START.match(token)) and not token.startswith("@")


def paths_in(line: str) -> list[str]:
    """The import paths of one line, code spans left out."""
    prose = _SPAN.sub(lambda m: " " * len(m.group(0)), line)
    return [t.replace("\\ ", " ") for t in _TOKEN.findall(prose) if _is_path(t)]


def imports(text: str) -> list[tuple[int, str]]:
    """(0-based line, path as written) of every import of a note, in order."""
    lines = split_lines(text)
    out: list[tuple[int, str]] = []
    for event, first, _last in line_events(lines):
        if event == "line":
            out += [(first, path) for path in paths_in(lines[first])]
    return out


def only_imports(text: str) -> bool:
    """A unit's text made of imports alone (`@AGENTS.md`, `@docs/a.md @docs/b.md`)."""
    words = text.split()
    return bool(words) and all(w.startswith("@") and _is_path(w[1:]) for w in words)
