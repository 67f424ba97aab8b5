"""`memls check`: every finding on a project's notes, with no editor — for CI and pre-commit
hooks. The notes are read from the disk now (through the owner when a daemon runs, else by this
process), their embedding and contradiction check waited for (bounded by `--wait`), then the
findings listed: secrets in note lines, contradictions between two note lines, and citations
whose code changed or went (every citation is checked, as `memory/check` does). Exit 0 with no
finding that `--fail-on` counts, 1 with one, 2 when the check could not be made (bad input,
the notes not read and checked in time, a store that cannot be opened)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Optional

import typer

from memls import protocol
from memls.cli import findings, sarif
from memls.cli.common import FLAGS, JsonOpt, State, _params, app, folder_key
from memls.daemon import open_engine
from memls.daemon.handle import EngineHandle
from memls.errors import InvalidInput, MemlsError, NotFound, Refused

FAIL_ON = ("none", "any", *protocol.FINDING_KINDS)
WATCH_WAIT_MAX = 60.0  # memory/watch's own bound; the rest of --wait goes to the flush
FolderOpt = typer.Option(
    None,
    "--project",
    "-p",
    callback=folder_key,
    help="The project's folder (required; keyed by its absolute path, as the editor and the "
    "agents key it).",
)


def fail_kinds(values: list[str]) -> set[str]:
    """--fail-on (repeatable, or comma-separated) as the kinds of finding that fail."""
    named = [v.strip() for raw in values for v in raw.split(",") if v.strip()]
    bad = [v for v in named if v not in FAIL_ON]
    if bad or not named:
        raise InvalidInput(
            f"{', '.join(map(repr, bad)) or 'nothing'} is not one of: {', '.join(FAIL_ON)}",
            field="failOn",
        )
    if "none" in named and len(set(named)) > 1:
        raise InvalidInput("none fails on nothing: name it alone", field="failOn")
    if "any" in named:
        return set(protocol.FINDING_KINDS)
    return set(named) - {"none"}


def gather(engine: EngineHandle, project: str, wait: float) -> protocol.CheckReport:
    """Have the notes read again and checked (within `wait` seconds), then read the findings."""
    deadline = time.monotonic() + wait
    read = engine.watch(
        protocol.WatchParams(project=project, wait=min(wait, WATCH_WAIT_MAX), reread=True)
    )
    if not read.indexed or not engine.flush(max(0.0, deadline - time.monotonic())):
        raise Refused(
            f"the notes of {project} were not read and checked within {wait:g} s "
            "(a daemon busy, models loading?): nothing reported; run again, or raise --wait",
            field="wait",
        )
    conflicts = engine.conflicts(
        protocol.ConflictsParams(project=project, status="open", limit=1000)
    ).conflicts
    checked = engine.check_citations(protocol.CheckParams(project=project))
    memories: dict[str, protocol.Memory] = {}
    for c in checked.citations:
        if c.state in findings.STALE_STATES and c.memory not in memories:
            try:
                memories[c.memory] = engine.get(protocol.GetParams(id=c.memory, project=project))
            except NotFound:  # forgotten since: the finding stands on the cited code
                continue
    return findings.report(project, read.notes, conflicts, checked, memories)


@app.command()
def check(
    project: Optional[str] = FolderOpt,
    as_json: bool = JsonOpt,
    as_sarif: bool = typer.Option(
        False, "--sarif", help="Print a SARIF 2.1.0 log on stdout (code scanning)."
    ),
    fail_on: list[str] = typer.Option(
        ["any"],
        "--fail-on",
        help="Which findings make the exit status 1: any (default), none, or secret, "
        "contradiction, stale (repeat, or comma-separate).",
    ),
    wait: float = typer.Option(
        120.0,
        "--wait",
        help="Seconds at most to wait for the notes to be read, embedded and checked "
        "(exit 2 when they are not).",
    ),
) -> None:
    """Every finding on the project's notes: secrets in note lines, contradictions between
    note lines, citations whose code changed or went (fresh, moved, changed, missing: the
    last two are findings). One line a finding (path:line: kind: message), then a summary;
    --json or --sarif for machines. Exit 0: no finding; 1: findings; 2: the check could not
    be made."""
    try:
        report, failed = _run(project, as_json, as_sarif, fail_on, wait)
    except (MemlsError, OSError) as exc:  # exit 1 means findings: any error is a 2
        if isinstance(exc, MemlsError):
            where = FLAGS.get(exc.field or "", exc.field)
            message = f"{where + ': ' if where else ''}{exc.message}"
        else:
            message = str(exc)
        print(f"memls: error: {message}", file=sys.stderr)
        raise typer.Exit(2) from None
    if as_sarif:
        print(json.dumps(sarif.log(report), indent=2, ensure_ascii=False))
    elif as_json:
        sys.stdout.write(protocol.encode_json(report).decode() + "\n")
    else:
        print("\n".join([*map(findings.text_line, report.findings), findings.summary(report)]))
    raise typer.Exit(1 if failed else 0)


def _run(
    project: str | None, as_json: bool, as_sarif: bool, fail_on: list[str], wait: float
) -> tuple[protocol.CheckReport, bool]:
    failing = fail_kinds(fail_on)
    if as_json and as_sarif:
        raise InvalidInput("--json or --sarif, not both")
    if not 0 < wait <= 3600:
        raise InvalidInput("must be more than 0 and at most 3600 seconds", field="wait")
    params = _params(protocol.CheckParams, {"project": project})
    folder = Path(params.project)
    if not folder.is_absolute() or not folder.is_dir():
        raise InvalidInput(
            f"{params.project} is not a folder (name the project's folder)", field="project"
        )
    with open_engine(State.data_dir, front="cli") as engine:
        report = gather(engine, str(folder), wait)
    return report, any(findings.kind_of(f) in failing for f in report.findings)
