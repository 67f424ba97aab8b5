"""Child processes of one test, killed at teardown if still alive."""

from __future__ import annotations

import pytest

from daemon_helpers import Procs


@pytest.fixture
def procs(tmp_path):
    group = Procs(tmp_path)
    yield group
    group.close()
