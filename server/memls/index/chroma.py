"""Chroma, one collection per project: embedded PersistentClient by default, HttpClient when
a server URL is configured. Telemetry off and settings from memls alone (`chroma_settings`);
we pass our own vectors (no embedding function, so Chroma's default one, which downloads a
model, is never made)."""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from memls import timeutil
from memls.errors import InvalidInput
from memls.scope import VISIBLE_TRUST, Visibility
from memls.timeutil import to_micros

CHROMA_DIR = "chroma"
EXACT_PASSING = 512  # at most this many pass a filtered search: ranked exactly (`_passing`)


def metadata(row: Any) -> dict[str, Any]:
    """Filterable metadata for one memory row (times as integer micro-seconds)."""
    return {
        "project": row["project"],
        "type": row["type"],
        "status": row["status"],
        "trust": row["trust"],
        "valid_from": timeutil.to_micros(row["valid_from"]),
        "valid_until": timeutil.to_micros(row["valid_until"]),
        "recorded_at": timeutil.to_micros(row["recorded_at"]),
        "invalidated_at": timeutil.to_micros(row["invalidated_at"]),
    }


def _ranked(ids: list[str], embeddings, vectors) -> list[list[tuple[str, float]]]:
    """All of `ids` by cosine to each query vector, nearest first."""
    import numpy as np

    if not ids:
        return [[] for _ in vectors]
    matrix = np.asarray(embeddings, dtype=np.float32)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    out = []
    for vector in vectors:
        q = np.asarray(vector, dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        sims = matrix @ q
        order = np.argsort(-sims, kind="stable")
        out.append([(ids[k], float(sims[k])) for k in order])
    return out


def collection_name(project: str, model_tag: str) -> str:
    """3..63 chars of [a-z0-9-]: a hash of the project key and the embedder that filled it."""
    digest = hashlib.sha256(f"{model_tag}\x00{project}".encode()).hexdigest()[:40]
    return f"memls-{digest}"


def chroma_settings() -> Any:
    """Chroma's settings as memls passes them, and nothing else: its Settings class (pydantic
    BaseSettings) otherwise reads CHROMA_* variables and a `.env` file in the working directory,
    the project folder of a daemon an agent's hook started. A `.env` holding CHROMA_API_IMPL,
    CHROMA_SERVER_HOST and CHROMA_SERVER_HTTP_PORT turned the embedded store into an HTTP client
    of that host; CHROMA_OTEL_GRANULARITY and CHROMA_OTEL_COLLECTION_ENDPOINT export spans to that
    endpoint from an HttpClient (docs/privacy.md)."""
    return _settings_class()(anonymized_telemetry=False, allow_reset=False)


@functools.cache
def _settings_class() -> Any:
    """One class for the process: Chroma refuses a second client of a directory whose settings
    differ from the first's, and settings of two classes never compare equal."""
    from chromadb.config import Settings
    from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

    class MemlsSettings(Settings):
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            return (init_settings,)  # what memls passes; not the environment, .env nor secrets

    return MemlsSettings


class VectorIndex:
    """Thin wrapper over a Chroma client; lazy, thread-safe creation of the client."""

    def __init__(self, directory: Path, *, url: str | None = None, model_tag: str = "bge-small"):
        self.directory = directory / CHROMA_DIR
        self.url = url
        self.model_tag = model_tag
        self._client: Any = None
        self._collections: dict[str, Any] = {}
        self._counts: dict[str, int] = {}  # per collection, kept while only we write (embedded)
        self._writes: dict[str, int] = {}  # per collection: bumped before and after each write
        self._count_lock = threading.Lock()
        self._lock = threading.Lock()

    def close(self) -> None:
        """Release the Chroma client (its System and SQLite connections) when the engine
        closes, rather than leaving it to the interpreter's teardown."""
        with self._lock:
            client, self._client = self._client, None
            self._collections.clear()
            self._counts.clear()
        if client is not None and hasattr(client, "close"):
            client.close()

    @property
    def client(self):
        with self._lock:
            if self._client is None:
                import chromadb

                settings = chroma_settings()
                if self.url:
                    parsed = urlparse(self.url)
                    if parsed.scheme not in ("http", "https") or not parsed.hostname:
                        raise InvalidInput(f"not an http(s) URL: {self.url}", field="chromaUrl")
                    self._client = chromadb.HttpClient(
                        host=parsed.hostname,
                        port=parsed.port or 8000,
                        ssl=parsed.scheme == "https",
                        settings=settings,
                    )
                else:
                    self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
                    self._client = chromadb.PersistentClient(
                        path=str(self.directory), settings=settings
                    )
            return self._client

    def existing(self, project: str):
        """The project's collection if it exists; reads never create one."""
        name = collection_name(project, self.model_tag)
        found = self._collections.get(name)
        if found is None:
            try:
                found = self.client.get_collection(name, embedding_function=None)
            except Exception:  # noqa: BLE001 - chromadb raises NotFoundError / ValueError
                return None
            self._collections[name] = found
        return found

    def collection(self, project: str):
        name = collection_name(project, self.model_tag)
        found = self._collections.get(name)
        if found is None:
            found = self.client.get_or_create_collection(
                name,
                embedding_function=None,
                configuration={"hnsw": {"space": "cosine"}},
                metadata={"project": project, "embedder": self.model_tag},
            )
            self._collections[name] = found
        return found

    def upsert(self, project: str, ids: list[str], vectors, metas: list[dict]) -> None:
        if ids:
            self._wrote(project)
            try:
                self.collection(project).upsert(ids=ids, embeddings=vectors, metadatas=metas)
            finally:
                self._wrote(project)

    def size(self, project: str) -> int:
        """How many vectors the project's collection holds (0 when it has none)."""
        col = self.existing(project)
        return 0 if col is None else self.count(project, col)

    def count(self, project: str, col: Any) -> int:
        """How many vectors the project's collection holds. Remembered for the embedded store,
        which only this process writes (one owner per data directory), until our next upsert
        or delete; a Chroma server is asked every time. ~1 ms a query at 10k otherwise."""
        name = collection_name(project, self.model_tag)
        found = self._counts.get(name)
        if found is None:
            writes = self._writes.get(name, 0)
            found = col.count()
            with self._count_lock:
                if not self.url and self._writes.get(name, 0) == writes:
                    self._counts[name] = found  # no write began or ended while we counted
        return found

    def _wrote(self, project: str) -> None:
        """Around every write of a collection (before and after): a count read meanwhile is
        not remembered, and the one remembered before is forgotten."""
        name = collection_name(project, self.model_tag)
        with self._count_lock:
            self._writes[name] = self._writes.get(name, 0) + 1
            self._counts.pop(name, None)

    def update_meta(self, project: str, ids: list[str], metas: list[dict]) -> None:
        if not ids:
            return
        col = self.existing(project)
        if col is None:
            return
        present = set(col.get(ids=ids, include=[])["ids"])
        keep = [(i, m) for i, m in zip(ids, metas) if i in present]
        if keep:
            col.update(ids=[i for i, _ in keep], metadatas=[m for _, m in keep])

    def delete(self, project: str, ids: list[str]) -> None:
        col = self.existing(project) if ids else None
        if col is not None:
            self._wrote(project)
            try:
                col.delete(ids=ids)
            finally:
                self._wrote(project)

    def nearest(
        self, project: str, vectors, n: int, where: dict, admit: Callable[[list[str]], set[str]]
    ) -> list[list[tuple[str, float]]]:
        """For each vector, (id, cosine similarity) of its n nearest memories that pass the
        hard filters, nearest first.

        Chroma evaluates a metadata `where` by scanning: ~90 ms at 10k memories, against ~1 ms
        for a plain HNSW search. So search without `where` for 2n, keep what `admit` (the same
        filters, in SQL: the record of truth) lets through, and look again with `where` only
        for a vector where fewer than n passed while the collection holds more. Both paths
        give the same set: when n of the 2n nearest pass, they are the n nearest that pass.
        """
        col = self.existing(project)
        if len(vectors) == 0 or col is None:
            return [[] for _ in vectors]
        fetch = 2 * n
        total = self.count(project, col)
        # A collection no larger than what we would fetch is read whole and ranked exactly:
        # HNSW is approximate and was seen to leave one of 22 vectors out of a full search.
        found = (
            self._exact(col, vectors) if total <= fetch else self._query(col, vectors, fetch, None)
        )
        allowed = admit(list({i for hits in found for i, _ in hits}))
        out = [[(i, s) for i, s in hits if i in allowed][:n] for hits in found]
        # filtered out too many, or HNSW (approximate) returned fewer than asked while the
        # collection holds more: look again among those that pass `where`
        short = [k for k, hits in enumerate(found) if len(out[k]) < n and len(hits) < total]
        if short:
            again = self._passing(col, [vectors[k] for k in short], n, where)
            admitted = admit(list({i for hits in again for i, _ in hits}))
            for k, hits in zip(short, again):
                out[k] = [(i, s) for i, s in hits if i in admitted][:n]
        return out

    def _passing(self, col, vectors, n: int, where: dict) -> list[list[tuple[str, float]]]:
        """Each vector's n nearest among those that pass `where`. When at most EXACT_PASSING
        pass they are read and ranked exactly: Chroma's filtered HNSW search, like its plain
        one, was seen to leave out one of the three that passed in a collection of 22."""
        got = col.get(where=where, include=["embeddings"], limit=EXACT_PASSING + 1)
        if len(got["ids"]) <= EXACT_PASSING:
            return _ranked(got["ids"], got["embeddings"], vectors)
        return self._query(col, vectors, n, where)

    @staticmethod
    def _exact(col, vectors) -> list[list[tuple[str, float]]]:
        """Every vector of a (small) collection, by cosine to each query, nearest first."""
        got = col.get(include=["embeddings"])
        return _ranked(got["ids"], got["embeddings"], vectors)

    @staticmethod
    def _query(col, vectors, n: int, where: dict | None) -> list[list[tuple[str, float]]]:
        result = col.query(
            query_embeddings=vectors, n_results=n, where=where, include=["distances"]
        )
        return [
            [(i, 1.0 - float(d)) for i, d in zip(ids, dists)]
            for ids, dists in zip(result["ids"], result["distances"])
        ]

    def cosines(self, project: str, vector, ids: list[str]) -> dict[str, float]:
        """Cosine of `vector` to each stored vector among `ids` (those not indexed are left
        out): write-time detection scores the memories its lexical lookup found with it."""
        import numpy as np

        col = self.existing(project) if ids else None
        if col is None:
            return {}
        got = col.get(ids=ids, include=["embeddings"])
        if not got["ids"]:
            return {}
        matrix = np.asarray(got["embeddings"], dtype=np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        q = np.asarray(vector, dtype=np.float32)
        sims = matrix @ (q / max(float(np.linalg.norm(q)), 1e-12))
        return {i: float(s) for i, s in zip(got["ids"], sims)}

    def all_ids(self, project: str) -> dict[str, dict]:
        col = self.existing(project)
        if col is None:
            return {}
        got = col.get(include=["metadatas"])
        return dict(zip(got["ids"], got["metadatas"]))

    def set_aside(self) -> Path:
        """Move an embedded store that cannot be opened out of the way (kept, renamed
        chroma.broken-<time>), so the next use starts an empty one. Returns where it went."""
        import time

        with self._lock:
            self._client = None
            self._collections.clear()
            self._counts.clear()
            stamp = time.strftime("%Y%m%dT%H%M%S")
            aside = self.directory.with_name(f"{CHROMA_DIR}.broken-{stamp}")
            if self.directory.exists():
                self.directory.rename(aside)
            return aside

    def drop(self, project: str) -> None:
        name = collection_name(project, self.model_tag)
        self._collections.pop(name, None)
        self._counts.pop(name, None)
        try:
            self.client.delete_collection(name)
        except Exception:  # noqa: BLE001 - absent is fine
            pass


def where(seen: Visibility) -> dict[str, Any]:
    """The hard filters of `seen` for the vector index (one collection per project, so no
    project clause), over the numeric metadata written by `metadata`."""
    clauses: list[dict[str, Any]] = [{"trust": {"$in": list(VISIBLE_TRUST)}}]
    if seen.valid_at is None and seen.as_of is None:
        now = to_micros(seen.now)
        clauses += [
            {"status": {"$eq": "active"}},
            {"invalidated_at": {"$gt": now}},  # FOREVER when not invalidated
            {"valid_from": {"$lte": now}},
            {"valid_until": {"$gt": now}},
        ]
    if seen.valid_at is not None:
        at = to_micros(seen.valid_at)
        clauses += [{"valid_from": {"$lte": at}}, {"valid_until": {"$gt": at}}]
    if seen.as_of is not None:
        at = to_micros(seen.as_of)
        clauses += [{"recorded_at": {"$lte": at}}, {"invalidated_at": {"$gt": at}}]
    if seen.types:
        clauses.append({"type": {"$in": list(seen.types)}})
    return {"$and": clauses}
