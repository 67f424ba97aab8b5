"""Follow a citation whose file is gone to the file that holds its text now. Pure.

Where the project is a git repository, git's rename detection names the new path (the caller
runs git: `memls.citations.git`); elsewhere, and for files git does not know, the cited text
is looked for in the files that appeared at the same time.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping

from memls.citations.anchor import Anchor
from memls.citations.fingerprint import FileView, fingerprint_lines
from memls.citations.locate import best_occurrence


def follow(anchor: Anchor, appeared: Mapping[str, FileView]) -> str | None:
    """The path among `appeared` that now holds the anchor's text, or None.

    A span or symbol is found by its lines; a whole file by its fingerprint. Among several,
    the one with the same file name wins, then the one sharing the longest folder prefix."""
    hits = [path for path, view in appeared.items() if _holds(anchor, view)]
    if not hits:
        return None
    base = posixpath.basename(anchor.path)

    def rank(path: str) -> tuple[bool, int, str]:
        common = posixpath.commonpath([anchor.path, path]) if "/" in path else ""
        return (posixpath.basename(path) != base, -len(common), path)

    return min(hits, key=rank)


def _holds(anchor: Anchor, view: FileView) -> bool:
    if anchor.coarse:
        return False
    if anchor.kind == "file":
        return fingerprint_lines(view.norm) == anchor.fingerprint
    return bool(anchor.lines) and best_occurrence(anchor, view) is not None
