"""Which project an MCP call acts on: never a default, never all of them.

1. `memls mcp --project P` pins one project (a directory given there is keyed by its resolved
   absolute path, like a workspace folder); a call naming another is refused.
2. Else the client's roots (MCP `roots/list`): each root folder is a project keyed exactly as
   the LSP front keys a workspace folder (`scope.folder_path`), so the editor's notes and the
   agent's memories of one folder share a project. One root: that one. Several: the call
   names one in `project`, or is refused. A `project` that is not one of the roots is refused.
3. Else (a client that sends no roots, as Codex) the project that holds the server's working
   directory, which such a client starts the server in: the nearest folder at or above it
   that is a git repository or holds the notes of a project (AGENTS.md, CLAUDE.md, `.memls/`).
   It acts as the one root: a `project` naming another is refused, and every result names
   the project it acts on.
4. Else (no such folder) the call's `project` argument.
5. Else the call is refused, saying how to name one.
"""

from __future__ import annotations

import os
from pathlib import Path

from memls.errors import InvalidInput
from memls.scope import folder_path, project_key


def key(value: object, *, field: str = "project") -> str:
    """The project key a tool argument names: a file:// URI or an absolute path is keyed as a
    folder (resolved absolute path); anything else is a project key as the CLI takes it."""
    raw = project_key(value, field=field)
    if raw.startswith("file:"):
        path = folder_path(raw)
        if path is None:
            raise InvalidInput(f"{raw} names no folder", field=field)
        return str(path)
    if os.path.isabs(raw):
        return str(Path(raw).resolve())
    return raw


def pin(value: str) -> str:
    """The key for `memls mcp --project`: an existing directory (relative to the working
    directory too) is keyed by its resolved absolute path."""
    raw = project_key(value)
    if not raw.startswith("file:") and Path(raw).expanduser().is_dir():
        return str(Path(raw).expanduser().resolve())
    return key(raw)


def choose(
    *, pinned: str | None, roots: list[str] | None, argument: object, workdir: str | None = None
) -> str:
    """The project of one call (see the module doc); InvalidInput (field `project`) if none."""
    named = key(argument) if argument is not None else None
    if pinned is None and not roots and workdir is not None:
        if named is not None and named != workdir:
            raise InvalidInput(
                f"this memls mcp serves the project of its working directory, {workdir} (the "
                f"client sent no roots); {named} is refused",
                field="project",
            )
        return workdir
    if pinned is not None:
        if named is not None and named != pinned:
            raise InvalidInput(
                f"this memls mcp serves only the project {pinned} (its "
                f"--project); {named} is refused",
                field="project",
            )
        return pinned
    if roots:
        if named is not None:
            if named not in roots:
                raise InvalidInput(
                    f"{named} is not one of your roots ({', '.join(roots)})", field="project"
                )
            return named
        if len(roots) == 1:
            return roots[0]
        raise InvalidInput(
            f"you have {len(roots)} roots ({', '.join(roots)}): name the one "
            "this call is about in `project`",
            field="project",
        )
    if named is not None:
        return named
    raise InvalidInput(
        "no project: the client sent no roots and memls mcp was started without "
        "--project; pass `project` (the absolute path of the project's root "
        "folder) or start `memls mcp --project PATH`",
        field="project",
    )
