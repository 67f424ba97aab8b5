"""The `memls` command's entry point: `memls mcp` goes straight to the light relay (an agent
lists its tools before the first model request only if they come within a few hundred ms,
and the full command line loads typer, rich and the engine's types); every other verb to the
command line (`memls.cli`)."""

from __future__ import annotations

import os
import sys
import time


def _started() -> float:
    """The time.monotonic() at which this process started (Linux: its start time in
    /proc/self/stat, before the interpreter's own start-up), else now: a command's --timeout
    counts from here. A process older than 5 s is not a command starting (another program
    imported this module): now."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        ticks = int(fields[19])  # field 22, starttime: clock ticks after boot
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0.0 <= age <= 5.0 else now


STARTED = _started()


def _mcp_args(argv: list[str]) -> tuple[str | None, str | None] | None:
    """(data dir, project) of `memls [--data-dir D] mcp [--project P]`; None for anything
    else, which the full command line reads (and explains, for a mistake)."""
    data_dir = project = None
    rest = list(argv)
    if rest[:1] == ["--data-dir"] and len(rest) >= 2:
        data_dir, rest = rest[1], rest[2:]
    elif rest and rest[0].startswith("--data-dir="):
        data_dir, rest = rest[0].split("=", 1)[1], rest[1:]
    if rest[:1] != ["mcp"]:
        return None
    rest = rest[1:]
    if rest[:1] in (["--project"], ["-p"]) and len(rest) == 2:
        project = rest[1]
    elif len(rest) == 1 and rest[0].startswith("--project="):
        project = rest[0].split("=", 1)[1]
    elif rest:
        return None
    if data_dir is not None and not data_dir.strip():
        return None  # refused, with the reason, by the command line
    return data_dir, project


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    light = _mcp_args(args)
    if light is not None:
        from memls.mcp.relay import main as relay

        return relay(*light)
    from memls.cli import State
    from memls.cli import main as full

    code = full(args, started=STARTED)
    if State.used_store:
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """End a command's process once it is done with the store (its handles closed) and its
    answer printed: stdio flushed and the atexit handlers run, the interpreter's teardown of
    every module skipped (0.5-1.1 s on 2 loaded cores once the models are loaded, against
    0.05-0.1 s), which would count against the command's --timeout."""
    import atexit

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        pass  # a reader that went away: the normal exit would not write either
    atexit._run_exitfuncs()
    os._exit(code)
