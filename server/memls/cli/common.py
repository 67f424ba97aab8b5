"""The CLI's app, its shared options, and how it builds params and prints results."""

from __future__ import annotations

import math
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

import typer

from memls import __version__, protocol
from memls.config import apply_limits
from memls.daemon import EngineHandle, OwnerExited, open_engine
from memls.errors import InvalidInput, StoreError
from memls.protocol import wording

# How long one command may take, from its process's start to its exit, to reach the store
# (through its owner, or owning it for the command) and get its answer, owners dying and
# starting around it (docs/reliability.md, "A command's bound"). EXIT_RESERVE of it is kept
# for printing the answer and the exit.
CALL_SECONDS = 15.0
EXIT_RESERVE = 0.5
# Engine methods a command may send again when the owner exits before answering: reads, and
# store (the second comes back as the duplicate of the first, never a second copy).
REPEATABLE = frozenset(
    {
        "store",
        "get",
        "list",
        "query",
        "stats",
        "audit",
        "forgotten",
        "conflicts",
        "check_pair",
        "citations",
        "dead_letters",
        "watched",
    }
)

app = typer.Typer(
    name="memls",
    help="Local-first project memory for coding agents.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
review_app = typer.Typer(
    help="The review queue: list, approve, reject, restore.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(review_app, name="review")

# Wire field -> how the CLI spells it, for error messages.
FLAGS = {
    "mode": "--mode",
    "depth": "--depth",
    "items": "FILE",
    "rerankDepth": "--rerank-depth",
    "project": "--project",
    "validFrom": "--valid-from",
    "validUntil": "--valid-until",
    "validAt": "--valid-at",
    "asOf": "--as-of",
    "k": "--k",
    "type": "--type",
    "types": "--type",
    "reason": "--reason",
    "by": "--by",
    "note": "--note",
    "sourceUri": "--source",
    "derivedFrom": "--derived-from",
    "query": "--query",
    "limit": "--limit",
    "state": "--state",
    "status": "--status",
    "trust": "--trust",
    "text": "TEXT",
    "id": "ID",
    "old": "OLD",
    "signal": "SIGNAL",
    "file": "FILE",
    "a": "A",
    "b": "B",
    "action": "--action",
    "new": "TEXT_A",
    "existing": "TEXT_B",
    "texts": "TEXT_A TEXT_B",
    "transport": "--stdio/--tcp",
    "tcp": "--tcp",
    "dataDir": "--data-dir",
    "token": "--token",
    "tokenFile": "--token-file",
    "citations": "--cite",
    "budget": "--budget",
    "promptBudget": "--prompt-budget",
    "session": "--session",
    "prompt": "--prompt",
    "paths": "--paths",
    "to": "--to",
    "agent": "AGENT",
    "failOn": "--fail-on",
    "wait": "--wait",
    "sarif": "--sarif",
    "timeout": "--timeout",
}


def folder_key(project: str | None) -> str | None:
    """A project given as a folder (`.`, `../app`) is keyed by its resolved absolute path, as
    the editor and the agents key it; any other key is left as it is."""
    if project is None or not project.strip():
        return project
    path = Path(project).expanduser()
    return str(path.resolve()) if path.is_dir() else project


ProjectOpt = typer.Option(
    None,
    "--project",
    "-p",
    callback=folder_key,
    help="The project: a folder (keyed by its absolute path, as the editor and the agents "
    "key it) or a project key (required).",
)
JsonOpt = typer.Option(False, "--json", help="Print one JSON document on stdout.")
RedactOpt = typer.Option(
    False, "--redact", help="Replace secrets in memories by [REDACTED:kind] instead of refusing."
)


def secret_lines(found: list[Any], redacted: list[str]) -> list[str]:
    """doctor --secrets: each secret found (where), then each memory redacted."""
    return [
        f"secret: {x.id} {x.kind} at line {x.line}, column {x.column}"
        + (" (its forgetting log preview)" if x.place == "forgetting_log" else "")
        for x in found
    ] + [f"redacted: {memory_id}" for memory_id in redacted]


class State:
    data_dir: Optional[Path] = None
    timeout: float = CALL_SECONDS
    started: float | None = None  # time.monotonic() when the command started (main)
    used_store = False  # the command opened the store (every handle closed when it ends)


def deadline() -> float:
    """The time.monotonic() by which this command must have its answer (then it prints it
    and exits)."""
    started = State.started if State.started is not None else time.monotonic()
    return started + State.timeout - min(EXIT_RESERVE, State.timeout / 2)


def _version(value: bool) -> None:
    if value:
        print(f"memls {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    data_dir: Optional[str] = typer.Option(
        None,
        "--data-dir",
        help="Data directory (default: $MEMLS_DATA_DIR, else the user's data directory).",
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    timeout: float = typer.Option(
        CALL_SECONDS,
        "--timeout",
        metavar="SECONDS",
        help="The most a command may take to reach the store and get its answer, owners "
        "starting and dying around it; then it fails with one line. ingest, import, export, "
        "reindex, doctor, maintain, watch, context and store --wait: reaching the store only.",
    ),
) -> None:
    if data_dir is not None and not data_dir.strip():  # "" would be the current directory
        raise InvalidInput("must not be empty (name a directory)", field="dataDir")
    if not (math.isfinite(timeout) and timeout > 0):
        raise InvalidInput("must be a number of seconds above 0", field="timeout")
    State.data_dir = Path(data_dir) if data_dir is not None else None
    State.timeout = timeout


def _require_project(project: str | None) -> None:
    """The CLI never falls back to a project: refuse before touching the data directory."""
    if project is None:
        raise InvalidInput("a project is required (there is no default project)", field="project")


def _params(kind: type[Any], data: dict[str, Any]) -> Any:
    """Validated params (None values left out); a missing project is refused here."""
    apply_limits(State.data_dir)  # [limits] of the data directory, before parsing
    params: Any = protocol.parse(kind, {k: v for k, v in data.items() if v is not None})
    if "project" in kind.__struct_fields__:
        _require_project(params.project)
    return params


@contextmanager
def reached(*, long: bool = False) -> Iterator[EngineHandle]:
    """The store by this command's deadline: through its owner, or owned by this process for
    the command. Every call on it ends by the deadline too, unless `long` (a verb whose work
    may take minutes: only reaching the store is bounded)."""
    State.used_store = True
    if long:
        left = max(0.0, deadline() - time.monotonic())
        handle = open_engine(State.data_dir, front="cli", wait_seconds=left)
    else:
        handle = open_engine(State.data_dir, front="cli", deadline=deadline())
    with handle as engine:
        yield engine


def once(method: str, params: Any) -> Any:
    """One engine call within the command's deadline. When the owner exits before it
    answers, a REPEATABLE call is made again (through the next owner, or owning the store)
    until the deadline; any other says its outcome is unknown."""
    while True:
        handle = None
        try:
            with reached() as engine:
                handle = engine
                return getattr(engine, method)(params)
        except OwnerExited:
            if method in REPEATABLE and time.monotonic() < deadline():
                continue
            pid = getattr(handle, "owner_pid", None)
            raise StoreError(
                f"the memls process that owned the store{f' (pid {pid})' if pid else ''} "
                f"exited before it answered; whether {method} was done is unknown"
            ) from None


def _call(
    method: str, kind: type, data: dict[str, Any], *, watch: bool = False, long: bool = False
) -> Any:
    """Validate params before touching the store, then run one engine method by the
    command's deadline (`once`); `long`: only reaching the store is bounded. `watch` (long):
    a project named by its folder is watched first (its notes indexed, then followed by the
    daemon), as the hooks and the MCP front name theirs."""
    params = _params(kind, data)
    if not (watch or long):
        return once(method, params)
    with reached(long=True) as engine:
        project = getattr(params, "project", None)
        if watch and project and Path(project).is_absolute() and Path(project).is_dir():
            engine.watch(protocol.WatchParams(project=project, wait=10.0))
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
    return f"{head}  {text[:100] + ('…' if len(text) > 100 else '')}{_stated(m)}{_marks(m)}"


def _stated(m: protocol.Memory) -> str:
    """Every note file that states it, when more than one does, the memories of other note
    files that say the same in other words, its tags and its named relations."""
    lines = []
    if len(m.sources) > 1:
        lines.append("stated in " + wording.place(m, m.project))
    if m.restates:
        lines.append("restated in other words by " + ", ".join(m.restates))
    if m.tags:
        lines.append("tags " + ", ".join(m.tags))
    if m.related:
        lines.append(wording.related(m.related))
    return "".join(f"\n    {line}" for line in lines)


def _marks(m: protocol.Memory) -> str:
    """What a reader must know before trusting a line: it is contested, or replaced."""
    marks = []
    for ref in m.contradicted_by:
        stands = "it stands" if ref.current == m.id else "the newer one stands"
        marks.append(f"CONTESTED by newer {ref.id} ({ref.confidence:.2f}; {stands})")
    for ref in m.contradicts:
        stands = "this one stands" if ref.current == m.id else "the older one was approved"
        marks.append(f"contradicts older {ref.id} ({ref.confidence:.2f}; {stands})")
    if m.superseded_by:
        marks.append("SUPERSEDED by " + ", ".join(m.superseded_by))
    if m.imported_from:
        marks.append(f"imported from {protocol.IMPORT_NAMES[m.imported_from]}")
    if m.stale:
        marks.append("STALE: the code it cites changed")
    for c in m.citations:
        if c.state in ("changed", "missing"):
            marks.append(f"{c.state}: {citation_text(c)}")
    return "".join(f"\n    ! {mark}" for mark in marks)


def citation_text(c: protocol.Citation | protocol.CitationStatus) -> str:
    where = f"{c.path}:{c.start_line}-{c.end_line}"
    symbol = f" ({c.symbol})" if c.symbol else ""
    return where + symbol


_CITE = re.compile(r"^(?P<path>.+?)(?::(?P<start>\d+)(?:-(?P<end>\d+))?)?$")


def parse_cite(raw: str, index: int) -> dict[str, Any]:
    """`PATH[:START[-END]]` as a wire citation (no range: the whole file)."""
    match = _CITE.match(raw.strip())
    if match is None or not match["path"]:
        raise InvalidInput(f"{raw!r} is not PATH[:START[-END]]", field=f"citations[{index}]")
    out: dict[str, Any] = {"path": match["path"]}
    if match["start"]:
        out["startLine"] = int(match["start"])
        out["endLine"] = int(match["end"] or match["start"])
    return out


def _describe(m: protocol.Memory) -> str:
    data = protocol.to_wire(m)
    if m.sources:  # every note file that states it, as a person reads them
        data["sources"] = wording.place(m, m.project)
    for key, refs in (("related", m.related), ("relatedBy", m.related_by)):
        if refs:
            data[key] = wording.related(refs)
    if m.tags:
        data["tags"] = ", ".join(m.tags)
    return "\n".join(f"{k:<15} {v}" for k, v in data.items() if v not in (None, []))


# ---------------------------------------------------------------- verbs


def _conflict_lines(conflicts: list[protocol.Conflict], memory_id: str) -> str:
    lines = []
    for c in conflicts:
        said = c.words or wording.words(c.project, c.signals, c.newer, c.older)
        newer = c.newer.id == memory_id
        other = c.older if newer else c.newer
        lines.append(
            f"{wording.sentence(said, newer_side=newer, confidence=c.confidence)} "
            f"[{other.id}]{'; proposes supersede' if c.proposal else ''}"
        )
    return "\n".join(lines)


def merged(engine, r: protocol.StoreResult) -> protocol.StoreResult:
    """`r` again as the memory it was merged into, when the check after indexing found it a
    restatement (audited `merge`): as the agents' `remember` reads it."""
    if not r.created:
        return r
    from memls.agent.work import merged as read_back

    return read_back(engine, r)
