"""Helpers shared by the tests that drive the daemon with a real LSP client."""

from __future__ import annotations


def plain(value):
    """Custom request results come back from pygls as namedtuples: make them plain data."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
