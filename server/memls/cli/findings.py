"""`memls check`'s findings, made from what the engine answered (pure: answers in, a
`protocol.CheckReport` out): the secrets in the project's note lines, the open contradictions
between two of its note lines, and the citations whose code changed or went. Also the one-line
text form of each finding and the summary."""

from __future__ import annotations

from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from memls import protocol
from memls.protocol import wording

STALE_STATES = ("changed", "missing")
"""Citation states that are findings: the cited text changed or went. A `moved` citation
followed its code (still true, not stale), as a `fresh` one stands where it stood."""

_ORDER = {kind: i for i, kind in enumerate(protocol.FINDING_KINDS)}


def relative(uri: str, project: str) -> str:
    """A note's path relative to the project folder (POSIX); the file's path when it is
    outside the folder; the URI itself when it names no file."""
    parts = urlsplit(uri)
    path = unquote(parts.path) if parts.scheme == "file" else uri
    try:
        return PurePosixPath(path).relative_to(PurePosixPath(project)).as_posix()
    except ValueError:
        return path


def line_span(source_range: str | None) -> tuple[int, int]:
    """A stored range (0-based, end exclusive) as 1-based inclusive lines; (1, 1) for none."""
    where = protocol.SourceRange.parse(source_range)
    if where is None:
        return 1, 1
    end = where.start_line if where.end_line is None else where.end_line
    if end > where.start_line and where.end_char == 0:  # ends where the next line starts
        end -= 1
    return where.start_line + 1, end + 1


def _statement(m: protocol.Memory, project: str) -> protocol.NoteStatement:
    line, end = line_span(m.source_range)
    return protocol.NoteStatement(
        path=relative(m.source_uri or "", project),
        line=line,
        end_line=end,
        text=m.content,
        memory=m.id,
    )


def secrets(notes: list[protocol.NoteFile], project: str) -> list[protocol.SecretFinding]:
    out = []
    for note in notes:
        for s in note.secrets:
            out.append(
                protocol.SecretFinding(
                    level="error",
                    path=relative(note.uri, project),
                    line=s.line + 1,
                    end_line=s.line + 1,
                    column=s.start + 1,
                    end_column=s.end + 1,
                    secret_kind=s.kind,
                    message=(
                        f"a secret ({s.kind}) in a note line: memls indexed it as "
                        f"[REDACTED:{s.kind}], the file still holds it (move it to your secret "
                        "store and rotate it)"
                    ),
                )
            )
    return out


def contradictions(
    conflicts: list[protocol.Conflict], note_uris: set[str], project: str
) -> list[protocol.ContradictionFinding]:
    """The open pairs whose two sides are both lines of the project's notes."""
    out = []
    for c in conflicts:
        if c.status != "open" or not {c.newer.source_uri, c.older.source_uri} <= note_uris:
            continue
        newer, older = _statement(c.newer, project), _statement(c.older, project)
        said = wording.kind(c.signals)
        signals = "+".join(dict.fromkeys(s.kind for s in c.signals)) or "contradiction"
        out.append(
            protocol.ContradictionFinding(
                level="warning",
                path=newer.path,
                line=newer.line,
                end_line=newer.end_line,
                newer=newer,
                older=older,
                signals=list(c.signals),
                confidence=round(c.confidence, 4),
                message=(
                    f"{said}: “{wording.quote(c.newer.content)}” contradicts "
                    f"“{wording.quote(c.older.content)}” ({older.path}:{older.line}); "
                    f"{signals}, confidence {c.confidence:.2f}"
                ),
            )
        )
    return out


def stale(
    citations: list[protocol.CitationStatus],
    memories: dict[str, protocol.Memory],
    note_uris: set[str],
    project: str,
) -> list[protocol.StaleFinding]:
    """A finding per citation whose cited text changed or went: on the citing memory's note
    line when it comes from one of the notes, else on the cited code."""
    out = []
    for c in citations:
        if c.state not in STALE_STATES:
            continue
        m = memories.get(c.memory)
        cited = protocol.CitedCode(
            path=c.path, line=c.start_line, end_line=c.end_line, symbol=c.symbol
        )
        where = f"{c.path}:{c.start_line}-{c.end_line}" + (f" ({c.symbol})" if c.symbol else "")
        what = "changed" if c.state == "changed" else "is gone"
        text = m.content if m is not None else ""
        message = f"memory {c.memory} cites {where}, which {what}"
        if text:
            message += f": “{wording.quote(text)}”"
        if m is not None and m.source_uri in note_uris:
            line, end = line_span(m.source_range)
            path = relative(m.source_uri or "", project)
        else:
            path, line, end = c.path, c.start_line, c.end_line
        out.append(
            protocol.StaleFinding(
                level="warning",
                path=path,
                line=line,
                end_line=end,
                memory=c.memory,
                text=text,
                state=c.state,  # type: ignore[arg-type]  # one of STALE_STATES
                cited=cited,
                diff=c.diff,
                message=message,
            )
        )
    return out


def report(
    project: str,
    notes: list[protocol.NoteFile],
    conflicts: list[protocol.Conflict],
    checked: protocol.CheckResult,
    memories: dict[str, protocol.Memory],
) -> protocol.CheckReport:
    """Every finding, sorted by path, line and kind, with their counts."""
    uris = {n.uri for n in notes}
    found: list[protocol.Finding] = [
        *secrets(notes, project),
        *contradictions(conflicts, uris, project),
        *stale(checked.citations, memories, uris, project),
    ]
    found.sort(key=lambda f: (f.path, f.line, _ORDER[kind_of(f)], f.message))
    counts = protocol.FindingCounts(
        **{k: sum(1 for f in found if kind_of(f) == k) for k in protocol.FINDING_KINDS}
    )
    return protocol.CheckReport(
        project=project,
        notes=sorted(relative(n.uri, project) for n in notes),
        findings=found,
        counts=counts,
        citations=checked.citations,
        changed=checked.changed,
    )


def kind_of(finding: protocol.Finding) -> protocol.FindingKind:
    return type(finding).__struct_config__.tag  # type: ignore[return-value]


def text_line(f: protocol.Finding) -> str:
    """`path:line: kind: message`, as compilers and linters print a finding."""
    return f"{f.path}:{f.line}: {kind_of(f)}: {f.message}"


def summary(r: protocol.CheckReport) -> str:
    total = len(r.findings)
    counts = [(getattr(r.counts, k), k) for k in protocol.FINDING_KINDS]
    by_kind = ", ".join(f"{n} {k if k == 'stale' or n == 1 else k + 's'}" for n, k in counts if n)
    states: dict[str, int] = {}
    for c in r.citations:
        states[c.state] = states.get(c.state, 0) + 1
    cited = ", ".join(f"{n} {s}" for s, n in sorted(states.items())) or "none"
    head = f"{total} finding{'' if total == 1 else 's'}" + (f" ({by_kind})" if by_kind else "")
    return (
        f"{head} in {r.project}: {len(r.notes)} note file{'' if len(r.notes) == 1 else 's'} "
        f"read; citations: {cited}"
    )
