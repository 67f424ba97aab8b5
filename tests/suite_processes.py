"""The processes the suite starts: stopped when the test or the module that started them ends,
and the run fails, naming them, if any outlived it. A pytest plugin (tests/conftest.py loads
it; `-p suite_processes` elsewhere), with xdist or without.

A process is the suite's when it names a folder of the run (pytest's basetemp, or one test's
folders in it): on its command line (`--data-dir`), in its environment (MEMLS_DATA_DIR, HOME,
RUN_MARK), as its working folder, or, for the end check, in a file it holds open (the owner
lock). RUN_MARK is set to the run's folder before the workers start, so every process the suite
starts carries it unless a test builds an environment from nothing; those still name a folder
of the run. A user's own daemon beside the tests names none of these.
"""

from __future__ import annotations

import os
import re
import select
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

# The run's folder, in the environment of every process the suite starts. Not MEMLS_*: the
# tests that clear memls's variables for a child (tests/test_config.py) keep it.
RUN_MARK = "PYTEST_MEMLS_RUN"
ATTRS = ["pid", "ppid", "cmdline", "environ", "cwd", "status", "create_time"]
STOP_SECONDS = 60.0  # a daemon closes its store on SIGTERM: far above what a loaded machine needs


def _pattern(folders: Iterable[Path]) -> re.Pattern[str]:
    """A folder named whole: `.../test_x1` followed by `/`, a separator or the end, so that
    `.../test_x10` is not taken for it."""
    names = {str(f) for f in folders} | {str(Path(f).resolve()) for f in folders}
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(f"(?:{alternatives})(?=[/\\0\\s:;,=\"']|$)")


def _ancestors() -> set[int]:
    me = psutil.Process()
    return {me.pid, *(p.pid for p in me.parents())}


@dataclass
class Found:
    """One process of the suite, as it was when found."""

    process: psutil.Process
    cmdline: list[str]
    environ: dict[str, str]
    cwd: str | None
    named: str  # the first folder of the suite it names, and where

    @property
    def data_dir(self) -> str | None:
        args = self.cmdline
        for i, arg in enumerate(args):
            if arg == "--data-dir" and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith("--data-dir="):
                return arg.split("=", 1)[1]
        return self.environ.get("MEMLS_DATA_DIR")

    def describe(self) -> str:
        age = time.time() - self.process.create_time()
        command = " ".join(self.cmdline)
        known = f"data dir {self.data_dir}" if self.data_dir else "no data dir"
        if not self.data_dir or self.data_dir not in self.named:
            known += f"; names {self.named}"
        return f"pid {self.process.pid}, {age:.0f} s old: {command[:400]}\n    {known}"


def find(folders: Iterable[Path], *, open_files: bool = False) -> list[Found]:
    """The processes (this one, its ancestors and zombies aside) that name one of `folders`
    on their command line, in their environment or as their working folder; with
    `open_files`, also through a file they hold open (slower: it reads every process's
    descriptors)."""
    folders = list(folders)
    if not folders:
        return []
    pattern = _pattern(folders)
    needles = [os.fsencode(f) for f in {*map(str, folders), *(str(f.resolve()) for f in folders)}]
    skip = _ancestors()
    found = []
    for pid in psutil.pids():
        raw = None if pid in skip else _raw(pid)
        if raw is None:  # this process, an ancestor, another user's or one gone
            continue
        if not open_files and not any(n in raw for n in needles):
            continue  # the common case, decided without parsing
        try:
            proc = psutil.Process(pid)
            info = proc.as_dict(ATTRS, ad_value=None)
        except psutil.NoSuchProcess:
            continue
        if info["status"] in (None, psutil.STATUS_ZOMBIE) or info["environ"] is None:
            continue
        cmdline, environ, cwd = info["cmdline"] or [], info["environ"], info["cwd"]
        if info["ppid"] == os.getpid() and environ.get("PYTEST_XDIST_WORKER"):
            continue  # this controller's own worker (gone by the end check)
        named = _named(pattern, cmdline, environ, cwd)
        if named is None and open_files:
            named = _named_by_files(pattern, proc)
        if named is not None:
            found.append(Found(proc, cmdline, environ, cwd, named))
    return found


def _raw(pid: int) -> bytes | None:
    """A process's command line, environment and working folder in one byte string, read as
    the kernel gives them (psutil's parsed forms cost eight times as much, for every process
    after every test); None for another user's process or one that has gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
        cwd = os.readlink(f"/proc/{pid}/cwd".encode())
    except OSError:
        return None
    return b"\0".join((cmdline, environ, cwd))


def _named(pattern, cmdline: list[str], environ: dict[str, str], cwd: str | None) -> str | None:
    for arg in cmdline:
        if pattern.search(arg):
            return f"{arg} (command line)"
    for key, value in environ.items():
        if pattern.search(value):
            return f"{key}={value} (environment)"
    if cwd and pattern.search(cwd):
        return f"{cwd} (working folder)"
    return None


def _named_by_files(pattern, proc: psutil.Process) -> str | None:
    try:
        files = proc.open_files()
    except (psutil.AccessDenied, psutil.NoSuchProcess):
        return None
    for f in files:
        if pattern.search(f.path):
            return f"{f.path} (open file)"
    return None


def wait_gone(found: list[Found], timeout: float) -> list[Found]:
    """Those of `found` still running after `timeout` seconds, waited for on pidfds (each
    readable when its process exits), not by polling."""
    fds: dict[int, Found] = {}
    for f in found:
        try:
            fd = os.pidfd_open(f.process.pid)
        except ProcessLookupError:
            continue
        if f.process.is_running():  # the same process (its start time), not a reused pid
            fds[fd] = f
        else:
            os.close(fd)
    deadline = time.monotonic() + timeout
    try:
        while fds and (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select(list(fds), [], [], left)
            for fd in ready:
                os.close(fd)
                del fds[fd]
        return list(fds.values())
    finally:
        for fd in fds:
            os.close(fd)


def signal_all(found: list[Found], signum: int) -> None:
    for f in found:
        try:
            if f.process.is_running():
                f.process.send_signal(signum)
        except psutil.NoSuchProcess:
            pass


def stop(found: list[Found], timeout: float = STOP_SECONDS) -> list[Found]:
    """SIGTERM to each, then wait for them to exit; SIGKILL to any still there after
    `timeout` seconds. Returns those that needed SIGKILL."""
    signal_all(found, signal.SIGTERM)
    stubborn = wait_gone(found, timeout)
    signal_all(stubborn, signal.SIGKILL)
    wait_gone(stubborn, 10.0)
    return stubborn


def reap(folders: Iterable[Path], timeout: float = STOP_SECONDS) -> list[Found]:
    """Stop every process that names one of `folders`, looking again after each round (a
    relay stopped while it started its daemon leaves that daemon behind it). Returns those that
    did not exit on SIGTERM."""
    folders = list(folders)
    stubborn: list[Found] = []
    for _ in range(5):
        found = find(folders)
        if not found:
            break
        stubborn += stop(found, timeout)
    return stubborn


def new_folders(base: Path, before: set[str]) -> list[Path]:
    """The folders made in `base` (a worker's basetemp) since `before` was listed."""
    try:
        return [base / name for name in os.listdir(base) if name not in before]
    except FileNotFoundError:
        return []


# -- the plugin ------------------------------------------------------------------------------


def _stop_what_was_started(tmp_path_factory: pytest.TempPathFactory, what: str):
    """Around a test or a module: stop every process that names a folder made in the worker's
    basetemp meanwhile (a test's tmp_path, a module's mktemp): the daemons that `memls mcp`,
    the hooks and the command line start and leave running, LSP servers, owners and clients.
    SIGTERM, then SIGKILL after STOP_SECONDS; one that needed SIGKILL fails the test."""
    base = tmp_path_factory.getbasetemp()
    before = set(os.listdir(base))
    yield
    stubborn = reap(new_folders(base, before))
    assert not stubborn, f"{what} left processes that did not exit on SIGTERM:\n" + "\n".join(
        f.describe() for f in stubborn
    )


@pytest.fixture(autouse=True)
def stop_the_tests_processes(tmp_path_factory):
    yield from _stop_what_was_started(tmp_path_factory, "the test")


@pytest.fixture(scope="module", autouse=True)
def stop_the_modules_processes(tmp_path_factory):
    yield from _stop_what_was_started(tmp_path_factory, "the module")


def _run_folder(config: pytest.Config) -> Path:
    # the run's basetemp (a worker's is a folder in it); outside a fixture the factory is only
    # reachable through this attribute, which xdist reads too
    return config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]


@pytest.hookimpl(trylast=True)  # after the tmp_path plugin has made its factory
def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller, or the only process with -n 0
        os.environ[RUN_MARK] = str(_run_folder(config))  # the workers and all they start


LEFT_BEHIND = "processes left behind"
GRACE_SECONDS = 5.0  # for a process that is exiting as the run ends


@pytest.hookimpl(trylast=True)  # after xdist has stopped its workers
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the run if processes of the suite outlived it, naming each (pid, age, command
    line, data directory, what of the run it names); they are stopped once named."""
    config = session.config
    if hasattr(config, "workerinput"):
        return
    left = wait_gone(find([_run_folder(config)], open_files=True), GRACE_SECONDS)
    if not left:
        return
    stubborn = stop(left)
    text = f"{len(left)} process(es) of the test suite outlived it:\n" + "\n".join(
        f.describe() + ("\n    needed SIGKILL" if f in stubborn else "\n    stopped now")
        for f in left
    )
    report = pytest.TestReport(
        nodeid=f"{Path(__file__).name}::{LEFT_BEHIND}",
        location=(Path(__file__).name, None, LEFT_BEHIND),
        keywords={},
        outcome="failed",
        longrepr=text,
        when="teardown",
    )
    config.hook.pytest_runtest_logreport(report=report)
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
