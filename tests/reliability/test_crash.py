"""SIGKILL the owner while LSP and CLI clients write (crash.py).

`make test` kills it MEMLS_CRASH_KILLS times (default 6); `make soak` 60 times."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reliability.crash import run_crash_suite


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs Linux /proc/locks")
def test_acknowledged_operations_survive_sigkills_of_the_owner(tmp_path):
    kills = int(os.environ.get("MEMLS_CRASH_KILLS", 6))
    figures = run_crash_suite(tmp_path, kills=kills)
    print(f"\ncrash suite: {figures}")
    assert figures["kills"] == kills
    assert figures["lost"] == 0 and figures["duplicated"] == 0
    assert figures["acknowledged_stores"] > 5 * kills  # the clients kept writing throughout
    assert figures["acknowledged_forgets"] and figures["acknowledged_feedback"]
