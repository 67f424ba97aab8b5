"""The suite's process cleanup (tests/suite_processes.py), in a real pytest run with two xdist
workers: a process a test leaves in its folder is stopped before the next test begins; one
that names no folder of the test fails the run at its end, named; a process the run did not
start (a user's daemon) is neither named nor stopped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psutil

from suite_processes import RUN_MARK, _pattern

INNER = r'''
import os, subprocess, sys
from pathlib import Path

import psutil

OUT = Path(os.environ["INNER_OUT"])


def detached(cwd):
    """A sleeper whose parent exits at once, as `memls mcp` leaves the daemon it started."""
    return int(subprocess.run([sys.executable, "-c", os.environ["DETACH"], str(cwd)],
                              capture_output=True, text=True, check=True).stdout)


def test_leaves_a_process_in_its_folder(tmp_path):
    pid = detached(tmp_path)
    (OUT / "in-folder").write_text(f"{pid} {psutil.Process(pid).create_time()}")


def test_it_is_gone_when_the_next_test_begins():
    pid, started = (OUT / "in-folder").read_text().split()
    try:  # gone, a zombie (exited; a machine without an init that reaps keeps those), or a new one
        process = psutil.Process(int(pid))
        assert process.status() == "zombie" or process.create_time() != float(started)
    except psutil.NoSuchProcess:
        pass


def test_leaves_a_process_that_names_no_folder_of_the_test():
    (OUT / "elsewhere").write_text(str(detached("/")))
'''

DETACH = (
    "import subprocess, sys; "
    "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], "
    "cwd=sys.argv[1], start_new_session=True, stdin=subprocess.DEVNULL, "
    "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)"
)


def _sleeper(env: dict[str, str]) -> psutil.Process:
    out = subprocess.run(
        [sys.executable, "-c", DETACH, "/"], env=env, capture_output=True, text=True, check=True
    )
    return psutil.Process(int(out.stdout))


def test_a_leaking_test_is_cleaned_up_and_a_leak_past_the_tests_fails_the_run(tmp_path):
    inner, out = tmp_path / "inner", tmp_path / "out"
    inner.mkdir()
    out.mkdir()
    (inner / "pytest.ini").write_text("[pytest]\n")
    (inner / "test_leaks.py").write_text(INNER)
    users = {k: v for k, v in os.environ.items() if k != RUN_MARK}
    user_daemon = _sleeper(users)  # started beside the tests, naming nothing of them
    env = {
        **os.environ,
        "INNER_OUT": str(out),
        "DETACH": DETACH,
        "PYTHONPATH": str(Path(__file__).parent),
    }
    env.pop(RUN_MARK)  # the inner run sets its own
    try:
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "suite_processes", "-p", "no:cacheprovider"]
            + ["-n", "2", "--dist", "loadfile", f"--basetemp={tmp_path / 'run'}", "-q"],
            cwd=inner,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        leaked = int((out / "elsewhere").read_text())
        assert run.returncode == 1, run.stdout + run.stderr
        assert "3 passed, 1 error" in run.stdout, run.stdout
        assert "ERROR suite_processes.py::processes left behind" in run.stdout, run.stdout
        assert f"pid {leaked}," in run.stdout and "time.sleep(600)" in run.stdout, run.stdout
        assert f"{RUN_MARK}={tmp_path / 'run'} (environment)" in run.stdout, run.stdout
        assert f"pid {user_daemon.pid}," not in run.stdout
        assert not psutil.pid_exists(leaked) or psutil.Process(leaked).status() == "zombie"
        assert user_daemon.is_running()
    finally:
        user_daemon.terminate()
        user_daemon.wait(timeout=30)


def test_a_folder_is_named_whole():
    folder = Path("/tmp/pytest-of-u/pytest-3/popen-gw0/test_x1")
    pattern = _pattern([folder])
    for text in (f"{folder}", f"{folder}/data", f"--data-dir={folder}/d", f"HOME={folder}"):
        assert pattern.search(text), text
    for text in (f"{folder}0/data", f"{folder}-b", "/tmp/pytest-of-u/pytest-3/popen-gw0"):
        assert not pattern.search(text), text
