"""`memls-hook`: the command Claude Code runs on SessionStart and UserPromptSubmit.

A light client of the owner socket: it imports the standard library only (no engine, no
msgspec, no typer), reads the hook's JSON on stdin, asks the daemon for `memory/context`
and prints Claude Code's hook output:

    {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "..."}}

or nothing at all when there is nothing new to give. It never blocks the prompt: it exits 0
whatever happens to the daemon (a bad installation, e.g. an unknown project, is exit 1 with one
line on stderr: Claude Code shows it and goes on). When nobody serves the data directory it
starts the daemon in the background (`memls serve --socket`) for the next prompt and answers
with nothing, at once.

    memls-hook --project DIR --data-dir DIR [--budget N] [--prompt-budget N] [--timeout S]

`memls hooks install` writes it as `<python> -S <this file> ...`: run as a script without the
site machinery, it starts in about half the time of a console script (it needs nothing but
the standard library). Options are read by hand for the same reason (argparse and gettext
cost more than the rest of the hook's imports together).
"""

from __future__ import annotations

import json
import os
import socket
import sys

TYPE_CHECKING = False  # `typing` and `pathlib` are a third of the hook's imports: not loaded
if TYPE_CHECKING:
    from typing import Any

SOCKET_NAME = "memls.sock"
EVENTS = ("SessionStart", "UserPromptSubmit")
FRESH_SOURCES = ("clear", "compact")  # the agent's context was emptied: brief it again
MAX_UNIX_PATH = 100
PROMPT_CHARS = 4000  # a pasted log is searched by its start (the engine reads 2,000 of it)


class Unavailable(Exception):
    """Nobody serves the data directory (no socket, refused, or silent)."""


class Failed(Exception):
    """The daemon answered with an error (bad project, bad input)."""


def _address(path: str) -> str:
    """The socket's address; a long path through /proc/self/fd (as the owner binds it)."""
    if len(os.fsencode(path)) <= MAX_UNIX_PATH:
        return path
    fd = os.open(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY)  # open until the end
    return f"/proc/self/fd/{fd}/{os.path.basename(path)}"


def request(data_dir: str, method: str, params: dict[str, Any], timeout: float) -> Any:
    """One request on the owner socket (after the hello), its result; Unavailable or Failed."""
    path = os.path.join(data_dir, SOCKET_NAME)
    if not os.path.exists(path):
        raise Unavailable(f"no owner socket at {path}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        try:
            sock.connect(_address(path))
        except OSError as exc:
            raise Unavailable(f"{path}: {exc}") from None
        hello = {"id": 1, "method": "$/hello", "params": {"front": "hook:claude-code"}}
        call = {"id": 2, "method": method, "params": params}
        sock.sendall((json.dumps(hello) + "\n" + json.dumps(call) + "\n").encode())
        reader = sock.makefile("rb")
        while True:
            try:
                line = reader.readline()
            except OSError as exc:  # a timeout included
                raise Unavailable(f"no answer from the daemon: {exc}") from None
            if not line:
                raise Unavailable("the daemon closed the connection")
            reply = json.loads(line)
            if reply.get("id") != 2:
                continue
            if "error" in reply:
                error = reply["error"] or {}
                field = f"{error.get('field')}: " if error.get("field") else ""
                raise Failed(f"{field}{error.get('message', 'error')}")
            return reply.get("result")
    finally:
        sock.close()


def start_daemon(data_dir: str) -> None:
    """`memls serve --socket` in the background, detached: it owns the store for the next
    prompt (and exits at once when another process owns it already)."""
    import subprocess

    log = os.path.join(data_dir, "daemon.log")
    try:
        os.makedirs(data_dir, mode=0o700, exist_ok=True)
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    except OSError:
        fd = subprocess.DEVNULL
    try:
        subprocess.Popen(
            [sys.executable, "-m", "memls", "--data-dir", data_dir, "serve", "--socket"],
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        if isinstance(fd, int) and fd >= 0:
            os.close(fd)


class Options:
    """The command line: `--name value` pairs (see the module doc)."""

    def __init__(self, argv: list[str]) -> None:
        self.project = ""
        self.data_dir = ""
        self.budget = 800
        self.prompt_budget = 400
        self.timeout = 5.0
        pairs = dict(zip(argv[::2], argv[1::2], strict=False))
        if (
            len(argv) % 2
            or not set(pairs) <= set(FLAGS)
            or not {"--project", "--data-dir"} <= set(pairs)
        ):
            raise ValueError(USAGE)
        for flag, value in pairs.items():
            name, kind = FLAGS[flag]
            try:
                setattr(self, name, kind(value))
            except ValueError:
                number = "a whole number" if kind is int else "a number"
                raise ValueError(f"{flag}: {value!r} is not {number}") from None


FLAGS: dict[str, tuple[str, Any]] = {
    "--project": ("project", str),
    "--data-dir": ("data_dir", str),
    "--budget": ("budget", int),
    "--prompt-budget": ("prompt_budget", int),
    "--timeout": ("timeout", float),
}
USAGE = (
    "usage: memls-hook --project DIR --data-dir DIR [--budget N] [--prompt-budget N] "
    "[--timeout S]   (reads Claude Code's hook input on stdin)"
)


def params_for(event: dict[str, Any], args: Options) -> dict[str, Any] | None:
    """The memory/context params of one hook input; None for an event this hook ignores."""
    name = event.get("hook_event_name")
    session = event.get("session_id") or None
    params: dict[str, Any] = {"project": args.project}
    if isinstance(session, str) and session.strip():
        params["session"] = session[:200]
    if name == "SessionStart":
        params["budget"] = args.budget
        params["reset"] = event.get("source") in FRESH_SOURCES
        return params
    if name == "UserPromptSubmit":
        prompt = event.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return None
        params.update(prompt=prompt[:PROMPT_CHARS], budget=args.prompt_budget, standing=False)
        return params
    return None


def output(event_name: str, markdown: str) -> str:
    """Claude Code's JSON hook output adding `markdown` to the agent's context."""
    return json.dumps(
        {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": markdown}},
        ensure_ascii=False,
    )


def run(args: Options, stdin: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) for one hook call."""
    try:
        event = json.loads(stdin) if stdin.strip() else {}
    except ValueError:
        return 1, "", "memls-hook: the hook input on stdin is not JSON\n"
    if not isinstance(event, dict):
        return 1, "", "memls-hook: the hook input on stdin is not a JSON object\n"
    params = params_for(event, args)
    if params is None:
        return 0, "", ""
    data_dir = args.data_dir
    try:
        result = request(data_dir, "memory/context", params, args.timeout)
    except Unavailable:
        try:
            start_daemon(data_dir)
        except OSError as exc:
            return 0, "", f"memls-hook: cannot start the memls daemon: {exc}\n"
        return 0, "", ""
    except Failed as exc:
        return 1, "", f"memls-hook: {exc}\n"
    markdown = (result or {}).get("markdown") or ""
    if not markdown:
        return 0, "", ""
    return 0, output(str(event["hook_event_name"]), markdown) + "\n", ""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv in (["--help"], ["-h"]):
        sys.stdout.write(USAGE + "\n")
        return 0
    try:
        args = Options(argv)
    except ValueError as exc:
        sys.stderr.write(f"memls-hook: {exc}\n")
        return 1
    code, out, err = run(args, sys.stdin.read())
    if out:
        sys.stdout.write(out)
    if err:
        sys.stderr.write(err)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
