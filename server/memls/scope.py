"""Project scope: the key every operation takes, and the filters every read path applies."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from pathlib import Path

from memls.errors import InvalidInput

USER_PROJECT = "@user"
"""The user-wide scope: stored explicitly with this key, read only with include_user=True."""

MAX_PROJECT_LENGTH = 512
VISIBLE_TRUST = ("candidate", "verified")


def project_key(raw: object, *, field: str = "project") -> str:
    """Normalise a project key (NFC, outer white space removed); refuse a missing or empty one."""
    if raw is None:
        raise InvalidInput("a project is required (there is no default project)", field=field)
    if not isinstance(raw, str):
        raise InvalidInput("a project must be a string", field=field)
    key = unicodedata.normalize("NFC", raw).strip()
    if not key:
        raise InvalidInput("a project must not be empty or white space", field=field)
    if all(_invisible(c) for c in key):
        raise InvalidInput(
            "a project must contain a visible character (this one has only "
            "invisible ones, e.g. zero-width spaces)",
            field=field,
        )
    if "\x00" in key or len(key) > MAX_PROJECT_LENGTH:
        raise InvalidInput(
            f"a project must be at most {MAX_PROJECT_LENGTH} characters, with no NUL", field=field
        )
    return key


# Letters that render as nothing although Unicode files them as letters or symbols.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def _invisible(char: str) -> bool:
    """White space, format/control/unassigned characters (zero-width space, joiners, BOM,
    bidi marks), combining marks on their own, and the blank 'letters' above."""
    category = unicodedata.category(char)
    return (
        char.isspace() or category[0] in "CZ" or category in ("Mn", "Me") or char in _BLANK_LETTERS
    )


def folder_path(uri: str) -> Path | None:
    """The resolved absolute path of a workspace folder (LSP) or root (MCP) given as a URI;
    None when the URI names no file-system path. Its str() is the folder's project key, the
    same for every front, so a note indexed by the editor and a memory stored by an agent in
    the same folder are in the same project."""
    from pygls import uris

    path = uris.to_fs_path(uri)
    if not path:
        return None
    return Path(path).resolve()


@dataclass(frozen=True)
class Visibility:
    """Hard filters for retrieval: project(s), trust, and validity / transaction time.

    - neither valid_at nor as_of: active, not invalidated, valid now
    - valid_at T: validity [valid_from, valid_until) contains T (superseded ones included)
    - as_of T: recorded at or before T and not invalidated by T (transaction time)
    Flagged and rejected memories are never visible to retrieval. The filters become SQL in
    `store.visibility` and a Chroma `where` in `index.chroma.where`.
    """

    projects: tuple[str, ...]
    now: str
    valid_at: str | None = None
    as_of: str | None = None
    types: tuple[str, ...] | None = None
