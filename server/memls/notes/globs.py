"""Which workspace files are notes: glob matching with `**`, on relative POSIX paths.

Python 3.11 has no `PurePosixPath.full_match` (3.13+) and `fnmatch` lets `*` cross `/`, so
matching is done segment by segment: `**` is a whole segment that stands for zero or more
directories (one or more segments when it ends the glob: `a/**` matches every file below `a`,
not `a` itself, as in .gitignore); every other segment is matched with `fnmatch.fnmatchcase`
(`*`, `?`, `[abc]`, `[!abc]`), which can never cross a `/`. A glob without `**` is anchored
at the root: `AGENTS.md` matches only the root file, `**/AGENTS.md` matches it anywhere.
`*` matches dot files too.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase


def _parts(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def match(relative_posix_path: str, glob: str, *, case_sensitive: bool = True) -> bool:
    """True if the path matches the one glob."""
    if not case_sensitive:
        relative_posix_path, glob = relative_posix_path.casefold(), glob.casefold()
    path, pattern = _parts(relative_posix_path), _parts(glob)
    if not path or not pattern:
        return False
    # positions: how many path segments the glob parts so far can have consumed
    positions = {0}
    for index, part in enumerate(pattern):
        if part == "**":
            last = index == len(pattern) - 1
            first = min(positions) + (1 if last else 0)
            positions = set(range(first, len(path) + 1))
        else:
            positions = {p + 1 for p in positions if p < len(path) and fnmatchcase(path[p], part)}
        if not positions:
            return False
    return len(path) in positions


def matches(relative_posix_path: str, globs: Iterable[str], *, case_sensitive: bool = True) -> bool:
    """True if the path matches any of the globs (a lone string counts as one glob)."""
    if isinstance(globs, str):
        globs = (globs,)
    return any(match(relative_posix_path, g, case_sensitive=case_sensitive) for g in globs)


def below(relative_posix_folder: str, globs: Iterable[str]) -> bool:
    """True if a glob can match a path inside the folder (`.memls` for `.memls/**/*.md`,
    `docs` for `docs/adr/**/*.md`, any folder for `**/AGENTS.md`)."""
    folder = _parts(relative_posix_folder)
    for glob in (globs,) if isinstance(globs, str) else globs:
        pattern = _parts(glob)
        positions = {0}  # how many folder segments the glob parts so far can have consumed
        for part in pattern:
            if len(folder) in positions:
                break  # the rest of the glob names what is inside the folder
            if part == "**":
                positions = set(range(min(positions), len(folder) + 1))
            else:
                positions = {
                    p + 1 for p in positions if p < len(folder) and fnmatchcase(folder[p], part)
                }
            if not positions:
                break
        else:
            if not (pattern and pattern[-1] == "**" and len(folder) in positions):
                continue
        if len(folder) in positions:
            return True
    return False
