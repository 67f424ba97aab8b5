"""Find a citation again in the current text of its file: fresh, moved, changed or missing.

- A span is fresh when its normalised lines are at the same lines; moved when they are found
  elsewhere in the file (among several copies, the one whose surrounding lines match best,
  then the nearest); changed when they are nowhere in the file.
- A symbol follows its definition: moved when the definition moved, changed when its text
  changed, missing when no definition has that name any more.
- A whole file is fresh while it exists (an edit anywhere in it is not a change of what the
  memory cites); coarse citations compare the whole file's fingerprint.

Pure: the caller reads the file once into a `FileView` and locates every citation of it.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from memls.citations.anchor import Anchor, Located, State
from memls.citations.fingerprint import FileView, display, fingerprint_lines
from memls.citations.symbols import Symbol, find_symbol


def locate(
    anchor: Anchor,
    view: FileView,
    *,
    path: str | None = None,
    symbols: Sequence[Symbol] | None = None,
) -> Located:
    """Where `anchor` stands in `view` (the text of `path`, by default the anchor's path)."""
    where = path or anchor.path
    if anchor.kind == "file":
        state: State = "fresh" if where == anchor.path else "moved"
        return Located(state=state, path=where, start_line=1, end_line=max(1, view.line_count))
    if anchor.kind == "symbol" and anchor.symbol is not None and symbols is not None:
        return _locate_symbol(anchor, view, where, symbols)
    return _locate_span(anchor, view, where)


def locate_coarse(anchor: Anchor, digest: str | None, *, path: str | None = None) -> Located:
    """A coarse citation against the file's current fingerprint (None: the file is gone)."""
    where = path or anchor.path
    state: State
    if digest is None:
        state = "missing"
    elif digest != anchor.fingerprint:
        state = "changed"
    else:
        state = "fresh" if where == anchor.path else "moved"
    return Located(state=state, path=where, start_line=anchor.start_line, end_line=anchor.end_line)


def missing(anchor: Anchor) -> Located:
    return Located(
        state="missing", path=anchor.path, start_line=anchor.start_line, end_line=anchor.end_line
    )


def _same_place(anchor: Anchor, where: str, start: int, end: int) -> bool:
    return where == anchor.path and start == anchor.start_line and end == anchor.end_line


def _locate_span(anchor: Anchor, view: FileView, where: str) -> Located:
    here = view.span(anchor.start_line, anchor.end_line)
    if where == anchor.path and here and fingerprint_lines(here) == anchor.fingerprint:
        return Located(
            state="fresh", path=where, start_line=anchor.start_line, end_line=anchor.end_line
        )
    if anchor.lines:
        found = best_occurrence(anchor, view)
        if found is not None:
            start, end = view.lines_at(found, len(anchor.lines))
            state: State = "fresh" if _same_place(anchor, where, start, end) else "moved"
            return Located(state=state, path=where, start_line=start, end_line=end)
    start, end = _where_changed(anchor, view)
    return Located(state="changed", path=where, start_line=start, end_line=end)


def _where_changed(anchor: Anchor, view: FileView) -> tuple[int, int]:
    """Where the changed text most likely is now: between the lines that surrounded it (when
    they are found once, in order), else the cited lines, clipped to the file."""
    last = max(1, view.line_count)
    before = view.occurrences(anchor.before) if anchor.before else []
    after = view.occurrences(anchor.after) if anchor.after else []
    if len(before) == 1 or len(after) == 1:
        first = before[0] + len(anchor.before) if len(before) == 1 else None
        stop = after[0] if len(after) == 1 else None
        if first is not None and stop is not None and stop >= first:
            if stop > first:
                return view.line_of[first], view.line_of[stop - 1]
        elif first is not None and first < len(view.norm):
            height = anchor.end_line - anchor.start_line
            return view.line_of[first], min(last, view.line_of[first] + height)
        elif stop is not None and stop > 0:
            height = anchor.end_line - anchor.start_line
            return max(1, view.line_of[stop - 1] - height), view.line_of[stop - 1]
    end = min(anchor.end_line, last)
    return min(anchor.start_line, end), end


def best_occurrence(anchor: Anchor, view: FileView) -> int | None:
    """The position in `view.norm` of the copy of the anchor's lines that is most likely the
    cited one: most matching context lines, then nearest to where it was."""
    found = view.occurrences(anchor.lines)
    if len(found) <= 1:
        return found[0] if found else None
    n = len(anchor.lines)
    origin = view.index_at[min(anchor.start_line, view.line_count + 1)]

    def rank(i: int) -> tuple[int, int]:
        score = 0
        for k, value in enumerate(reversed(anchor.before), start=1):
            score += i - k >= 0 and view.norm[i - k] == value
        for k, value in enumerate(anchor.after):
            score += i + n + k < len(view.norm) and view.norm[i + n + k] == value
        return (-score, abs(i - origin))

    return min(found, key=rank)


def _locate_symbol(
    anchor: Anchor, view: FileView, where: str, symbols: Sequence[Symbol]
) -> Located:
    assert anchor.symbol is not None
    symbol = find_symbol(symbols, anchor.symbol)
    if symbol is None:
        return Located(
            state="missing", path=where, start_line=anchor.start_line, end_line=anchor.end_line
        )
    start, end = symbol.start_line, symbol.end_line
    if fingerprint_lines(view.span(start, end)) != anchor.fingerprint:
        return Located(state="changed", path=where, start_line=start, end_line=end)
    moved: State = "fresh" if _same_place(anchor, where, start, end) else "moved"
    return Located(state=moved, path=where, start_line=start, end_line=end)


MAX_DIFF_LINES = 12
MAX_DIFF_CHARS = 1200


def short_diff(anchor: Anchor, view: FileView | None, located: Located) -> str | None:
    """What changed in the cited lines: a unified diff of the cited (normalised) lines against
    the lines now at the citation's range, capped at MAX_DIFF_LINES lines / MAX_DIFF_CHARS."""
    if located.state != "changed" or not anchor.lines or view is None:
        return None
    now = [display(x) for x in view.lines[located.start_line - 1 : located.end_line]]
    then = list(anchor.shown or anchor.lines)
    body = [
        line
        for line in difflib.unified_diff(then, [x for x in now if x], lineterm="", n=0)
        if not line.startswith(("---", "+++", "@@"))
    ]
    cut = body[:MAX_DIFF_LINES]
    text = "\n".join(cut)
    if len(text) > MAX_DIFF_CHARS:
        text = text[:MAX_DIFF_CHARS] + "…"
    if len(body) > len(cut):
        text += f"\n… {len(body) - len(cut)} more lines"
    return text
