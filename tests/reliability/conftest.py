"""Fixtures shared by the wire tests of this folder."""

from __future__ import annotations

import pytest


@pytest.fixture
def root(tmp_path):
    """The workspace folder a server is initialised with."""
    r = tmp_path / "proj"
    r.mkdir()
    return r
