"""Verbs on the store: stats, audit, maintain, conflicts, resolve, reindex, doctor, export,
import, schemas."""

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
    _call,
    _emit,
    _params,
    _require_project,
    app,
    folder_key,
    once,
    reached,
    secret_lines,
)
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
        r = _call("maintain", protocol.MaintainParams, {"project": project}, long=True)
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
        v = once("check_pair", params)
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
    with reached(long=True) as engine:
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
    with reached(long=True) as engine:
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
    with reached(long=True) as engine:
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
    file: str = typer.Argument(
        ..., help="An export file (- for stdin), or with --from the other tool's store."
    ),
    project: Optional[str] = ProjectOpt,
    tool: Optional[str] = typer.Option(
        None,
        "--from",
        help="Read another memory tool's store (read-only): omega, basic-memory or claude-mem.",
    ),
    unscoped_to: Optional[str] = typer.Option(
        None,
        "--unscoped-to",
        help="With --from: where the store's memories of no project go (a folder or @user); "
        "without it they are listed, not imported.",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="With --from: what would come in; nothing changes."
    ),
    as_json: bool = JsonOpt,
    redact: bool = RedactOpt,
) -> None:
    """Import an export of the same project, all or nothing (a progress bar on a terminal
    while the imported memories are indexed); with --from, another memory tool's store."""
    _require_project(project)
    if tool is not None:
        from memls.cli import imports

        imports.run(
            tool,
            file,
            project,
            unscoped_to=unscoped_to,
            dry_run=dry_run,
            redact=redact,
            as_json=as_json,
        )
        return
    if unscoped_to is not None or dry_run:
        raise InvalidInput("--unscoped-to and --dry-run go with --from", field="from")
    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"cannot read {file}: {exc.strerror}", field="file") from None
    with reached(long=True) as engine:
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
    with reached(long=True) as engine:
        with progress.shown(engine, params.project, "ingest", quiet=not progress.wanted(as_json)):
            r = engine.ingest(params)
    _emit(
        r,
        as_json,
        f"stored {r.stored} memories in {r.project!r} ({r.duplicates} duplicates)"
        + ("" if r.indexed else " (indexing not finished: see memls doctor)"),
    )


@app.command()
def schemas(
    out: Path = typer.Option(Path("schemas"), "--out", help="Directory for the JSON Schemas."),
) -> None:
    """Write one JSON Schema (draft 2020-12) per memory/* params, result and notification."""
    from memls import schemas as gen

    written = gen.write(out)
    print(f"wrote {len(written)} schemas to {out}")
