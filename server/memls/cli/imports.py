"""`memls import --from TOOL SOURCE`: another memory tool's store brought into a project
(memory/importFrom), with what came in told in a few lines."""

from __future__ import annotations

from pathlib import Path

from memls import protocol
from memls.cli import progress
from memls.cli.common import _params, folder_key, reached
from memls.errors import InvalidInput


def run(
    tool: str,
    source: str,
    project: str | None,
    *,
    unscoped_to: str | None,
    dry_run: bool,
    redact: bool,
    as_json: bool,
) -> None:
    if tool not in protocol.IMPORT_NAMES:
        raise InvalidInput(
            f"--from {tool!r}: expected one of {', '.join(protocol.IMPORT_NAMES)}", field="from"
        )
    params = _params(
        protocol.ImportFromParams,
        {
            "from": tool,
            "source": str(Path(source).expanduser().resolve()),
            "project": project,
            "unscopedTo": folder_key(unscoped_to),
            "dryRun": dry_run,
            "redact": redact,
        },
    )
    with reached(long=True) as engine:
        quiet = dry_run or not progress.wanted(as_json)
        with progress.shown(engine, params.project, "import", quiet=quiet):
            r = engine.import_from(params)
    if as_json:
        print(protocol.encode_json(r).decode())
        return
    print("\n".join(lines(r)))


def lines(r: protocol.ImportFromResult) -> list[str]:
    name = protocol.IMPORT_NAMES[r.tool]
    would = "would import" if r.dry_run else "imported"
    out = [
        f"{name} store {r.source} (schema {r.version})"
        + (": dry run, nothing changed" if r.dry_run else "")
    ]
    for c in r.projects:
        kept = [
            f"{c.superseded} superseded" if c.superseded else "",
            f"{c.flagged} flagged for review" if c.flagged else "",
            f"{c.edges} relations" if c.edges else "",
            f"{c.tags} tags" if c.tags else "",
            f"{c.forgotten} deletions into the forgetting log" if c.forgotten else "",
        ]
        out.append(
            f"{would} {c.stored} of {c.read} memories into {c.project}"
            + (f" ({', '.join(k for k in kept if k)})" if any(kept) else "")
        )
        if c.already:
            out.append(f"  {c.already} already present (imported before): unchanged")
        if c.duplicates or c.merged:
            out.append(
                f"  {c.duplicates} duplicates of memories the project holds, "
                f"{c.merged} restatements merged"
            )
        if c.secrets:
            kinds = ", ".join(f"{k} x{n}" for k, n in sorted(c.secrets.items()))
            what = f"{c.redacted} redacted" if c.redacted else f"{c.refused} left out"
            out.append(f"  secrets: {what} ({kinds})")
        if c.too_long:
            out.append(f"  {c.too_long} left out: longer than [limits] max_content_bytes")
        if c.tombstoned:
            out.append(f"  {c.tombstoned} left out: forgotten in this project before")
        if c.conflicts:
            out.append(f"  {c.conflicts} open contradictions (memls conflicts)")
    if r.unscoped:
        out.append(
            f"{len(r.unscoped)} memories of no project, not imported "
            "(--unscoped-to DIR or @user to bring them):"
        )
        out += [f"  {row.key}  {row.preview}" for row in r.unscoped]
    if r.other_projects:
        out.append(f"{r.other_projects} memories of other projects: never imported")
    if r.forgetting_skipped:
        out.append(
            f"{r.forgetting_skipped} forgetting-log rows not imported (not tied to this "
            "project, or about a memory the store still keeps)"
        )
    if not r.indexed:
        out.append("indexing not finished: see memls doctor")
    return out
