"""Verbs on memories: store, get, list, query, supersede, feedback, review, forget, forgotten."""

from __future__ import annotations

import json
import sys
from typing import Optional

import typer

from memls import protocol
from memls.cli.common import (
    JsonOpt,
    ProjectOpt,
    State,
    _call,
    _conflict_lines,
    _describe,
    _emit,
    _line,
    _params,
    app,
    citation_text,
    folder_key,
    merged,
    parse_cite,
    review_app,
)
from memls.daemon import open_engine


@app.command()
def store(
    text: str = typer.Argument(..., help="The memory's text."),
    project: Optional[str] = ProjectOpt,
    type: str = typer.Option(
        "note", "--type", "-t", help=f"One of: {', '.join(protocol.MEMORY_TYPES)}."
    ),
    valid_from: Optional[str] = typer.Option(None, "--valid-from", help="ISO 8601; default now."),
    valid_until: Optional[str] = typer.Option(None, "--valid-until", help="ISO 8601."),
    source: Optional[str] = typer.Option(None, "--source", help="Source URI."),
    force: bool = typer.Option(
        False,
        "--force",
        help="Store anyway: content that was forgotten, or a restatement of a stored memory.",
    ),
    redact: bool = typer.Option(
        False,
        "--redact",
        help="Replace a secret in the text by [REDACTED:kind] instead of refusing the memory.",
    ),
    cite: list[str] = typer.Option(
        [],
        "--cite",
        help="Code the memory cites: PATH[:START[-END]] relative to the project folder "
        "(repeatable; no range: the whole file).",
    ),
    wait: bool = typer.Option(
        False,
        "--wait",
        help="Wait for the checks after indexing (restatements, contradictions) and print "
        "what they found.",
    ),
    as_json: bool = JsonOpt,
) -> None:
    """Store a memory (a duplicate returns the existing id; a restatement of a memory of the
    same type is merged into it once indexed, which --wait reports; a text holding a secret
    is refused unless --redact)."""
    data = {
        "text": text,
        "project": folder_key(project),
        "citations": [parse_cite(raw, i) for i, raw in enumerate(cite)] or None,
        "type": type,
        "validFrom": valid_from,
        "validUntil": valid_until,
        "sourceUri": source,
        "force": force,
        "redact": redact,
    }
    params = _params(protocol.StoreParams, data)
    found: list[protocol.Conflict] = []
    with open_engine(State.data_dir, front="cli") as engine:
        r = engine.store(params)
        if wait:
            engine.flush()
            r = merged(engine, r)
            if r.created:
                found = engine.conflicts(
                    protocol.ConflictsParams(project=r.project, id=r.id)
                ).conflicts
    if r.duplicate == "near":
        human = (
            f"near duplicate: {r.id} already states this in {r.project!r} (seen again "
            f"{r.memory.seen_again} times; --force stores it anyway)"
        )
    elif r.duplicate:
        human = f"duplicate: {r.id} already holds this content in {r.project!r}"
    else:
        human = f"stored {r.id} in {r.project!r}"
        if r.tombstone_cleared:
            human += " (its tombstone was cleared)"
    if wait:
        human += "\n" + (_conflict_lines(found, r.id) or "no contradiction found")
        if as_json:
            sys.stdout.write(
                protocol.encode_json(
                    {**protocol.to_wire(r), "conflicts": protocol.to_wire(found)}
                ).decode()
                + "\n"
            )
            return
    if r.memory.citations:
        human += "\n" + "\n".join(
            f"  cites {citation_text(c)}{' (inferred)' if c.inferred else ''}"
            for c in r.memory.citations
        )
    _emit(r, as_json, human)


@app.command()
def reconfirm(
    id: str = typer.Argument(..., help="Memory id."),
    project: Optional[str] = ProjectOpt,
    as_json: bool = JsonOpt,
) -> None:
    """The memory's citations take the cited code as it is now (after you checked that the
    memory still holds)."""
    r = _call("reconfirm", protocol.ReconfirmParams, {"id": id, "project": folder_key(project)})
    _emit(r, as_json, f"re-confirmed {r.memory.id}: its citations are fresh again")


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
    include_user: bool = typer.Option(
        False, "--include-user", help="Also list the user-wide scope (@user)."
    ),
    as_json: bool = JsonOpt,
) -> None:
    """List the project's memories, newest first."""
    r = _call(
        "list",
        protocol.ListParams,
        {
            "project": project,
            "status": status,
            "trust": trust,
            "type": type,
            "limit": limit,
            "includeUser": include_user,
        },
    )
    _emit(r, as_json, "\n".join(_line(m) for m in r.memories) or "(no memories)")


@app.command()
def query(
    text: str = typer.Argument(..., help="What to look for."),
    project: Optional[str] = ProjectOpt,
    k: int = typer.Option(10, "--k", "-k", help="How many results."),
    valid_at: Optional[str] = typer.Option(
        None, "--valid-at", help="Memories valid at this time (ISO 8601)."
    ),
    as_of: Optional[str] = typer.Option(
        None, "--as-of", help="What the store had recorded at this time."
    ),
    type: Optional[list[str]] = typer.Option(None, "--type", "-t", help="Only these types."),
    include_user: bool = typer.Option(
        False, "--include-user", help="Also search the user-wide scope (@user)."
    ),
    mode: str = typer.Option(
        "default", "--mode", help="default, interactive (shallow re-rank) or lexical (BM25)."
    ),
    depth: Optional[str] = typer.Option(
        None,
        "--depth",
        help="How much re-ranking: none (fused order), interactive (a shallow head, "
        "[retrieval] interactive_depth), default ([retrieval] rerank_depth). Default: the "
        "mode's (interactive for --mode interactive, none for lexical), else default.",
    ),
    rerank: bool = typer.Option(
        True, "--rerank/--no-rerank", help="Re-score the head with the cross-encoder."
    ),
    explain: bool = typer.Option(
        False, "--explain", help="Show which stages scored each result, and how."
    ),
    as_json: bool = JsonOpt,
) -> None:
    """Search the project's memories (BM25 + vectors, fused, re-scored)."""
    r = _call(
        "query",
        protocol.QueryParams,
        {
            "query": text,
            "project": project,
            "k": k,
            "validAt": valid_at,
            "asOf": as_of,
            "types": type or None,
            "includeUser": include_user,
            "mode": mode,
            "depth": depth,
            "rerank": None if rerank else False,
            "explain": explain,
        },
        watch=True,
    )
    lines = []
    for h in r.results:
        lines.append(_line(h, h.score))
        if h.explain:
            lines += explain_table(protocol.to_wire(h.explain))
    lines += [f"degraded: {d}" for d in r.degraded]
    if r.cached and not as_json:
        lines.append("(from the query cache: nothing changed since this was asked)")
    _emit(r, as_json, "\n".join(lines) or "(no results)")


# The stages of a query in the order they run, as the explain dict names them: (label, score
# key, rank key). A key the pipeline does not send is left out; keys it sends that are not
# listed here are shown after them, so a new stage shows up without a change here.
STAGES = [
    ("bm25", "bm25", "bm25Rank"),
    ("vector (cosine)", "vector", "vectorRank"),
    ("fused", "fused", "fusedRank"),
    ("late interaction", "lateInteraction", "lateInteractionRank"),
    ("late interaction", "maxsim", "maxsimRank"),
    ("cross-encoder", "rerank", "rerankRank"),
]


def explain_table(e: dict) -> list[str]:
    """One line per stage that scored the result (score, and rank where it is known), then
    boosts, lift and the stage that set its place."""
    rows: list[tuple[str, str, str]] = []
    used = {"stage", "boosts", "liftedBy"}
    for label, key, rank in STAGES:
        used |= {key, rank}
        if e.get(key) is None and e.get(rank) is None:
            continue
        score = e.get(key)
        rows.append(
            (
                label,
                f"{score:.4g}" if isinstance(score, (int, float)) else str(score or "-"),
                f"#{e[rank]}" if e.get(rank) is not None else "",
            )
        )
    for key, value in e.items():
        if key not in used and value not in (None, {}, []):
            shown = f"{value:.4g}" if isinstance(value, float) else json.dumps(value)
            rows.append((key, shown, ""))
    boosts = e.get("boosts") or {}
    if boosts:
        rows.append(("boosts", " x ".join(f"{k} {v:g}" for k, v in boosts.items()), ""))
    if e.get("liftedBy"):
        rows.append(("lifted by", str(e["liftedBy"]), "neighbour in its source"))
    rows.append(("placed by", str(e.get("stage", "?")), ""))
    width = max(len(label) for label, _, _ in rows)
    return [f"    {label:<{width}}  {score:>10}  {rank}".rstrip() for label, score, rank in rows]


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
    r = _call(
        "feedback",
        protocol.FeedbackParams,
        {
            "id": id,
            "signal": signal,
            "project": project,
            "query": query,
        },
    )
    human = f"{r.id}: score {r.score}, trust {r.trust}"
    if r.transition:
        human += f" (was {r.transition.from_trust})"
    _emit(r, as_json, human)


def _review(
    action: str,
    id: Optional[str],
    project: Optional[str],
    note: Optional[str],
    state: Optional[str],
    as_json: bool,
) -> None:
    r = _call(
        "review",
        protocol.ReviewParams,
        {
            "action": action,
            "id": id,
            "project": project,
            "note": note,
            "state": state,
        },
    )
    if action == "list":
        human = "\n".join(_line(m) for m in r.memories) or f"(no {state or 'flagged'} memories)"
        if r.cited_code_changed:
            human += "\n\nCited code changed (re-confirm with `memls reconfirm ID`, or forget "
            human += "with --reason source_changed):\n"
            human += "\n".join(_line(m) for m in r.cited_code_changed)
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
    reason: str = typer.Option(
        ..., "--reason", help=f"One of: {', '.join(protocol.FORGET_REASONS)}."
    ),
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
    r = _call(
        "forgotten",
        protocol.ForgottenParams,
        {"project": project, "reason": reason, "limit": limit},
    )
    lines = [f"{e.at}  {e.memory_id}  {e.reason:<16} {e.preview}" for e in r.entries]
    _emit(r, as_json, "\n".join(lines) or "(nothing forgotten)")
