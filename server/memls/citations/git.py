"""git's view of the project folder, run as a subprocess: HEAD and rename detection.

Nothing here is needed: where the folder is not a git repository (or git is not installed)
every answer is empty, and renames are followed by content (`memls.citations.renames`).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

TIMEOUT_SECONDS = 10.0


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "surrogateescape")


def head(root: Path) -> str | None:
    """The commit checked out in `root`, or None (not a repository, no commit yet)."""
    out = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    return out.strip() or None if out else None


def renames(root: Path, since: str | None = None) -> dict[str, str]:
    """Old path -> new path (relative to `root`) for the files git sees as renamed between
    `since` (a commit; default HEAD) and the working tree."""
    out = _git(root, "diff", "-M", "--name-status", "-z", "--relative", since or "HEAD")
    if out is None:
        return {}
    found: dict[str, str] = {}
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        status = fields[i]
        if status[:1] in ("R", "C") and i + 2 < len(fields):
            if status[0] == "R":
                found[fields[i + 1]] = fields[i + 2]
            i += 3
        else:
            i += 2
    return found


def untracked(root: Path) -> list[str]:
    """Files (relative to `root`) that git does not track and does not ignore: where a file
    moved in the working tree without `git mv` went (git cannot see that rename)."""
    out = _git(root, "ls-files", "--others", "--exclude-standard", "-z")
    return [name for name in out.split("\0") if name] if out else []


MAX_NAMING_FILES = 20


def files_naming(root: Path, word: str) -> list[str]:
    """Tracked files (relative to `root`) in which `word` occurs as a word, at most
    MAX_NAMING_FILES of them (more: the name is too common to say which one is meant)."""
    if not word.isidentifier():
        return []
    out = _git(root, "grep", "-l", "-w", "-F", "-z", "-e", word, "--", ".")
    found = [name for name in out.split("\0") if name] if out else []
    return found if len(found) <= MAX_NAMING_FILES else []
