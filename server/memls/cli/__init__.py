"""The command line: `memls [--data-dir DIR] <verb> ... [--json]`.

A front like the others: it builds params Structs, calls the engine handle, prints the result.
Errors are one line on stderr: exit 2 for bad input, 1 for anything else. The verbs live in
`memories` (what acts on memories), `admin` (what looks after the store) and
`agents` (the briefing, promote, hooks), `serving` (serve, mcp), `check` (every finding on
the notes, for CI: `findings` makes them, `sarif` writes SARIF); `common` holds
the app, its options and the helpers both use.
"""

from __future__ import annotations

import sys

import typer

from memls.cli import (  # noqa: F401 - the verbs
    admin,
    agents,
    check,
    memories,
    serving,
    watching,
)
from memls.cli.common import FLAGS, app
from memls.errors import InvalidInput, MemlsError

# ---------------------------------------------------------------- entry point


def main(argv: list[str] | None = None) -> int:
    command = typer.main.get_command(app)
    try:
        code = command.main(args=argv, prog_name="memls", standalone_mode=False)
        if isinstance(code, int):  # typer.Exit(n) comes back as a value here
            return code
    except MemlsError as exc:
        where = FLAGS.get(exc.field or "", exc.field)
        print(f"memls: error: {where + ': ' if where else ''}{exc.message}", file=sys.stderr)
        return 2 if isinstance(exc, InvalidInput) else 1
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        print("memls: aborted", file=sys.stderr)
        return 1
    except typer.TyperException as exc:  # usage errors (typer's own click)
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        print(f"memls: error: {message}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)
    except (OSError, UnicodeError) as exc:  # a file the user named: one line, not a trace
        print(f"memls: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
