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


def added(root: Path, since: str | None = None) -> list[str]:
    """Files (relative to `root`) that are new since `since` (default HEAD): added in the
    history or the working tree, and untracked files that are not ignored."""
    found: list[str] = []
    out = _git(root, "diff", "--name-only", "--diff-filter=A", "-z", "--relative", since or "HEAD")
    if out:
        found.extend(name for name in out.split("\0") if name)
    out = _git(root, "ls-files", "--others", "--exclude-standard", "-z")
    if out:
        found.extend(name for name in out.split("\0") if name)
    return found
