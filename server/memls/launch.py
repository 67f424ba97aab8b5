"""The `memls` command's entry point: `memls mcp` goes straight to the light relay (an agent
lists its tools before the first model request only if they come within a few hundred ms,
and the full command line loads typer, rich and the engine's types); every other verb to the
command line (`memls.cli`)."""

from __future__ import annotations

import sys


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
    from memls.cli import main as full

    return full(args)
