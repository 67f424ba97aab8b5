"""Contradictions and secrets as editor diagnostics, and code actions (pure: conflicts in, LSP
types out)."""

from __future__ import annotations

from lsprotocol import types

from memls import protocol
from memls.protocol import wording

SOURCE = "memls"


def parse_range(text: str | None, lines: list[str] | None = None) -> types.Range | None:
    """A note unit's stored range (`protocol.SourceRange`, code points) as an LSP range
    (UTF-16 code units when the lines are known)."""
    where = protocol.SourceRange.parse(text)
    if where is None:
        return None
    sl, sc, ec = where.start_line, where.start_char, where.end_char
    el = sl if where.end_line is None else where.end_line
    if lines is not None:
        sc, ec = _utf16(lines, sl, sc), _utf16(lines, el, ec)
    return types.Range(
        start=types.Position(line=sl, character=sc), end=types.Position(line=el, character=ec)
    )


def _utf16(lines: list[str], line: int, column: int) -> int:
    if line >= len(lines):
        return column
    return len(lines[line][:column].encode("utf-16-le")) // 2


def for_document(
    uri: str, conflicts: list[protocol.Conflict], lines: list[str] | None = None
) -> list[types.Diagnostic]:
    """One Warning per open contradiction on each of this note's units."""
    out = []
    for c in conflicts:
        if c.status != "open":
            continue
        for here, other in ((c.newer, c.older), (c.older, c.newer)):
            if here.source_uri != uri:
                continue
            where = parse_range(here.source_range, lines)
            if where is None:
                continue
            related = []
            there = parse_range(other.source_range)
            if other.source_uri and there is not None:
                related.append(
                    types.DiagnosticRelatedInformation(
                        location=types.Location(uri=other.source_uri, range=there),
                        message=f"contradicting statement: {wording.quote(other.content)}",
                    )
                )
            kinds = "+".join(dict.fromkeys(s.kind for s in c.signals)) or "contradiction"
            said = c.words or wording.words(c.project, c.signals, c.newer, c.older)
            out.append(
                types.Diagnostic(
                    range=where,
                    severity=types.DiagnosticSeverity.Warning,
                    source=SOURCE,
                    code=kinds,
                    message=(
                        wording.sentence(said, newer_side=here is c.newer, confidence=c.confidence)
                        + (
                            "; the newer statement says it replaces it"
                            if c.proposal == "supersede"
                            else ""
                        )
                    ),
                    related_information=related or None,
                    data={
                        "project": c.project,
                        "here": here.id,
                        "other": other.id,
                        "newer": c.newer.id,
                        "older": c.older.id,
                        "otherUri": other.source_uri,
                        "otherRange": other.source_range,
                    },
                )
            )
    return out


def _name(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[-1]


def for_links(
    uri: str, links: list[protocol.NoteLink], lines: list[str] | None = None
) -> list[types.Diagnostic]:
    """A Hint on a note that a newer note supersedes or amends: on the line that says so when
    this note states it ("Superseded by [ADR-7](...)"), else on its first line."""
    out = []
    for link in links:
        if link.older_uri != uri:
            continue
        line = link.line if link.stated_in == uri else 0
        end = len(lines[line]) if lines is not None and line < len(lines) else 0
        file = _name(link.newer_uri)
        said = link.label if link.stated_in == uri and link.label not in ("", file) else ""
        verb = "superseded" if link.relation == "supersedes" else "amended"
        out.append(
            types.Diagnostic(
                range=types.Range(
                    start=types.Position(line=line, character=0),
                    end=types.Position(
                        line=line, character=_utf16(lines, line, end) if lines else end
                    ),
                ),
                severity=types.DiagnosticSeverity.Hint,
                source=SOURCE,
                code=link.relation,
                message=f"{verb} by {said} ({file})" if said else f"{verb} by {file}",
                related_information=[
                    types.DiagnosticRelatedInformation(
                        location=types.Location(
                            uri=link.newer_uri,
                            range=types.Range(
                                start=types.Position(line=0, character=0),
                                end=types.Position(line=0, character=0),
                            ),
                        ),
                        message=f"the newer record: {_name(link.newer_uri)}",
                    )
                ],
                data={"newerUri": link.newer_uri, "relation": link.relation},
            )
        )
    return out


def for_secrets(
    found: list[protocol.NoteSecret], lines: list[str] | None = None
) -> list[types.Diagnostic]:
    """A Warning on each secret in a note: memls indexed the line with the secret redacted;
    the file itself still holds it."""
    out = []
    for s in found:
        start = _utf16(lines, s.line, s.start) if lines else s.start
        end = _utf16(lines, s.line, s.end) if lines else s.end
        out.append(
            types.Diagnostic(
                range=types.Range(
                    start=types.Position(line=s.line, character=start),
                    end=types.Position(line=s.line, character=end),
                ),
                severity=types.DiagnosticSeverity.Warning,
                source=SOURCE,
                code="secret",
                message=(
                    f"A secret ({s.kind}) in a note: memls indexed this line as "
                    f"[REDACTED:{s.kind}]; the file still holds it (move it to your secret "
                    "store and rotate it)"
                ),
            )
        )
    return out


def for_refused(found: protocol.RefusedNote | None) -> list[types.Diagnostic]:
    """A Warning at the top of a link a note glob names that memls does not read: it leads out
    of the project's folder (or round a loop of links), and nothing outside is a note."""
    if found is None:
        return []
    top = types.Position(line=0, character=0)
    return [
        types.Diagnostic(
            range=types.Range(start=top, end=top),
            severity=types.DiagnosticSeverity.Warning,
            source=SOURCE,
            code="link-outside",
            message=f"Not read as a note: {found.message}",
        )
    ]


def for_warnings(
    found: list[protocol.NoteWarning], lines: list[str] | None
) -> list[types.Diagnostic]:
    """A Warning on each line of a note the owner could not read as its agent meant it (front
    matter that is not YAML, a scope glob, an import that leads out, a file another of its
    folder wins over): its lines are read all the same, as applying to the whole project."""
    out = []
    for w in found:
        end = len(lines[w.line]) if lines is not None and 0 <= w.line < len(lines) else 0
        out.append(
            types.Diagnostic(
                range=types.Range(
                    start=types.Position(line=w.line, character=0),
                    end=types.Position(line=w.line, character=end),
                ),
                severity=types.DiagnosticSeverity.Warning,
                source=SOURCE,
                code="note-unread",
                message=f"memls: {w.message}",
            )
        )
    return out


def actions(diagnostics: list[types.Diagnostic]) -> list[types.CodeAction]:
    """For each memls diagnostic: supersede the older, dismiss, open the other statement; for
    a superseded/amended note's hint: open the newer record."""
    out = []
    for d in diagnostics:
        data = d.data if isinstance(d.data, dict) else None
        if d.source == SOURCE and data and data.get("newerUri"):
            out.append(
                types.CodeAction(
                    title=f"Open the newer record ({_name(data['newerUri'])})",
                    kind=types.CodeActionKind.Empty,
                    diagnostics=[d],
                    command=types.Command(
                        title="Open the newer record",
                        command="memls.open",
                        arguments=[{"uri": data["newerUri"], "range": "0:0-0:0"}],
                    ),
                )
            )
            continue
        if d.source != SOURCE or not data or "newer" not in data:
            continue
        pair = {"project": data["project"], "a": data["newer"], "b": data["older"]}
        out.append(
            types.CodeAction(
                title="Supersede the older statement",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[d],
                command=types.Command(
                    title="Supersede the older statement",
                    command="memls.resolve",
                    arguments=[{**pair, "action": "supersede"}],
                ),
            )
        )
        out.append(
            types.CodeAction(
                title="Not a contradiction",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[d],
                command=types.Command(
                    title="Not a contradiction",
                    command="memls.resolve",
                    arguments=[{**pair, "action": "dismiss"}],
                ),
            )
        )
        if data.get("otherUri") and parse_range(data.get("otherRange")) is not None:
            out.append(
                types.CodeAction(
                    title="Open the other statement",
                    kind=types.CodeActionKind.Empty,
                    diagnostics=[d],
                    command=types.Command(
                        title="Open the other statement",
                        command="memls.open",
                        arguments=[{"uri": data["otherUri"], "range": data["otherRange"]}],
                    ),
                )
            )
    return out
