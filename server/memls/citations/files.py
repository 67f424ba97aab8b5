"""Reading a cited file inside the project folder, with the limits of what is read line by line.

A cited path is relative to the project folder, uses `/`, and must stay inside it: an
absolute path, `..` out of the folder, or a symlink that leads out is refused naming the
field. Files over MAX_TEXT_BYTES, and binary files (a NUL byte in the first 8 KiB, or not
UTF-8), are not read line by line: they keep a file-level fingerprint only.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from memls.citations.fingerprint import FileView
from memls.errors import InvalidInput
from memls.files import LeadsOut, open_within

MAX_TEXT_BYTES = 2 * 1024 * 1024
"""Files bigger than this keep a file-level fingerprint only."""

_SNIFF = 8192


@dataclass(frozen=True)
class FileText:
    """A file as the tracker reads it: a `view` of its text, or only a `digest` (binary or
    too big); `error` when it could not be read (the file is there, its state is unknown)."""

    view: FileView | None
    digest: str | None
    error: str | None = None

    @property
    def coarse(self) -> bool:
        return self.view is None and self.digest is not None


def relative(root: Path, raw: str, *, field: str) -> str:
    """The project-relative POSIX path that `raw` names, checked to be inside `root`."""
    if not isinstance(raw, str) or not raw.strip():
        raise InvalidInput("a cited path must be a non-empty string", field=field)
    text = raw.strip().replace("\\", "/")
    if (
        text.startswith("/")
        or PurePosixPath(text).is_absolute()
        or (len(text) > 1 and text[1] == ":")
    ):
        raise InvalidInput(f"{raw!r} is absolute; cite a path relative to the project", field=field)
    parts = [p for p in PurePosixPath(text).parts if p not in ("", ".")]
    if not parts or ".." in parts:
        raise InvalidInput(f"{raw!r} leaves the project folder", field=field)
    rel = "/".join(parts)
    base = root.resolve()
    try:
        real = (base / rel).resolve()
    except OSError as error:
        raise InvalidInput(f"{raw!r} cannot be resolved: {error.strerror}", field=field) from None
    if not real.is_relative_to(base):
        raise InvalidInput(f"{raw!r} leads out of the project folder", field=field)
    if not real.exists():
        raise InvalidInput(f"{raw!r} does not exist in the project", field=field)
    if not real.is_file():
        raise InvalidInput(f"{raw!r} is not a file", field=field)
    return rel


def opened(root: Path, rel: str) -> int | None:
    """A descriptor of the regular file that `rel` names under `root`, opened without ever
    following a link out of the folder (`memls.files.open_within`: a link swapped in between
    a check and the open cannot lead it out); None when it is gone, not a regular file, or
    leads out."""
    base = Path(_real(str(root)))
    try:
        _, fd = open_within(base, base / rel)
    except (LeadsOut, OSError):
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


@functools.lru_cache(maxsize=64)
def _real(root: str) -> str:
    return os.path.realpath(root)


def read(root: Path, rel: str) -> FileText | None:
    """The cited file's text (or digest); None when it is gone or no longer inside the folder."""
    fd = opened(root, rel)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            if os.fstat(fd).st_size > MAX_TEXT_BYTES:
                return FileText(view=None, digest=_digest(handle))
            data = handle.read()
        except OSError as error:
            return FileText(view=None, digest=None, error=error.strerror or str(error))
    return from_bytes(data)


def from_bytes(data: bytes) -> FileText:
    if len(data) > MAX_TEXT_BYTES or b"\0" in data[:_SNIFF]:
        return FileText(view=None, digest=digest_bytes(data))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return FileText(view=None, digest=digest_bytes(data))
    return FileText(view=FileView(text), digest=None)


def digest_bytes(data: bytes) -> str:
    return "b:" + hashlib.blake2b(data, digest_size=12).hexdigest()


def _digest(handle: BinaryIO) -> str:
    digest = hashlib.blake2b(digest_size=12)
    for chunk in iter(lambda: handle.read(1 << 20), b""):
        digest.update(chunk)
    return "b:" + digest.hexdigest()


def line_count(root: Path, rel: str) -> int:
    fd = opened(root, rel)
    if fd is None:
        return 0
    with os.fdopen(fd, "rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def is_folder(path: str) -> bool:
    return os.path.isdir(path)
