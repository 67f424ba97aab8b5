"""Turning what a front says a memory cites into anchors: the paths checked inside the
project folder, the ranges checked against the file, symbols found by their parser, and (where
the text names them) inferred citations. Reads the disk; writes nothing."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

import msgspec

from memls import protocol
from memls.citations import (
    Anchor,
    FileView,
    anchor_coarse,
    anchor_file,
    anchor_span,
    anchor_symbol,
    enclosing,
    find_symbol,
    git,
    supported,
    symbols,
)
from memls.citations import files as cited_files
from memls.errors import InvalidInput
from memls.store.citations import NewCitation

MAX_INFERRED = 8
"""Inferred citations on one memory at most (the first paths and symbols its text names)."""

_PATH = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]{1,8})(?::(\d+)(?:-(\d+))?)?"
)
_TICKED = re.compile(r"`([A-Za-z_][\w.]*?)(?:\(\))?`")
_LINK = re.compile(r"\]\(([^)\s#]+)(?:#L(\d+)(?:-L(\d+))?)?\)")


def project_root(project: str, *, field: str = "citations") -> Path:
    """The folder a project key names; citations need one."""
    root = Path(project)
    if not root.is_absolute() or not root.is_dir():
        raise InvalidInput(
            f"project {project!r} is not a folder: only a project that is a folder can "
            "take citations",
            field=field,
        )
    return root


def encode(anchor: Anchor) -> str:
    return msgspec.json.encode(anchor).decode()


def decode(text: str) -> Anchor:
    return msgspec.json.decode(text, type=Anchor)


def prepare(
    project: str,
    specs: Sequence[protocol.CitationSpec],
    *,
    text: str = "",
    infer: bool = False,
    source_uri: str | None = None,
    field: str = "citations",
) -> list[NewCitation]:
    """The citations of one memory about to be stored (explicit ones first, then inferred);
    InvalidInput naming the field for the first bad one (nothing is stored then)."""
    if not specs and not infer:
        return []
    if not specs:
        root = Path(project)
        if not root.is_absolute() or not root.is_dir():
            return []
    root = project_root(project, field=field)
    commit = None  # filled in below, once there is something to cite (git runs once)
    out = [
        _explicit(root, spec, f"{field}[{i}]", commit, inferred=False)
        for i, spec in enumerate(specs)
    ]
    if infer:
        seen = {(c.path, c.start_line, c.end_line, c.symbol) for c in out}
        implied = [around for c in out if (around := _enclosing(root, c, commit)) is not None]
        implied += infer_citations(root, text, source_uri, commit) if text else []
        for found in implied:
            key = (found.path, found.start_line, found.end_line, found.symbol)
            if key not in seen and len(out) < len(specs) + MAX_INFERRED:
                seen.add(key)
                out.append(found)
    if out:
        head = git.head(root)
        out = [dataclasses.replace(c, commit_id=head) for c in out]
    return out


def _enclosing(root: Path, cited: NewCitation, commit: str | None) -> NewCitation | None:
    """The definition around a cited span (a selection inside a function cites the function
    too), inferred; None when the span is not inside one or is the whole of it."""
    if cited.kind != "span" or not supported(cited.path):
        return None
    found = cited_files.read(root, cited.path)
    if found is None or found.view is None:
        return None
    inner = enclosing(
        symbols(cited.path, "\n".join(found.view.lines)), cited.start_line, cited.end_line
    )
    if inner is None or (inner.start_line, inner.end_line) == (cited.start_line, cited.end_line):
        return None
    anchor = anchor_symbol(cited.path, found.view, inner.name, inner.start_line, inner.end_line)
    return _new(anchor, commit, inferred=True)


def _read_view(root: Path, rel: str, field: str) -> tuple[FileView | None, str | None]:
    found = cited_files.read(root, rel)
    if found is None:
        raise InvalidInput(f"{rel!r} does not exist in the project", field=f"{field}.path")
    if found.error is not None:
        raise InvalidInput(f"{rel!r} cannot be read: {found.error}", field=f"{field}.path")
    return found.view, found.digest


def _explicit(
    root: Path, spec: protocol.CitationSpec, field: str, commit: str | None, *, inferred: bool
) -> NewCitation:
    rel = cited_files.relative(root, spec.path, field=f"{field}.path")
    view, digest = _read_view(root, rel, field)
    start, end = spec.start_line, spec.end_line
    if end is not None and start is None:
        raise InvalidInput("an endLine needs a startLine", field=f"{field}.startLine")
    if start is not None and end is None:
        end = start
    if start is not None and end is not None and end < start:
        raise InvalidInput(f"ends ({end}) before it starts ({start})", field=f"{field}.endLine")
    if view is None:  # binary or too big: the file's fingerprint only
        assert digest is not None
        if spec.symbol is not None:
            raise InvalidInput(
                f"{rel!r} is binary or over {cited_files.MAX_TEXT_BYTES} bytes: it has no symbols",
                field=f"{field}.symbol",
            )
        lines = cited_files.line_count(root, rel)
        if end is not None and end > max(1, lines):
            raise InvalidInput(
                f"{rel!r} has {lines} lines; line {end} is outside it", field=f"{field}.endLine"
            )
        anchor = anchor_coarse(rel, digest, lines, kind="span" if start else "file")
        if start is not None and end is not None:
            anchor = msgspec.structs.replace(anchor, start_line=start, end_line=end)
        return _new(anchor, commit, inferred)
    if end is not None and end > view.line_count:
        raise InvalidInput(
            f"{rel!r} has {view.line_count} lines; line {end} is outside it",
            field=f"{field}.endLine",
        )
    if spec.symbol is not None:
        return _new(_symbol(rel, view, spec.symbol, start, end, field), commit, inferred)
    if start is None or end is None:
        return _new(anchor_file(rel, view), commit, inferred)
    anchor = anchor_span(rel, view, start, end)
    if not anchor.lines and not view.span(start, end):
        raise InvalidInput(
            f"lines {start}-{end} of {rel!r} are blank: cite lines with code",
            field=f"{field}.startLine",
        )
    return _new(anchor, commit, inferred)


def _symbol(
    rel: str, view: FileView, name: str, start: int | None, end: int | None, field: str
) -> Anchor:
    if not supported(rel):
        raise InvalidInput(
            f"symbols are read in Python, JavaScript, TypeScript, Go, Rust and Java files, "
            f"not {rel!r}",
            field=f"{field}.symbol",
        )
    found = symbols(rel, "\n".join(view.lines))
    symbol = find_symbol(found, name)
    if symbol is None and start is not None and end is not None:
        inner = enclosing(found, start, end)
        symbol = inner if inner is not None and inner.name.endswith(name) else None
    if symbol is None:
        raise InvalidInput(f"no definition {name!r} in {rel!r}", field=f"{field}.symbol")
    return anchor_symbol(rel, view, symbol.name, symbol.start_line, symbol.end_line)


def _new(anchor: Anchor, commit: str | None, inferred: bool) -> NewCitation:
    return NewCitation(
        path=anchor.path,
        start_line=anchor.start_line,
        end_line=anchor.end_line,
        symbol=anchor.symbol,
        kind=anchor.kind,
        inferred=inferred,
        fingerprint=anchor.fingerprint,
        anchor=encode(anchor),
        commit_id=commit,
    )


def infer_citations(
    root: Path, text: str, source_uri: str | None, commit: str | None
) -> list[NewCitation]:
    """Citations a memory's text implies: a project-relative path that exists (with
    `:LINE[-END]` a span), a markdown link to a code file (`[x](../src/a.py#L10-L20)`,
    relative to the note that holds it), and a backticked name (`parse_args`, `Cls.method`)
    defined in a file the text names. Each is marked inferred; what does not exist is
    left out, silently."""
    out: list[NewCitation] = []
    named: list[str] = []
    base = _note_folder(root, source_uri)
    candidates: list[tuple[str, int | None, int | None]] = []
    for match in _LINK.finditer(text):
        target, start, end = match.groups()
        if "://" in target:
            continue
        joined = (base / target) if base is not None else (root / target)
        try:
            rel = str(joined.resolve().relative_to(root.resolve()))
        except (OSError, ValueError):
            continue
        candidates.append((rel, int(start) if start else None, int(end) if end else None))
    for match in _PATH.finditer(text):
        path, start, end = match.groups()
        if "/" in path or (root / path).is_file():
            candidates.append((path, int(start) if start else None, int(end) if end else None))
    for path, start, end in candidates:
        spec = protocol.CitationSpec(path=path, start_line=start, end_line=end)
        try:
            found = _explicit(root, spec, "text", commit, inferred=True)
        except InvalidInput:
            continue
        out.append(found)
        named.append(found.path)
    ticked = [m.group(1) for m in _TICKED.finditer(text) if "/" not in m.group(1)]
    for name in ticked:
        short = name.rsplit(".", 1)[-1]
        where = named + [p for p in git.files_naming(root, short) if p not in named]
        for path in where:
            if not supported(path):
                continue
            spec = protocol.CitationSpec(path=path, symbol=name)
            try:
                out.append(_explicit(root, spec, "text", commit, inferred=True))
                break
            except InvalidInput:
                continue
    return out[: MAX_INFERRED * 2]


def _note_folder(root: Path, source_uri: str | None) -> Path | None:
    if not source_uri or not source_uri.startswith("file://"):
        return None
    path = Path(unquote(urlparse(source_uri).path))
    return path.parent if path.is_absolute() else None
