"""Replacing a file the user reads or edits (a note, an agent's settings) whole at once."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def replace_text(path: Path, text: str, *, mode: int | None = None) -> None:
    """Write `text` to `path` through a temporary file beside it, so a reader (an editor, an
    agent, a file watcher) sees the old text or the new, never half. An existing file keeps
    its mode; a new one gets `mode`, or (None) what the umask gives a new file, as an editor
    makes it. Parent folders are created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        mode = path.stat().st_mode & 0o777
    elif mode is None:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
