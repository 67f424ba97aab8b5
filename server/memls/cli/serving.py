"""The long-running verbs: `serve` (the daemon: LSP over stdio or loopback TCP, or the owner
socket alone) and `mcp` (the agents' front over stdio)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from memls.cli.common import State, app
from memls.errors import InvalidInput


@app.command()
def serve(
    stdio: bool = typer.Option(False, "--stdio", help="Speak LSP on stdin/stdout (editors)."),
    tcp: Optional[str] = typer.Option(
        None, "--tcp", metavar="HOST:PORT", help="Speak LSP on a loopback TCP port (long-lived)."
    ),
    token_file: Optional[Path] = typer.Option(
        None,
        "--token-file",
        help="TCP: read the token clients pass in "
        "initializationOptions.token from this file (also $MEMLS_TOKEN; default: a new one, "
        "written to <data dir>/tcp.token, 0600).",
    ),
    token: Optional[str] = typer.Option(None, "--token", hidden=True),
    force: bool = typer.Option(False, "--force", help="TCP: allow a non-loopback address."),
    socket_only: bool = typer.Option(
        False,
        "--socket",
        help="Own the store and serve only the owner socket, no LSP (the daemon the agents' "
        "hooks and memls mcp start); exits once another process serves the store.",
    ),
    ready_fd: Optional[int] = typer.Option(
        None,
        "--ready-fd",
        hidden=True,
        help="--socket: write a line to this file descriptor once the socket is served.",
    ),
    agent_memories: bool = typer.Option(
        True,
        "--agent-memories/--no-agent-memories",
        help="Read the memories agents keep by themselves (Claude Code's auto memory, Codex's "
        "and Gemini CLI's); --no-agent-memories is $MEMLS_AGENT_MEMORIES=0 ([notes] "
        "agent_memories = false), for this daemon and those it starts.",
    ),
) -> None:
    """Run the memls daemon: the language server that owns the store (or joins its owner).

    The TCP daemon stops on SIGTERM or SIGINT; a client's `shutdown` and `exit` end only
    that client's connection."""
    if not agent_memories:
        import os

        os.environ["MEMLS_AGENT_MEMORIES"] = "0"  # the engine's settings read it at open
    if socket_only:
        if stdio or tcp:
            raise InvalidInput("--socket serves no LSP: drop --stdio/--tcp", field="transport")
        _serve_socket(ready_fd)
        return
    import ipaddress
    import os
    import socket

    if token is not None:  # a token on the command line shows in every user's process list
        raise InvalidInput(
            "a token on the command line is visible to every user (ps); put "
            "it in a file (--token-file) or in $MEMLS_TOKEN",
            field="token",
        )
    if stdio == bool(tcp):
        raise InvalidInput("choose one transport: --stdio or --tcp HOST:PORT", field="transport")
    from memls.lsp.features import serve_stdio
    from memls.lsp.tcp import serve_tcp

    data_dir = str(State.data_dir) if State.data_dir else None
    if stdio:
        serve_stdio(data_dir)
        return
    assert tcp is not None  # one of the two transports, checked above
    host, _, port_text = tcp.rpartition(":")
    host = host.strip("[]")
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise InvalidInput(f"{tcp!r} is not HOST:PORT with a port from 1 to 65535", field="tcp")
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, int(port_text))}
        loopback = all(ipaddress.ip_address(str(a).split("%")[0]).is_loopback for a in addresses)
    except (OSError, ValueError, UnicodeError):
        raise InvalidInput(f"cannot resolve {host!r}", field="tcp") from None
    if not loopback and not force:
        raise InvalidInput(
            f"{host} is not a loopback address; memls listens on loopback only "
            "(pass --force to override)",
            field="tcp",
        )
    token = _daemon_token(token_file, os.environ.get("MEMLS_TOKEN"))
    print(f"memls: serving LSP on {host}:{port_text}", file=sys.stderr)
    serve_tcp(host, int(port_text), token, data_dir)


def _serve_socket(ready_fd: int | None) -> None:
    """Own the data directory and serve its socket until SIGTERM or SIGINT. When another
    process owns it, wait (bounded) until that one serves, then exit: either way the socket
    is served when `ready_fd` hears "ready"."""
    import os
    import select
    import signal
    import socket
    import threading

    from memls.daemon import RemoteEngine, open_engine, socket_path

    def ready() -> None:
        if ready_fd is not None:
            try:
                os.write(ready_fd, b"ready\n")
                os.close(ready_fd)
            except OSError:
                pass  # whoever waited has gone

    # Calls hop from the socket's threads to the engine's and back; while the indexer thread
    # embeds the last write, each hop can wait out the GIL's switch interval (5 ms by
    # default). A shorter one keeps a light call light (benchmarks/results/mcp.txt).
    sys.setswitchinterval(0.0005)
    engine = open_engine(State.data_dir, front="daemon", serve=True, wait_seconds=30)
    if isinstance(engine, RemoteEngine):
        engine.close()
        ready()
        print(f"memls: {engine.directory} is served already; nothing to do", file=sys.stderr)
        return
    # The kernel hands a process's signal to any of its threads; Python runs the handler
    # in the main thread only once that thread runs again, and a thread asleep on a lock is
    # not woken by a signal another thread took. So the main thread sleeps in `select` on
    # the wakeup socket, which the C handler writes to from whichever thread took it.
    stop = threading.Event()
    wake, woken = socket.socketpair()
    woken.setblocking(False)
    signal.set_wakeup_fd(woken.fileno(), warn_on_full_buffer=False)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print(f"memls: serving {socket_path(engine.directory)}", file=sys.stderr)
    ready()
    try:
        while not stop.is_set():
            select.select([wake], [], [])
            wake.recv(512)  # the handler has run once `select` returned to Python
    finally:
        signal.set_wakeup_fd(-1)
        wake.close()
        woken.close()
        engine.close()


def _daemon_token(token_file: Path | None, env: str | None) -> str:
    """The TCP token: from --token-file, else $MEMLS_TOKEN, else a new one written to
    <data dir>/tcp.token (created 0600 before the token is written: never readable by
    others, not even for a moment)."""
    import os
    import secrets

    from memls.config import data_dir as resolve_dir
    from memls.config import ensure_private_dir

    if token_file is not None:
        try:
            given = token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeError) as exc:
            raise InvalidInput(f"cannot read {token_file}: {exc}", field="tokenFile") from None
        if len(given) < 16:
            raise InvalidInput(
                f"{token_file} must hold a token of at least 16 characters", field="tokenFile"
            )
        return given
    if env is not None and env.strip():
        if len(env.strip()) < 16:
            raise InvalidInput("$MEMLS_TOKEN must be at least 16 characters", field="token")
        return env.strip()
    token = secrets.token_urlsafe(24)
    path = ensure_private_dir(resolve_dir(State.data_dir)) / "tcp.token"
    temp = path.with_name(f".tcp.token.{os.getpid()}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    os.replace(temp, path)
    print(f"memls: token written to {path}", file=sys.stderr)
    return token


@app.command()
def mcp(
    project: Optional[str] = typer.Option(
        None,
        "--project",
        "-p",
        help="Serve only this project (a directory is keyed by its absolute path). Default: "
        "the client's MCP roots; a call naming none of them is refused.",
    ),
) -> None:
    """Run the MCP server (stdio) for coding agents: the same memory as the editor's."""
    from memls import mcp as front

    code = front.serve_stdio(str(State.data_dir) if State.data_dir else None, project)
    if code:
        raise typer.Exit(code)
