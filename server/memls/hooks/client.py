"""`memls-hook`: the command Claude Code runs on SessionStart and UserPromptSubmit.

A light client of the owner socket: it imports the standard library only (no engine, no
msgspec, no typer), reads the hook's JSON on stdin, asks the daemon for `memory/context`
and prints Claude Code's hook output:

    {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "..."}}

or nothing at all when there is nothing new to give. It never blocks the prompt: it exits 0
whatever happens to the daemon (a bad installation, e.g. an unknown project, is exit 1 with one
line on stderr: Claude Code shows it and goes on). Each call names the project to the daemon
(`memory/watch`: its notes are indexed and followed from then on). When nobody serves the data
directory it starts the daemon (`memls serve --socket`, which goes on after the session) and
waits for it, within a bound (`START_WAIT`), so the first session after a reboot is briefed
with its notes too.

    memls-hook --project DIR --data-dir DIR [--budget N] [--prompt-budget N] [--timeout S]

`memls hooks install` writes it as `<python> -S <this file> ...`: run as a script without the
site machinery, it starts in about half the time of a console script (it needs nothing but
the standard library). Options are read by hand for the same reason (argparse and gettext
cost more than the rest of the hook's imports together).
"""

from __future__ import annotations

import json
import os
import sys
import time

if not __package__:  # run as a script (`python -S .../memls/hooks/client.py`): find memls
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from memls import reach  # the standard library only

TYPE_CHECKING = False  # `typing` and `pathlib` are a third of the hook's imports: not loaded
if TYPE_CHECKING:
    from typing import Any

EVENTS = ("SessionStart", "UserPromptSubmit")
FRESH_SOURCES = ("clear", "compact")  # the agent's context was emptied: brief it again
PROMPT_CHARS = 4000  # a pasted log is searched by its start (the engine reads 2,000 of it)
START_WAIT = {"SessionStart": 20.0, "UserPromptSubmit": 5.0}
"""Seconds a hook waits for a daemon it started (Claude Code's limit for the command, as
`memls hooks install` writes it, is 30 s): the first session after a reboot is briefed."""
DEADLINE = 25.0  # s: the whole call, well inside that limit


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


def brief(args: Options, event_name: str, params: dict[str, Any]) -> Any:
    """The project watched (its notes indexed, at the first call within the deadline), then
    its briefing: two requests on one connection, the daemon started when none serves."""
    deadline = time.monotonic() + DEADLINE
    conn = reach.connect(args.data_dir, "hook:claude-code", args.timeout, START_WAIT[event_name])
    try:
        wait = max(0.0, min(10.0, deadline - time.monotonic() - args.timeout))
        try:
            conn.request("memory/watch", {"project": args.project, "wait": round(wait, 3)})
        except reach.Failed:
            pass  # not a folder: nothing to watch; the briefing still answers for the key
        return conn.request("memory/context", params, timeout=args.timeout)
    finally:
        conn.close()


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
    try:
        result = brief(args, str(event["hook_event_name"]), params)
    except reach.Unavailable:
        return 0, "", ""  # no daemon within the wait: nothing this time, never a blocked prompt
    except reach.Failed as exc:
        return 1, "", f"memls-hook: {exc}\n"
    except OSError as exc:
        return 0, "", f"memls-hook: cannot start the memls daemon: {exc}\n"
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
