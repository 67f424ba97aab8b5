"""What a project ignores, as git does: `.gitignore` files (each applies below its folder,
a deeper one first) and `.git/info/exclude`, read with pathspec's `GitIgnoreSpec` (git's own
rules: negation, `dir/` patterns, anchoring, `**`), plus folders no note is ever read from
(`SKIP_DIRS`: `.git`, `node_modules`, virtual environments, caches, build output). A folder that
is ignored is not walked, so nothing below it is read (git cannot re-include below it either);
the notes walk asks about folders only (`memls.notes.files`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pathspec

SKIP_DIRS = frozenset(
    {
        ".git",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "dist",
        "build",
        ".tox",
        ".hypothesis",
    }
)
MAX_IGNORE_BYTES = 1024 * 1024


def _spec(path: str) -> pathspec.GitIgnoreSpec | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            if os.fstat(handle.fileno()).st_size > MAX_IGNORE_BYTES:
                return None
            lines = handle.read().splitlines()
    except OSError:  # none there (the usual case), or unreadable
        return None
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    return spec if len(spec) else None


class Ignores:
    """The ignore rules met on the way down a project's folder (`enter` each folder before
    asking about its entries)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[str, pathspec.GitIgnoreSpec] = {}  # folder ("" root) -> its rules
        exclude = _spec(os.path.join(root, ".git", "info", "exclude"))
        if exclude is not None:
            self._specs["\0exclude"] = exclude  # the root's, after its .gitignore

    def enter(self, folder: str, real: str | None = None) -> None:
        """Read the `.gitignore` of a folder (relative to the root, "" for it) once."""
        if folder in self._specs:
            return
        spec = _spec(os.path.join(real or os.path.join(self.root, folder), ".gitignore"))
        if spec is not None:
            self._specs[folder] = spec

    def ignored(self, relative: str, *, folder: bool) -> bool:
        """Is the project-relative path ignored (a folder's by `dir/` patterns too)? The
        deepest `.gitignore` that says either way wins, then the root's and the exclude file."""
        parts = relative.split("/")
        if folder and parts[-1] in SKIP_DIRS:
            return True
        for depth in range(len(parts) - 1, -1, -1):
            base = "/".join(parts[:depth])
            keys = (base,) if depth else ("", "\0exclude")
            for key in keys:
                spec = self._specs.get(key)
                if spec is None:
                    continue
                below = "/".join(parts[depth:]) + ("/" if folder else "")
                verdict = spec.check_file(below).include
                if verdict is not None:
                    return verdict
        return False

    def outside_of(self, relative: str) -> bool:
        """Is the path below an ignored or skipped folder (for a path not met in a walk: a
        changed file, an import)? Each folder on the way is read as a walk reads it."""
        parts = relative.split("/")
        for depth in range(1, len(parts)):
            self.enter("/".join(parts[: depth - 1]))
            if self.ignored("/".join(parts[:depth]), folder=True):
                return True
        return False
