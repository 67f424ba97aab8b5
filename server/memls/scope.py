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
    if "\x00" in key or len(key) > MAX_PROJECT_LENGTH:
        raise InvalidInput(
            f"a project must be at most {MAX_PROJECT_LENGTH} characters, with no NUL", field=field
        )
    return key


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
    Flagged and rejected memories are never visible to retrieval.
    """

    projects: tuple[str, ...]
    now: str
    valid_at: str | None = None
    as_of: str | None = None
    types: tuple[str, ...] | None = None

    def where(self, alias: str = "m") -> tuple[str, list[object]]:
        a = alias
        marks = ", ".join("?" for _ in self.projects)
        clauses = [f"{a}.project IN ({marks})", f"{a}.trust IN ('candidate', 'verified')"]
        params: list[object] = list(self.projects)
        if self.valid_at is None and self.as_of is None:
            clauses += [
                f"{a}.status = 'active'",
                f"{a}.invalidated_at IS NULL",
                f"{a}.valid_from <= ?",
                f"({a}.valid_until IS NULL OR {a}.valid_until > ?)",
            ]
            params += [self.now, self.now]
        if self.valid_at is not None:
            clauses += [f"{a}.valid_from <= ?", f"({a}.valid_until IS NULL OR {a}.valid_until > ?)"]
            params += [self.valid_at, self.valid_at]
        if self.as_of is not None:
            clauses += [
                f"{a}.recorded_at <= ?",
                f"({a}.invalidated_at IS NULL OR {a}.invalidated_at > ?)",
            ]
            params += [self.as_of, self.as_of]
        if self.types:
            clauses.append(f"{a}.type IN ({', '.join('?' for _ in self.types)})")
            params += list(self.types)
        return " AND ".join(clauses), params

    def chroma_where(self) -> dict:
        """The same filters for the vector index (one collection per project, so no project
        clause), over the numeric metadata written by `index.metadata`."""
        from memls.timeutil import to_micros

        clauses: list[dict] = [{"trust": {"$in": list(VISIBLE_TRUST)}}]
        if self.valid_at is None and self.as_of is None:
            now = to_micros(self.now)
            clauses += [
                {"status": {"$eq": "active"}},
                {"invalidated_at": {"$gt": now}},  # FOREVER when not invalidated
                {"valid_from": {"$lte": now}},
                {"valid_until": {"$gt": now}},
            ]
        if self.valid_at is not None:
            at = to_micros(self.valid_at)
            clauses += [{"valid_from": {"$lte": at}}, {"valid_until": {"$gt": at}}]
        if self.as_of is not None:
            at = to_micros(self.as_of)
            clauses += [{"recorded_at": {"$lte": at}}, {"invalidated_at": {"$gt": at}}]
        if self.types:
            clauses.append({"type": {"$in": list(self.types)}})
        return {"$and": clauses}
