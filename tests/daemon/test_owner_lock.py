"""The owner lock names its holder only while the lock is held."""

from __future__ import annotations

import os
import subprocess
import sys

from memls.ownership import OwnerLock

HOLD = (
    "import sys, pathlib; from memls.ownership import OwnerLock; "
    "lock = OwnerLock(pathlib.Path(sys.argv[1])); lock.acquire(); "
    "print('held', flush=True); sys.stdin.read()"
)


def test_the_holder_is_the_process_holding_the_lock(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "held"
        assert OwnerLock(tmp_path).holder() == proc.pid
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    assert OwnerLock(tmp_path).holder() is None  # it ended: no owner


def test_a_pid_left_in_a_free_lock_file_is_not_an_owner(tmp_path):
    """A killed owner leaves its pid behind, and the system may give that number to another
    process: a test or a tool that signals `holder()` must not hit that one."""
    (tmp_path / "owner.lock").write_text(str(os.getpid()))
    assert OwnerLock(tmp_path).holder() is None


def test_release_leaves_no_pid(tmp_path):
    lock = OwnerLock(tmp_path)
    lock.acquire()
    assert OwnerLock(tmp_path).holder() == os.getpid()
    lock.release()
    assert (tmp_path / "owner.lock").read_text() == ""
    assert OwnerLock(tmp_path).holder() is None
