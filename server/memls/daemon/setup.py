"""Process-wide settings a front applies before it serves: the limits of `memls.limits`."""

from __future__ import annotations

import os

from memls import limits
from memls.config import CONFIG_NAME, data_dir, load_settings
from memls.errors import MemlsError


def apply_limits(directory: str | os.PathLike | None) -> limits.Limits:
    """Read `[limits]` of <directory>/config.toml (defaults when there is none) and make it
    the process's limits. Does not create the directory."""
    path = data_dir(directory)
    if not (path / CONFIG_NAME).is_file():
        return limits.configure(limits.Limits())
    try:
        settings = load_settings(path)
    except MemlsError:  # a bad config.toml: the engine's start reports it, by name
        return limits.configure(limits.Limits())
    return limits.configure(
        limits.Limits(
            max_frame_bytes=settings.max_frame_bytes, max_content_bytes=settings.max_content_bytes
        )
    )
