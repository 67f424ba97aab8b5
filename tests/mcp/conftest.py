"""Fixtures of the MCP front's tests (helpers: tests/mcp_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def workspace(tmp_path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root
