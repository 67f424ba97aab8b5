"""The projects whose notes the daemon watches: `watch`, `watched`, `unwatch`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional
from urllib.parse import unquote, urlparse

import typer

from memls import protocol
from memls.cli.common import JsonOpt, _call, _emit, app
from memls.errors import InvalidInput


def _folder(raw: Optional[str]) -> str:
    folder = Path(raw or ".").expanduser().resolve()
    if not folder.is_dir():
        raise InvalidInput(f"{folder} is not a folder", field="project")
    return str(folder)


@app.command()
def watch(
    folder: Optional[str] = typer.Argument(None, help="The project's folder (default: here)."),
    as_json: bool = JsonOpt,
) -> None:
    """Have the daemon index and watch a project's notes (every agent's instruction files,
    nested ones too, .memls/, decision records), from now on and across restarts."""
    r: protocol.WatchResult = _call("watch", protocol.WatchParams, {"project": _folder(folder)})
    state = "watched" if r.watching else "recorded (no daemon runs: indexed once now)"
    read = f"{len(r.notes)} note file(s) indexed" if r.indexed else "its notes are still being read"
    refused = [f"  not read: {link.message}" for link in r.refused]
    warned = [f"  {_short(w.uri, r.project)}:{w.line + 1}: {w.message}" for w in r.warnings]
    _emit(r, as_json, "\n".join([f"{r.project}: {state}; {read}", *refused, *warned]))


def _short(uri: str, project: str) -> str:
    path = Path(unquote(urlparse(uri).path) or uri)
    try:
        return path.relative_to(project).as_posix()
    except ValueError:
        return str(path)


@app.command()
def watched(as_json: bool = JsonOpt) -> None:
    """Every project whose notes the daemon watches."""
    r: protocol.WatchedResult = _call("watched", protocol.WatchedParams, {})
    lines = [
        f"{p.project}  {p.notes} note file(s)  since {p.since[:10]} (via {p.via})"
        + ("" if p.exists else "  MISSING: the folder is gone")
        for p in r.projects
    ]
    _emit(r, as_json, "\n".join(lines) or "(no project is watched)")


@app.command()
def unwatch(
    folder: Optional[str] = typer.Argument(None, help="The project's folder (default: here)."),
    as_json: bool = JsonOpt,
) -> None:
    """Stop watching a project's notes (its memories stay; a front that names the project
    again watches it again)."""
    raw = folder or "."
    path = Path(raw).expanduser()
    project = str(path.resolve()) if path.is_dir() else raw
    r: protocol.UnwatchResult = _call("unwatch", protocol.UnwatchParams, {"project": project})
    _emit(r, as_json, f"{r.project}: {'no longer watched' if r.removed else 'was not watched'}")
