"""The command line: `memls [--data-dir DIR] <verb> ... [--json]`.

A front like the others: it builds params Structs, calls the engine, prints the result.
Errors are one line on stderr: exit 2 for bad input, 1 for anything else.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional

import typer

from memls import __version__, protocol
from memls.daemon import open_engine
from memls.engine import Engine
from memls.errors import InvalidInput, MemlsError

app = typer.Typer(
    name="memls",
    help="Local-first project memory for coding agents.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
review_app = typer.Typer(help="The review queue: list, approve, reject, restore.",
                         no_args_is_help=True, rich_markup_mode=None)
app.add_typer(review_app, name="review")

# Wire field -> how the CLI spells it, for error messages.
FLAGS = {
    "mode": "--mode", "rerankDepth": "--rerank-depth",
    "project": "--project", "validFrom": "--valid-from", "validUntil": "--valid-until",
    "validAt": "--valid-at", "asOf": "--as-of", "k": "--k", "type": "--type",
    "types": "--type", "reason": "--reason", "by": "--by", "note": "--note",
    "sourceUri": "--source", "derivedFrom": "--derived-from", "query": "--query",
    "limit": "--limit", "state": "--state", "status": "--status", "trust": "--trust",
    "text": "TEXT", "id": "ID", "old": "OLD", "signal": "SIGNAL", "file": "FILE",
    "a": "A", "b": "B", "action": "--action", "new": "TEXT_A", "existing": "TEXT_B",
    "texts": "TEXT_A TEXT_B", "transport": "--stdio/--tcp", "tcp": "--tcp",
}

ProjectOpt = typer.Option(None, "--project", "-p", help="Project key (required).")
JsonOpt = typer.Option(False, "--json", help="Print one JSON document on stdout.")


class State:
    data_dir: Optional[Path] = None


def _version(value: bool) -> None:
    if value:
        print(f"memls {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    data_dir: Optional[Path] = typer.Option(
        None, "--data-dir", help="Data directory (default: $MEMLS_DATA_DIR, else the user's "
        "data directory)."
    ),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    State.data_dir = data_dir


def _require_project(project: str | None) -> None:
    """The CLI never falls back to a project: refuse before touching the data directory."""
    if project is None:
        raise InvalidInput("a project is required (there is no default project)",
                           field="project")


def _params(kind: type, data: dict[str, Any]) -> Any:
    """Validated params (None values left out); a missing project is refused here."""
    params = protocol.parse(kind, {k: v for k, v in data.items() if v is not None})
    if "project" in kind.__struct_fields__:
        _require_project(params.project)
    return params


def _call(method: str, kind: type, data: dict[str, Any]) -> Any:
    """Validate params before touching the store, then run one engine method."""
    params = _params(kind, data)
    with open_engine(State.data_dir, front="cli") as engine:
        return getattr(engine, method)(params)


def _emit(result: Any, as_json: bool, human: str) -> None:
    if as_json:
        sys.stdout.write(protocol.encode_json(result).decode() + "\n")
    else:
        print(human)


def _line(m: protocol.Memory, score: float | None = None) -> str:
    head = f"{m.id}  {m.type:<10} {m.trust:<9} {m.status:<10}"
    if score is not None:
        head += f" {score:7.3f}"
    text = m.content.replace("\n", " ")
    return f"{head}  {text[:100] + ('…' if len(text) > 100 else '')}"


def _describe(m: protocol.Memory) -> str:
    data = protocol.to_wire(m)
    return "\n".join(f"{k:<15} {v}" for k, v in data.items() if v not in (None, []))


# ---------------------------------------------------------------- verbs


@app.command()
def store(
    text: str = typer.Argument(..., help="The memory's text."),
    project: Optional[str] = ProjectOpt,
    type: str = typer.Option("note", "--type", "-t",
                             help=f"One of: {', '.join(protocol.MEMORY_TYPES)}."),
    valid_from: Optional[str] = typer.Option(None, "--valid-from", help="ISO 8601; default now."),
    valid_until: Optional[str] = typer.Option(None, "--valid-until", help="ISO 8601."),
    source: Optional[str] = typer.Option(None, "--source", help="Source URI."),
    force: bool = typer.Option(False, "--force", help="Store content that was forgotten."),
    wait: bool = typer.Option(False, "--wait",
                              help="Wait for the contradiction check and print what it found."),
    as_json: bool = JsonOpt,
) -> None:
    """Store a memory (a duplicate returns the existing id)."""
    data = {
        "text": text, "project": project, "type": type, "validFrom": valid_from,
        "validUntil": valid_until, "sourceUri": source, "force": force,
    }
    params = _params(protocol.StoreParams, data)
    found: list[protocol.Conflict] = []
    with open_engine(State.data_dir, front="cli") as engine:
        r = engine.store(params)
        if wait:
            engine.flush()
            found = engine.conflicts(protocol.ConflictsParams(project=r.project, id=r.id)).conflicts
    if r.duplicate:
        human = f"duplicate: {r.id} already holds this content in {r.project!r}"
    else:
        human = f"stored {r.id} in {r.project!r}"
        if r.tombstone_cleared:
            human += " (its tombstone was cleared)"
    if wait:
        human += "\n" + (_conflict_lines(found, r.id) or "no contradiction found")
        if as_json:
            sys.stdout.write(protocol.encode_json(
                {**protocol.to_wire(r), "conflicts": protocol.to_wire(found)}).decode() + "\n")
            return
    _emit(r, as_json, human)


def _conflict_lines(conflicts: list[protocol.Conflict], memory_id: str) -> str:
    lines = []
    for c in conflicts:
        kinds = ", ".join(s.kind for s in c.signals)
        other = c.older if c.newer.id == memory_id else c.newer
        lines.append(f"contradicts {other.id} ({c.confidence:.2f}; {kinds}"
                     f"{'; proposes supersede' if c.proposal else ''}): {other.content[:90]}")
    return "\n".join(lines)


@app.command()
def get(
    id: str = typer.Argument(..., help="Memory id."),
    project: Optional[str] = ProjectOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Show one memory."""
    m = _call("get", protocol.GetParams, {"id": id, "project": project})
    _emit(m, as_json, _describe(m))


@app.command("list")
def list_(
    project: Optional[str] = ProjectOpt,
    status: Optional[str] = typer.Option(None, "--status"),
    trust: Optional[str] = typer.Option(None, "--trust"),
    type: Optional[str] = typer.Option(None, "--type", "-t"),
    limit: int = typer.Option(100, "--limit"),
    include_user: bool = typer.Option(False, "--include-user",
                                      help="Also list the user-wide scope (@user)."),
    as_json: bool = JsonOpt,
) -> None:
    """List the project's memories, newest first."""
    r = _call("list", protocol.ListParams, {
        "project": project, "status": status, "trust": trust, "type": type, "limit": limit,
        "includeUser": include_user,
    })
    _emit(r, as_json, "\n".join(_line(m) for m in r.memories) or "(no memories)")


@app.command()
def query(
    text: str = typer.Argument(..., help="What to look for."),
    project: Optional[str] = ProjectOpt,
    k: int = typer.Option(10, "--k", "-k", help="How many results."),
    valid_at: Optional[str] = typer.Option(None, "--valid-at",
                                           help="Memories valid at this time (ISO 8601)."),
    as_of: Optional[str] = typer.Option(None, "--as-of",
                                        help="What the store had recorded at this time."),
    type: Optional[list[str]] = typer.Option(None, "--type", "-t", help="Only these types."),
    include_user: bool = typer.Option(False, "--include-user",
                                      help="Also search the user-wide scope (@user)."),
    mode: str = typer.Option("default", "--mode",
                             help="default, interactive (shallow re-rank) or lexical (BM25)."),
    rerank: bool = typer.Option(True, "--rerank/--no-rerank",
                                help="Re-score the head with the cross-encoder."),
    explain: bool = typer.Option(False, "--explain", help="Show how each score was made."),
    as_json: bool = JsonOpt,
) -> None:
    """Search the project's memories (BM25 + vectors, fused, re-scored)."""
    r = _call("query", protocol.QueryParams, {
        "query": text, "project": project, "k": k, "validAt": valid_at, "asOf": as_of,
        "types": type or None, "includeUser": include_user, "mode": mode,
        "rerank": None if rerank else False, "explain": explain,
    })
    lines = []
    for h in r.results:
        lines.append(_line(h, h.score))
        if h.explain:
            e = h.explain
            lines.append(f"    bm25={e.bm25} vector={e.vector} fused={e.fused} "
                         f"rerank={e.rerank} boosts={json.dumps(e.boosts)} stage={e.stage}")
    lines += [f"degraded: {d}" for d in r.degraded]
    _emit(r, as_json, "\n".join(lines) or "(no results)")


@app.command()
def supersede(
    old: str = typer.Argument(..., help="The memory that is replaced."),
    by: str = typer.Option(..., "--by", help="The memory that replaces it."),
    project: Optional[str] = ProjectOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Mark OLD as superseded by NEW: its validity ends where NEW's begins."""
    r = _call("supersede", protocol.SupersedeParams, {"old": old, "by": by, "project": project})
    _emit(r, as_json, f"{r.old.id} superseded by {r.new.id}; valid until {r.old.valid_until}")


@app.command()
def feedback(
    id: str = typer.Argument(..., help="Memory id."),
    signal: str = typer.Argument(..., help="helpful, unhelpful or outdated."),
    project: Optional[str] = ProjectOpt,
    query: Optional[str] = typer.Option(None, "--query", help="The query that surfaced it."),
    as_json: bool = JsonOpt,
) -> None:
    """Record feedback on a memory (+1 / -1 / -2; flagged for review at -3)."""
    r = _call("feedback", protocol.FeedbackParams, {
        "id": id, "signal": signal, "project": project, "query": query,
    })
    human = f"{r.id}: score {r.score}, trust {r.trust}"
    if r.transition:
        human += f" (was {r.transition.from_trust})"
    _emit(r, as_json, human)


def _review(action: str, id: Optional[str], project: Optional[str], note: Optional[str],
            state: Optional[str], as_json: bool) -> None:
    r = _call("review", protocol.ReviewParams, {
        "action": action, "id": id, "project": project, "note": note, "state": state,
    })
    if action == "list":
        human = "\n".join(_line(m) for m in r.memories) or f"(no {state or 'flagged'} memories)"
    else:
        t = r.transition
        human = f"{t.memory_id}: {t.from_trust} -> {t.to_trust}"
    _emit(r, as_json, human)


@review_app.command("list")
def review_list(
    project: Optional[str] = ProjectOpt,
    state: str = typer.Option("flagged", "--state", help="Trust state to list."),
    as_json: bool = JsonOpt,
) -> None:
    """List memories waiting for review (flagged by default)."""
    _review("list", None, project, None, state, as_json)


def _review_verb(action: str, doc: str) -> None:
    def command(
        id: str = typer.Argument(..., help="Memory id."),
        project: Optional[str] = ProjectOpt,
        note: Optional[str] = typer.Option(None, "--note", help="Why."),
        as_json: bool = JsonOpt,
    ) -> None:
        _review(action, id, project, note, None, as_json)

    command.__doc__ = doc
    review_app.command(action)(command)


_review_verb("approve", "Verify a memory: visible again, trust verified.")
_review_verb("reject", "Reject a memory: hidden for good, but kept.")
_review_verb("restore", "Return a memory to candidate trust.")


@app.command()
def forget(
    id: str = typer.Argument(..., help="Memory id."),
    reason: str = typer.Option(..., "--reason",
                               help=f"One of: {', '.join(protocol.FORGET_REASONS)}."),
    project: Optional[str] = ProjectOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Remove a memory, log why, and keep a tombstone of its content."""
    r = _call("forget", protocol.ForgetParams, {"id": id, "reason": reason, "project": project})
    _emit(r, as_json, f"forgot {r.id} ({r.reason})")


@app.command()
def forgotten(
    project: Optional[str] = ProjectOpt,
    reason: Optional[str] = typer.Option(None, "--reason", help="Only this reason."),
    limit: int = typer.Option(100, "--limit"),
    as_json: bool = JsonOpt,
) -> None:
    """The forgetting log."""
    r = _call("forgotten", protocol.ForgottenParams,
              {"project": project, "reason": reason, "limit": limit})
    lines = [f"{e.at}  {e.memory_id}  {e.reason:<16} {e.preview}" for e in r.entries]
    _emit(r, as_json, "\n".join(lines) or "(nothing forgotten)")


@app.command()
def stats(project: Optional[str] = ProjectOpt, as_json: bool = JsonOpt) -> None:
    """Counts for the project."""
    r = _call("stats", protocol.StatsParams, {"project": project})
    data = protocol.to_wire(r)
    _emit(r, as_json, "\n".join(
        f"{k:<16} {json.dumps(v) if isinstance(v, dict) else v}" for k, v in data.items()))


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
            raise InvalidInput("give two texts (the new statement, then the existing one)",
                               field="texts")
        params = protocol.parse(protocol.CheckPairParams,
                                {"new": texts[0], "existing": texts[1]})
        with tempfile.TemporaryDirectory() as scratch:  # scoring a pair touches no store
            with Engine.open(Path(scratch), front="cli") as engine:
                v = engine.check_pair(params)
        if as_json:
            print(json.dumps({"contradiction": v.contradiction,
                              "confidence": round(v.confidence, 4),
                              "signals": protocol.to_wire(v.signals),
                              "similarity": round(v.similarity, 4),
                              "similaritySource": v.similarity_source,
                              "updateMarker": v.update_marker}))
        else:
            print(f"{'contradiction' if v.contradiction else 'no contradiction'} "
                  f"(confidence {v.confidence:.2f}, {v.similarity_source} similarity "
                  f"{v.similarity:.2f})")
            for sig in v.signals:
                print(f"  {sig.kind} {sig.weight:.2f}: {', '.join(sig.triggers)}")
        return
    r = _call("conflicts", protocol.ConflictsParams, {
        "project": project, "id": id, "status": None if status == "all" else status})
    lines = [f"{c.status:<9} {c.newer.id} vs {c.older.id} ({c.confidence:.2f})\n"
             f"    new: {c.newer.content[:100]}\n    old: {c.older.content[:100]}"
             for c in r.conflicts]
    _emit(r, as_json, "\n".join(lines) or f"(no {status} contradictions)")


@app.command()
def resolve(
    a: str = typer.Argument(..., help="One memory of the pair."),
    b: str = typer.Argument(..., help="The other."),
    action: str = typer.Option(..., "--action",
                               help="dismiss (not a contradiction), resolve, or supersede."),
    project: Optional[str] = ProjectOpt,
    note: Optional[str] = typer.Option(None, "--note"),
    as_json: bool = JsonOpt,
) -> None:
    """Act on a detected contradiction."""
    r = _call("resolve", protocol.ResolveParams,
              {"a": a, "b": b, "action": action, "project": project, "note": note})
    _emit(r, as_json, f"{r.conflict.newer.id} vs {r.conflict.older.id}: {r.conflict.status}")


@app.command()
def reindex(project: Optional[str] = ProjectOpt, as_json: bool = JsonOpt) -> None:
    """Rebuild the project's vector index from the SQLite record."""
    r = _call("reindex", protocol.ReindexParams, {"project": project})
    _emit(r, as_json, f"re-indexed {r.queued} memories of {r.project!r}"
          + ("" if r.indexed else " (not finished: see memls doctor)"))


@app.command()
def doctor(project: Optional[str] = ProjectOpt, as_json: bool = JsonOpt) -> None:
    """Check the models and that the vector index agrees with SQLite (exit 1 if not)."""
    r = _call("doctor", protocol.DoctorParams, {"project": project})
    lines = [f"memories {r.memories}, indexed {r.indexed}, pending {r.pending}"]
    for name, status in r.models.items():
        lines.append(f"{name}: {status.get('state')} {status.get('path') or ''} "
                     f"{status.get('error') or ''}".rstrip())
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
        lines = [json.dumps(item, ensure_ascii=False, sort_keys=True)
                 for item in engine.export(project)]
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
) -> None:
    """Import an export of the same project, all or nothing."""
    _require_project(project)
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot read {file}: {exc.strerror}", field="file") from None
    with open_engine(State.data_dir, front="cli") as engine:
        counts = engine.import_(project, text.splitlines())
    if as_json:
        print(json.dumps({"project": project, "imported": counts}))
    else:
        print("imported " + ", ".join(f"{n} {t}" for t, n in counts.items() if n))


@app.command()
def serve(
    stdio: bool = typer.Option(False, "--stdio", help="Speak LSP on stdin/stdout (editors)."),
    tcp: Optional[str] = typer.Option(None, "--tcp", metavar="HOST:PORT",
                                      help="Speak LSP on a loopback TCP port (long-lived)."),
    token: Optional[str] = typer.Option(None, "--token", envvar="MEMLS_TOKEN",
                                        help="TCP: the token clients pass in "
                                        "initializationOptions.token (default: generated, "
                                        "written to <data dir>/tcp.token)."),
    force: bool = typer.Option(False, "--force",
                               help="TCP: allow a non-loopback address."),
) -> None:
    """Run the memls daemon: the language server that owns the store (or joins its owner)."""
    import ipaddress
    import secrets
    import socket

    if stdio == bool(tcp):
        raise InvalidInput("choose one transport: --stdio or --tcp HOST:PORT", field="transport")
    from memls.lsp import server as lsp

    data_dir = str(State.data_dir) if State.data_dir else None
    if stdio:
        lsp.serve_stdio(data_dir)
        return
    host, _, port_text = tcp.rpartition(":")
    if not host or not port_text.isdigit():
        raise InvalidInput(f"{tcp!r} is not HOST:PORT", field="tcp")
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, int(port_text))}
        loopback = all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)
    except (OSError, ValueError):
        raise InvalidInput(f"cannot resolve {host!r}", field="tcp") from None
    if not loopback and not force:
        raise InvalidInput(f"{host} is not a loopback address; memls listens on loopback only "
                           "(pass --force to override)", field="tcp")
    from memls.config import data_dir as resolve_dir
    from memls.config import ensure_private_dir

    if not token:
        token = secrets.token_urlsafe(24)
        path = ensure_private_dir(resolve_dir(State.data_dir)) / "tcp.token"
        path.write_text(token + "\n")
        path.chmod(0o600)
        print(f"memls: token written to {path}", file=sys.stderr)
    print(f"memls: serving LSP on {host}:{port_text}", file=sys.stderr)
    lsp.serve_tcp(host, int(port_text), token, data_dir)


@app.command()
def mcp(project: Optional[str] = typer.Option(
        None, "--project", "-p",
        help="Serve only this project (a directory is keyed by its absolute path). Default: "
        "the client's MCP roots; a call naming none of them is refused.")) -> None:
    """Run the MCP server (stdio) for coding agents: the same memory as the editor's."""
    from memls import mcp as front

    front.serve_stdio(str(State.data_dir) if State.data_dir else None, project)


@app.command()
def schemas(out: Path = typer.Option(Path("schemas"), "--out",
                                     help="Directory for the JSON Schemas.")) -> None:
    """Write one JSON Schema (draft 2020-12) per memory/* params, result and notification."""
    from memls import schemas as gen

    written = gen.write(out)
    print(f"wrote {len(written)} schemas to {out}")


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
