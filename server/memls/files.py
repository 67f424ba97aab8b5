"""Files the user reads or edits (a note, an agent's settings): replaced whole at once, and read
only from inside the folder they belong to (`within`, `open_within`)."""

from __future__ import annotations

import errno
import os
import stat
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


class LeadsOut(Exception):
    """A path that must stay inside a folder leads out of it through a link (`target` is where
    it leads), or round a loop of links (`target` None)."""

    def __init__(self, path: Path, target: str | None, root: Path) -> None:
        self.path, self.target, self.root = path, target, root
        super().__init__(
            f"{path} is a loop of links"
            if target is None
            else f"{path} leads to {target}, outside the folder {root}"
        )


def within(root: Path, path: Path) -> Path:
    """The name `path` has inside `root` once its links are followed, spelled under `root` as
    given (the links of `root` itself are the user's own choice of path and are kept): with
    `CLAUDE.md` a link to `AGENTS.md`, `root/CLAUDE.md` is `root/AGENTS.md`. A path that does
    not exist, or a link to nothing, is named by where it would lead. LeadsOut when the links
    lead outside `root`'s real folder or round a loop."""
    real_root = os.path.realpath(root)
    try:
        real = os.path.realpath(path, strict=True)
    except (FileNotFoundError, NotADirectoryError):
        real = os.path.realpath(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LeadsOut(path, None, root) from None
        raise
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise LeadsOut(path, real, root)
    rel = os.path.relpath(real, real_root)
    return root if rel == "." else root / rel


_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


def open_within(root: Path, path: Path, *, tries: int = 3) -> tuple[Path, int]:
    """Open the file `path` names inside `root` for reading: (its name by `within`, the file
    descriptor). LeadsOut as `within`; FileNotFoundError when there is no such file.

    Resolving the name first and opening it after would let a link swapped in between (a
    TOCTOU race) lead the open out of the folder. So the open itself never follows a link:
    from a descriptor of `root`'s real folder, each component of the resolved name is opened
    relative to its parent's descriptor (`dir_fd`) with O_NOFOLLOW, and the kernel refuses a
    link at any step (ELOOP; ENOTDIR for a folder, told from a file by its lstat). The file
    opened is then reached from the root through real folders only, whatever changed
    meanwhile; the resolved name has no `..`. (A hard link is no link: it is a file of the
    folder.) A link that appeared in between makes the name resolve again (`tries` times),
    and the name it resolves to then is the one returned. O_NONBLOCK: a FIFO named like a
    note must not hang the reader (the caller checks that it opened a regular file)."""
    for attempt in range(tries):
        name = within(root, path)
        parts = name.relative_to(root).parts
        try:
            return name, _open_below(os.path.realpath(root), parts)
        except OSError as exc:
            if exc.errno != errno.ELOOP or attempt == tries - 1:
                raise
    raise AssertionError("unreachable")


def _open_below(real_root: str, parts: tuple[str, ...]) -> int:
    fd = os.open(real_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            try:
                below = os.open(part, _NOFOLLOW | os.O_DIRECTORY, dir_fd=fd)
            except NotADirectoryError:  # a link (resolve again), or a file: no such note
                if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                    raise OSError(errno.ELOOP, "a link appeared", part) from None
                raise
            os.close(fd)
            fd = below
        if not parts:
            raise IsADirectoryError(errno.EISDIR, "is the folder itself", real_root)
        return os.open(parts[-1], _NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)
