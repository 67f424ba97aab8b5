"""Process-wide settings a front applies before it serves: the limits of `memls.limits`."""

from __future__ import annotations

import os

from memls import limits
from memls.config import CONFIG_NAME, data_dir, load_settings


def apply_limits(directory: str | os.PathLike | None) -> limits.Limits:
    """Read `[limits]` of <directory>/config.toml (defaults when there is none) and make it
    the process's limits. Does not create the directory."""
    path = data_dir(directory)
    if not (path / CONFIG_NAME).is_file():
        return limits.configure(limits.Limits())
    settings = load_settings(path)
    return limits.configure(
        limits.Limits(
            max_frame_bytes=settings.max_frame_bytes, max_content_bytes=settings.max_content_bytes
        )
    )
