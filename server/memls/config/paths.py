"""Where the data lives (the data directory, owner-only) and where derived model graphs are
cached."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

import platformdirs

from memls.config.env import ENV_DATA_DIR, environment
from memls.errors import InvalidInput, StoreError


def data_dir(explicit: str | os.PathLike | None = None) -> Path:
    """--data-dir, else $MEMLS_DATA_DIR, else the user's data directory for memls.

    An empty --data-dir is refused (it would mean the current directory); an empty
    $MEMLS_DATA_DIR counts as unset."""
    if explicit is not None and not str(explicit).strip():
        raise InvalidInput("must not be empty (name a directory)", field="dataDir")
    chosen = explicit or os.environ.get(ENV_DATA_DIR) or platformdirs.user_data_dir("memls")
    return Path(chosen).expanduser().resolve()


def model_cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """Where optimised model graphs are kept (`models.session`): $MEMLS_MODEL_CACHE, else the
    user's cache directory for memls; `off` keeps none. Derived files only: deleting the
    folder costs the next start ~0.5 s."""
    chosen = environment(environ).model_cache
    if isinstance(chosen, str) and chosen.strip().lower() in ("off", "none", "0", "false", "no"):
        return None
    folder = chosen if isinstance(chosen, str) else platformdirs.user_cache_dir("memls")
    return Path(folder).expanduser() / "onnx"


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
        raise StoreError(
            f"cannot create the data directory {path}: {exc.strerror or exc}"
        ) from None
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
        raise StoreError(
            f"the data directory {path} belongs to another user (uid {st.st_uid}); "
            "use a directory of your own"
        )
    if st.st_mode & 0o022:
        raise StoreError(
            f"the data directory {path} is writable by other users (mode "
            f"{stat.S_IMODE(st.st_mode):04o}); memls keeps its store only where nobody else "
            "can write: `chmod go-w` it or use a subdirectory"
        )
    return path
