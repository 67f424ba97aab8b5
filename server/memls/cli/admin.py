"""Verbs on the store: stats, audit, maintain, conflicts, resolve, reindex, doctor, export,
import, serve, mcp, schemas."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import msgspec
import typer

from memls import protocol
from memls.cli import (
    memories,  # noqa: F401 - registered first: memory verbs lead --help
    progress,
)
from memls.cli.common import (
    JsonOpt,
    ProjectOpt,
    RedactOpt,
    State,
    _call,
    _emit,
    _params,
    _require_project,
    app,
    folder_key,
    secret_lines,
)
from memls.daemon import open_engine
from memls.errors import InvalidInput
from memls.protocol import wording


@app.command()
def stats(project: Optional[str] = ProjectOpt, as_json: bool = JsonOpt) -> None:
    """Counts for the project."""
    r = _call("stats", protocol.StatsParams, {"project": project})
    data = protocol.to_wire(r)
    _emit(
        r,
        as_json,
        "\n".join(
            f"{k:<16} {json.dumps(v) if isinstance(v, dict) else v}" for k, v in data.items()
        ),
    )


@app.command()
def audit(
    project: Optional[str] = ProjectOpt,
    id: Optional[str] = typer.Option(None, "--id", help="Only this memory."),
    limit: int = typer.Option(100, "--limit"),
    as_json: bool = JsonOpt,
) -> None:
    """The append-only audit log, newest first."""
    r = _call("audit", protocol.AuditParams, {"project": project, "id": id, "limit": limit})
    lines = [
        f"{e.at}  {e.op:<18} {e.memory_id or '-':<18} {e.front:<5} "
        f"{json.dumps(e.detail) if e.detail else ''}"
        for e in r.entries
    ]
    _emit(r, as_json, "\n".join(lines) or "(no entries)")


@app.command()
def maintain(
    project: Optional[str] = ProjectOpt,
    failed: bool = typer.Option(False, "--failed", help="Only list failed operations."),
    as_json: bool = JsonOpt,
) -> None:
    """Run maintenance (expiry); failures go to a dead-letter queue and are retried."""
    if failed:
        r = _call("dead_letters", protocol.MaintainParams, {"project": project})
    else:
        r = _call("maintain", protocol.MaintainParams, {"project": project})
    lines = [] if failed else [f"expired {len(r.expired)}, retried {r.retried}"]
    lines += [f"failed {d.operation} {d.memory_id} x{d.attempts}: {d.error}" for d in r.failed]
    _emit(r, as_json, "\n".join(lines) or "(no failed operations)")


@app.command()
def conflicts(
    texts: Optional[list[str]] = typer.Argument(None, help="Two texts: score this pair."),
    project: Optional[str] = ProjectOpt,
    id: Optional[str] = typer.Option(None, "--id", help="Only pairs involving this memory."),
    status: str = typer.Option("open", "--status", help="open, dismissed, resolved or all."),
    as_json: bool = JsonOpt,
) -> None:
    """With TEXT_A TEXT_B: the verdict for that pair. Without: the project's contradictions."""
    if texts:
        if len(texts) != 2:
            raise InvalidInput(
                "give two texts (the new statement, then the existing one)", field="texts"
            )
        params = protocol.parse(protocol.CheckPairParams, {"new": texts[0], "existing": texts[1]})
        # through the engine handle: a running daemon answers with its warm models
        with open_engine(State.data_dir, front="cli") as engine:
            v = engine.check_pair(params)
        if as_json:
            print(
                json.dumps(
                    {
                        "contradiction": v.contradiction,
                        "confidence": round(v.confidence, 4),
                        "signals": protocol.to_wire(v.signals),
                        "similarity": round(v.similarity, 4),
                        "similaritySource": v.similarity_source,
                        "updateMarker": v.update_marker,
                    }
                )
            )
        else:
            print(
                f"{'contradiction' if v.contradiction else 'no contradiction'} "
                f"(confidence {v.confidence:.2f}, {v.similarity_source} similarity "
                f"{v.similarity:.2f})"
            )
            for sig in v.signals:
                print(f"  {sig.kind} {sig.weight:.2f}: {', '.join(sig.triggers)}")
        return
    r = _call(
        "conflicts",
        protocol.ConflictsParams,
        {"project": project, "id": id, "status": None if status == "all" else status},
    )
    lines = []
    for c in r.conflicts:
        said = c.words or wording.words(c.project, c.signals, c.newer, c.older)
        lines.append(
            f"{c.status:<9} {said.kind} (confidence {c.confidence:.2f}; "
            f"{c.newer.id} vs {c.older.id})\n"
            f"    newer {said.newer_place}: “{said.newer_quote}”\n"
            f"    older {said.older_place}: “{said.older_quote}”"
        )
    _emit(r, as_json, "\n".join(lines) or f"(no {status} contradictions)")


@app.command()
def resolve(
    a: str = typer.Argument(..., help="One memory of the pair."),
    b: str = typer.Argument(..., help="The other."),
    action: str = typer.Option(
        ..., "--action", help="dismiss (not a contradiction), resolve, or supersede."
    ),
    project: Optional[str] = ProjectOpt,
    note: Optional[str] = typer.Option(None, "--note"),
    as_json: bool = JsonOpt,
) -> None:
    """Act on a detected contradiction."""
    r = _call(
        "resolve",
        protocol.ResolveParams,
        {"a": a, "b": b, "action": action, "project": project, "note": note},
    )
    _emit(r, as_json, f"{r.conflict.newer.id} vs {r.conflict.older.id}: {r.conflict.status}")


@app.command()
def reindex(project: Optional[str] = ProjectOpt, as_json: bool = JsonOpt) -> None:
    """Rebuild the project's vector index from the SQLite record (a progress bar on a
    terminal)."""
    params = _params(protocol.ReindexParams, {"project": project})
    with open_engine(State.data_dir, front="cli") as engine:
        with progress.shown(engine, params.project, "reindex", quiet=not progress.wanted(as_json)):
            r = engine.reindex(params)
    _emit(
        r,
        as_json,
        f"re-indexed {r.queued} memories of {r.project!r}"
        + ("" if r.indexed else " (not finished: see memls doctor)"),
    )


@app.command()
def doctor(
    project: Optional[str] = ProjectOpt,
    as_json: bool = JsonOpt,
    repair: bool = typer.Option(
        False,
        "--repair",
        help="Rebuild the vector index from SQLite if it "
        "disagrees (deleted, corrupted, out of date); with --secrets, redact the secrets found.",
    ),
    secrets: bool = typer.Option(False, "--secrets", help="Also look for stored secrets."),
) -> None:
    """Check the models, that the vector index agrees with SQLite and (--secrets) that no
    stored memory holds a secret (exit 1 if not)."""
    params = _params(protocol.DoctorParams, {"project": project, "secrets": secrets})
    with open_engine(State.data_dir, front="cli") as engine:
        r = engine.doctor(msgspec.structs.replace(params, repair=repair))
        redacted = r.redacted
        if repair:
            from memls.daemon.repair import repair_index

            for line in repair_index(engine, params.project):
                print(f"repaired: {line}", file=sys.stderr)
            r = msgspec.structs.replace(engine.doctor(params), redacted=redacted)
    lines = [f"memories {r.memories}, indexed {r.indexed}, pending {r.pending}"]
    for name, status in r.models.items():
        lines.append(
            f"{name}: {status.get('state')} {status.get('path') or ''} "
            f"{status.get('error') or ''}".rstrip()
        )
    lines += secret_lines(r.secrets, redacted)
    lines += [f"problem: {x}" for x in r.problems] or ["ok"]
    _emit(r, as_json, "\n".join(lines))
    if not r.ok:
        raise typer.Exit(1)


@app.command()
def export(
    project: Optional[str] = ProjectOpt,
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="File (default stdout)."),
) -> None:
    """Export the project's memories, logs and state as JSON Lines."""
    _require_project(project)
    with open_engine(State.data_dir, front="cli") as engine:
        lines = [
            json.dumps(item, ensure_ascii=False, sort_keys=True) for item in engine.export(project)
        ]
    text = "\n".join(lines) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")


@app.command("import")
def import_(
    file: str = typer.Argument(..., help="An export file (- for stdin)."),
    project: Optional[str] = ProjectOpt,
    as_json: bool = JsonOpt,
    redact: bool = RedactOpt,
) -> None:
    """Import an export of the same project, all or nothing (a progress bar on a terminal
    while the imported memories are indexed)."""
    _require_project(project)
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot read {file}: {exc.strerror}", field="file") from None
    with open_engine(State.data_dir, front="cli") as engine:
        with progress.shown(engine, project, "import", quiet=not progress.wanted(as_json)):
            counts = engine.import_(project, text.splitlines(), redact=redact)
    if as_json:
        print(json.dumps({"project": project, "imported": counts}))
    else:
        print("imported " + ", ".join(f"{n} {t}" for t, n in counts.items() if n))


@app.command()
def ingest(
    file: str = typer.Argument(..., help="JSON Lines, one memory a line (- for stdin)."),
    project: Optional[str] = ProjectOpt,
    as_json: bool = JsonOpt,
    redact: bool = RedactOpt,
) -> None:
    """Store many memories at once, all or none, and wait until they are indexed (a progress
    bar on a terminal). Each line is an object with the fields of `memory/store`: text, and
    optionally type, validFrom, validUntil, sourceUri, sourceRange, force, redact, and
    citations ([{"path": "src/a.py", "startLine": 10, "endLine": 20}], paths relative to the
    project folder)."""
    _require_project(project)
    project = folder_key(project)
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot read {file}: {exc.strerror}", field="file") from None
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"line {number}: not JSON ({exc.msg})", field="file") from None
        if not isinstance(item, dict):
            raise InvalidInput(f"line {number}: expected an object", field="file")
        try:
            protocol.parse(protocol.StoreParams, {"project": project, **item})
        except InvalidInput as exc:
            raise InvalidInput(f"line {number}: {exc}", field="file") from None
        items.append(item)
    if not items:
        raise InvalidInput("the file holds no memories", field="file")
    params = _params(protocol.IngestParams, {"project": project, "items": items, "redact": redact})
    with open_engine(State.data_dir, front="cli") as engine:
        with progress.shown(engine, params.project, "ingest", quiet=not progress.wanted(as_json)):
            r = engine.ingest(params)
    _emit(
        r,
        as_json,
        f"stored {r.stored} memories in {r.project!r} ({r.duplicates} duplicates)"
        + ("" if r.indexed else " (indexing not finished: see memls doctor)"),
    )


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
        "hooks start); exits at once when another process owns the store.",
    ),
) -> None:
    """Run the memls daemon: the language server that owns the store (or joins its owner).

    The TCP daemon stops on SIGTERM or SIGINT; a client's `shutdown` and `exit` end only
    that client's connection."""
    if socket_only:
        if stdio or tcp:
            raise InvalidInput("--socket serves no LSP: drop --stdio/--tcp", field="transport")
        _serve_socket()
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


def _serve_socket() -> None:
    """Own the data directory and serve its socket until SIGTERM or SIGINT."""
    import signal
    import threading

    from memls.daemon import RemoteEngine, open_engine, socket_path

    engine = open_engine(State.data_dir, front="daemon", serve=True, wait_seconds=0)
    if isinstance(engine, RemoteEngine):
        engine.close()
        print(f"memls: {engine.directory} is served already; nothing to do", file=sys.stderr)
        return
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print(f"memls: serving {socket_path(engine.directory)}", file=sys.stderr)
    try:
        stop.wait()
    finally:
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

    front.serve_stdio(str(State.data_dir) if State.data_dir else None, project)


@app.command()
def schemas(
    out: Path = typer.Option(Path("schemas"), "--out", help="Directory for the JSON Schemas."),
) -> None:
    """Write one JSON Schema (draft 2020-12) per memory/* params, result and notification."""
    from memls import schemas as gen

    written = gen.write(out)
    print(f"wrote {len(written)} schemas to {out}")
