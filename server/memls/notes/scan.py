"""A note's lines as the parser reads them: line ends, indentation, fenced blocks, front
matter and HTML comments (the rules are in `memls.notes.parse`'s docstring). Pure."""

from __future__ import annotations

import re
from collections.abc import Iterator

_EOL = re.compile(r"\r\n|\r|\n")
_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*$")
_TICKS = re.compile(r"`+")


def split_lines(text: str) -> list[str]:
    """Lines as an editor counts them: `\\r\\n`, `\\r` and `\\n` end a line."""
    return _EOL.split(text)


def indent_of(line: str) -> tuple[int, int]:
    """(width with tab stops of 4, number of leading space/tab characters)."""
    lead = len(line) - len(line.lstrip(" \t"))
    return len(line[:lead].expandtabs(4)), lead


def dedent(line: str, columns: int) -> str:
    lead = len(line) - len(line.lstrip(" \t"))
    prefix = line[:lead].expandtabs(4)
    return (prefix[min(columns, len(prefix)) :] + line[lead:]).rstrip()


def _front_matter_end(lines: list[str]) -> int:
    if lines[0].strip() != "---":
        return 0
    for j in range(1, len(lines)):
        if lines[j].rstrip() in ("---", "..."):
            return j + 1
    return 0


def line_events(lines: list[str]) -> Iterator[tuple[str, int, int]]:
    """("blank"|"line", i, i) per line and ("fence", first, last) per fenced block; front
    matter and HTML comment lines come out as blank."""
    n, i = len(lines), _front_matter_end(lines)
    while i < n:
        line = lines[i]
        fence = _FENCE_OPEN.match(line)
        if fence and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
            run = fence.group(1)
            j = i + 1
            while j < n:
                close = _FENCE_CLOSE.match(lines[j])
                if close and close.group(1)[0] == run[0] and len(close.group(1)) >= len(run):
                    break
                j += 1
            yield ("fence", i, min(j, n - 1))
            i = j + 1
            continue
        body = line.lstrip(" \t")
        if body.startswith("<!--"):
            end = body.find("-->", 2)
            if end < 0 or not body[end + 3 :].strip():  # a comment block, not inline
                j = i
                while end < 0 and j + 1 < n:
                    j += 1
                    end = lines[j].find("-->")
                for k in range(i, (j if end >= 0 else n - 1) + 1):
                    yield ("blank", k, k)
                i = (j if end >= 0 else n - 1) + 1
                continue
        yield ("line" if line.strip() else "blank", i, i)
        i += 1


def strip_comments(prose: str) -> str:
    """Remove `<!-- ... -->` (and the blanks before it), leaving code spans alone. Each find
    moves forward; a backtick run that never closes is searched once per distinct length."""
    comment = prose.find("<!--")
    if comment < 0:
        return prose
    out: list[str] = []
    i, tick = 0, prose.find("`")
    while True:
        if 0 <= tick < i:
            tick = prose.find("`", i)
        if comment < i:
            comment = prose.find("<!--", i)
        if comment < 0:
            out.append(prose[i:])
            return "".join(out)
        if 0 <= tick < comment:  # a code span first: copy it through unchanged
            run = _TICKS.match(prose, tick).end() - tick  # type: ignore[union-attr]
            close = re.compile(rf"(?<!`)`{{{run}}}(?!`)").search(prose, tick + run)
            stop = close.end() if close else tick + run
            out.append(prose[i:stop])
            i = stop
            continue
        end = prose.find("-->", comment + 2)
        if end < 0:  # unclosed: nothing after it can close either
            out.append(prose[i:])
            return "".join(out)
        out.append(prose[i:comment].rstrip(" \t"))
        i = end + 3
