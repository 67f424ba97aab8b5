"""Verbs for agents: the briefing (`context`), `promote` (share a memory through the
repository), and `hooks` (install memls into Claude Code's hooks)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from memls import protocol
from memls.cli.common import JsonOpt, State, _call, _emit, app
from memls.config import data_dir as resolve_data_dir
from memls.errors import InvalidInput
from memls.hooks import claude

hooks_app = typer.Typer(
    help="Claude Code's hooks: install, uninstall, status.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(hooks_app, name="hooks")

AgentProjectOpt = typer.Option(
    None,
    "--project",
    "-p",
    help="The project: a folder (keyed by its absolute path, as the editor and the MCP "
    "front key it) or a project key (required).",
)


def _project(raw: str | None) -> str | None:
    """A folder that exists is keyed by its resolved absolute path (the editor's workspace
    folder, the MCP root, the hook's project); any other text is a key as it is."""
    if raw is None or not raw.strip():
        return raw
    path = Path(raw).expanduser()
    return str(path.resolve()) if path.is_dir() else raw


@app.command()
def context(
    project: Optional[str] = AgentProjectOpt,
    prompt: Optional[str] = typer.Option(None, "--prompt", help="What the agent is asked."),
    paths: Optional[list[str]] = typer.Option(
        None,
        "--paths",
        "--path",
        help="Files the agent works on: several comma-separated (a.py,b.py), or repeat.",
    ),
    budget: int = typer.Option(800, "--budget", help="Tokens at most (50..32000)."),
    session: Optional[str] = typer.Option(
        None, "--session", help="Within one session, a memory is given once."
    ),
    reset: bool = typer.Option(False, "--reset", help="Forget what the session was given."),
    standing: bool = typer.Option(
        True,
        "--standing/--no-standing",
        help="--no-standing: only what is relevant to the prompt and paths (above the "
        "relevance floor), as the prompt hook gives it.",
    ),
    as_json: bool = JsonOpt,
) -> None:
    """The project's briefing: standing decisions, conventions and constraints, then what is
    relevant to the prompt and paths, as Markdown within the token budget."""
    data = {
        "project": _project(project),
        "prompt": prompt,
        "paths": [p.strip() for raw in paths or [] for p in raw.split(",") if p.strip()],
        "budget": budget,
        "session": session,
        "reset": reset,
        "standing": standing,
    }
    r: protocol.ContextResult = _call("context", protocol.ContextParams, data, watch=True)
    if as_json:
        _emit(r, True, "")
        return
    sys.stdout.write(r.markdown)
    tail = f"{r.tokens} of {r.budget} tokens ({r.tokenizer})"
    if r.dropped:
        tail += f"; {r.dropped} left out for the budget"
    if r.repeated:
        tail += f"; {r.repeated} given earlier in this session"
    print(("" if r.markdown else "(nothing new to give)\n") + tail, file=sys.stderr)


@app.command()
def promote(
    memory_id: str = typer.Argument(..., metavar="ID", help="The memory to share."),
    project: Optional[str] = AgentProjectOpt,
    to: str = typer.Option(
        ".memls/memory.md",
        "--to",
        help="The note, relative to the project's folder; `claude-memory`: a topic file of "
        "Claude Code's auto memory of the project (with its MEMORY.md pointer).",
    ),
    as_json: bool = JsonOpt,
) -> None:
    """Write a memory into a note of the project (a list item under the heading of its type),
    so it travels with git to the team; the memory becomes that note unit."""
    data = {"id": memory_id, "project": _project(project), "to": to}
    r: protocol.PromoteResult = _call("promote", protocol.PromoteParams, data)
    span = protocol.SourceRange.parse(r.source_range)
    line = span.start_line + 1 if span else 0
    what = "already in" if r.already else ("written to new note" if r.created else "written to")
    _emit(r, as_json, f"{r.id} {what} {r.path}:{line}")


# ---------------------------------------------------------------- hooks


def _agent(agent: str) -> None:
    if agent != "claude":
        raise InvalidInput(
            f"unknown agent {agent!r}; memls installs hooks for: claude", field="agent"
        )


def _folder(project: Optional[str]) -> Path:
    folder = Path(project or ".").expanduser().resolve()
    if not folder.is_dir():
        raise InvalidInput(f"{folder} is not a folder", field="project")
    return folder


def _hook_prefix() -> list[str]:
    """How the hook runs: this interpreter, without site (`-S`), on the client's file (it
    imports only the standard library, so it needs no installed package on the path)."""
    from memls.hooks import client

    return [sys.executable, "-S", str(Path(client.__file__).resolve())]


FolderOpt = typer.Option(None, "--project", "-p", help="The repository (default: here).")


@hooks_app.command("install")
def hooks_install(
    agent: str = typer.Argument(..., help="The agent: claude."),
    project: Optional[str] = FolderOpt,
    budget: int = typer.Option(800, "--budget", help="SessionStart briefing, tokens."),
    prompt_budget: int = typer.Option(400, "--prompt-budget", help="Per prompt, tokens."),
) -> None:
    """Merge memls's SessionStart and UserPromptSubmit hooks into the project's
    .claude/settings.local.json (created if absent; everything else in it is kept)."""
    _agent(agent)
    for name, value in (("budget", budget), ("promptBudget", prompt_budget)):
        if not 50 <= value <= 32_000:
            raise InvalidInput("tokens from 50 to 32000", field=name)
    folder = _folder(project)
    cmd = claude.command(
        _hook_prefix(),
        str(folder),
        str(resolve_data_dir(State.data_dir)),
        budget,
        prompt_budget,
    )
    try:
        outcome = claude.install(folder, cmd)
    except claude.SettingsError as exc:
        raise InvalidInput(str(exc), field="project") from None
    state = "installed in" if outcome.changed else "already installed in"
    print(f"memls hooks {state} {outcome.path}: {', '.join(sorted(outcome.events))}")


@hooks_app.command("uninstall")
def hooks_uninstall(
    agent: str = typer.Argument(..., help="The agent: claude."),
    project: Optional[str] = FolderOpt,
) -> None:
    """Remove exactly memls's hook entries from the project's .claude/settings.local.json."""
    _agent(agent)
    try:
        outcome = claude.uninstall(_folder(project))
    except claude.SettingsError as exc:
        raise InvalidInput(str(exc), field="project") from None
    state = "removed from" if outcome.changed else "not installed in"
    print(f"memls hooks {state} {outcome.path}")


@hooks_app.command("status")
def hooks_status(project: Optional[str] = FolderOpt, as_json: bool = JsonOpt) -> None:
    """Where memls's hooks are installed (the project's and the user's Claude Code settings),
    and whether the daemon they talk to is serving."""
    import json

    folder = _folder(project)
    try:
        outcomes = claude.status(folder)
    except claude.SettingsError as exc:
        raise InvalidInput(str(exc), field="project") from None
    from memls import reach

    directory = resolve_data_dir(State.data_dir)
    try:  # asked as the hook asks: a socket file left by a dead owner is not a daemon
        conn = reach.Connection(str(directory), "cli", 2.0)
        try:
            conn.request("memory/health", {})
        finally:
            conn.close()
        serving = True
    except (reach.Unavailable, reach.Failed):
        serving = False
    if as_json:
        files = [{"path": str(o.path), "events": o.events} for o in outcomes]
        print(json.dumps({"files": files, "dataDir": str(directory), "daemon": serving}))
        return
    installed = [o for o in outcomes if o.events]
    for o in installed:
        for event, commands in sorted(o.events.items()):
            for cmd in commands:
                print(f"{o.path}: {event}: {cmd}")
    if not installed:
        print(f"memls hooks are not installed for {folder} (memls hooks install claude)")
    print(f"daemon: {'serving' if serving else 'not running'} ({directory / 'memls.sock'})")
