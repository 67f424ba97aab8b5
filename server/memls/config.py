"""Where the data lives and what the user configured there."""

from __future__ import annotations

import os
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from memls.errors import InvalidInput, StoreError
from memls.limits import Limits, from_table

ENV_DATA_DIR = "MEMLS_DATA_DIR"
CONFIG_NAME = "config.toml"


def data_dir(explicit: str | os.PathLike | None = None) -> Path:
    """--data-dir, else $MEMLS_DATA_DIR, else the user's data directory for memls.

    An empty --data-dir is refused (it would mean the current directory); an empty
    $MEMLS_DATA_DIR counts as unset."""
    if explicit is not None and not str(explicit).strip():
        raise InvalidInput("must not be empty (name a directory)", field="dataDir")
    chosen = explicit or os.environ.get(ENV_DATA_DIR) or platformdirs.user_data_dir("memls")
    return Path(chosen).expanduser().resolve()


def ensure_private_dir(path: Path) -> Path:
    """The data directory, usable by this user only.

    A directory memls creates is made 0700. An existing one keeps its mode (memls never
    chmods a directory it did not create: `--data-dir /tmp` must not turn /tmp into 0700),
    but it is refused when it belongs to another user or other users can write to it (group-
    or world-writable, sticky or not: they could plant the socket, the lock or the index
    before memls does). Readable by others is accepted: every file memls makes in it is
    0600 and every directory 0700.
    """
    try:
        path.mkdir(parents=True, mode=0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise StoreError(f"cannot create the data directory {path}: "
                         f"{exc.strerror or exc}") from None
    else:
        try:
            os.chmod(path, 0o700)  # mkdir's mode went through the umask: make it exact
        except OSError as exc:
            raise StoreError(f"cannot restrict permissions of {path}: {exc}") from None
        return path
    st = path.stat()
    if not stat.S_ISDIR(st.st_mode):
        raise StoreError(f"the data directory {path} exists and is not a directory")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise StoreError(f"the data directory {path} belongs to another user (uid "
                         f"{st.st_uid}); use a directory of your own")
    if st.st_mode & 0o022:
        raise StoreError(f"the data directory {path} is writable by other users (mode "
                         f"{stat.S_IMODE(st.st_mode):04o}); memls keeps its store only where "
                         f"nobody else can write: `chmod go-w` it or use a subdirectory")
    return path


@dataclass(frozen=True)
class Settings:
    """Settings read from <data dir>/config.toml; every key is optional.

    [ttl_days]          per memory type, days after valid_from before `maintain` expires it
    note = 90
    """

    ttl_days: dict[str, float] = field(default_factory=dict)
    vectors: bool = True                 # [index] vectors: Chroma + embedder on/off
    chroma_url: str | None = None        # [index] chroma_url, or $MEMLS_CHROMA_URL
    embedder_dir: str | None = None      # [models] embedder_dir: a folder with model.onnx
    reranker_dir: str | None = None      # [models] reranker_dir
    rerank: bool = True                  # [models] rerank, or $MEMLS_RERANK=0
    auto_supersede: bool = False         # [conflicts] auto_supersede: act on update markers
    retrieval: dict[str, int | float] = field(default_factory=dict)  # [retrieval] (RETRIEVAL)
    limits: Limits = field(default_factory=Limits)  # [limits] (memls.limits.SETTINGS)


# [retrieval] keys a user may set: the cross-encoder's share of a query's time on a slow
# machine (docs/benchmarks.md: depth against recall and latency). name -> (type, low, high).
RETRIEVAL = {
    "rerank_depth": (int, 1, 200),         # at most this many fused results are re-scored
    "rerank_relative": (float, 0.0, 1.0),  # only those scoring this share of the best
    "interactive_depth": (int, 1, 200),    # the as-you-type setting's depth
}


def load_settings(directory: Path) -> Settings:
    path = directory / CONFIG_NAME
    raw: dict = {}
    if path.exists():
        raw = _read(path)
    ttl = raw.get("ttl_days", {})
    if not isinstance(ttl, dict) or not all(
        isinstance(v, (int, float)) and v > 0 for v in ttl.values()
    ):
        raise InvalidInput(f"{path}: [ttl_days] maps memory types to positive days",
                           field="ttl_days")
    retrieval = _retrieval(path, raw.get("retrieval", {}))
    index, models = raw.get("index", {}), raw.get("models", {})
    conflicts = raw.get("conflicts", {})
    return Settings(
        ttl_days={str(k): float(v) for k, v in ttl.items()},
        vectors=bool(index.get("vectors", True)),
        chroma_url=os.environ.get("MEMLS_CHROMA_URL") or index.get("chroma_url"),
        embedder_dir=models.get("embedder_dir"),
        reranker_dir=models.get("reranker_dir"),
        rerank=bool(models.get("rerank", True)),
        auto_supersede=bool(conflicts.get("auto_supersede", False)),
        retrieval=retrieval,
        limits=from_table(path, raw.get("limits", {})),
    )


def _retrieval(path: Path, table: object) -> dict[str, int | float]:
    """The [retrieval] table, checked: known keys, numbers of the right kind, in range."""
    if not isinstance(table, dict):
        raise InvalidInput(f"{path}: [retrieval] must be a table", field="retrieval")
    out: dict[str, int | float] = {}
    for key, value in table.items():
        if key not in RETRIEVAL:
            raise InvalidInput(f"{path}: [retrieval] {key} is not a setting; known: "
                               f"{', '.join(RETRIEVAL)}", field=f"retrieval.{key}")
        kind, low, high = RETRIEVAL[key]
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or (kind is int and not isinstance(value, int)) or not low <= value <= high:
            what = "an integer" if kind is int else "a number"
            raise InvalidInput(f"{path}: [retrieval] {key} must be {what} from {low} to {high}, "
                               f"not {value!r}", field=f"retrieval.{key}")
        out[key] = kind(value)
    return out


def _read(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise StoreError(f"{path}: {exc}") from None
