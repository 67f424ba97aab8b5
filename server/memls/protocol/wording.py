"""How a person reads a contradiction: the kind in words, the other statement quoted (cut at a
word, at most 120 characters) and placed by its workspace-relative path and line; and a
memory's named relations. One wording for every front: the engine puts it on each `Conflict`
(`ConflictWords`), the editor's diagnostics, the Conflicts view, the CLI and MCP print it.
Pure: no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from memls.protocol.base import SourceRange
from memls.protocol.conflicts import ConflictWords, Signal
from memls.protocol.records import Memory, RelationRef

QUOTE_LIMIT = 120

#: The kind of a contradiction, in words, by the signal that carries it.
KIND_WORDS: dict[str, str] = {
    "temporal_override": "a later switch",
    "negation": "opposite instructions",
    "antonym": "opposite instructions",
    "value_change": "different values",
    "choice_change": "different choices",
    "meaning": "opposite statements",
}
# when two signals weigh the same, the one a person acts on first
_ORDER = ("temporal_override", "value_change", "choice_change", "negation", "antonym", "meaning")


def kind(signals: Sequence[Signal]) -> str:
    """The contradiction's kind in words: its strongest signal's."""
    if not signals:
        return "a contradiction"
    best = max(
        signals,
        key=lambda s: (s.weight, -_ORDER.index(s.kind) if s.kind in _ORDER else -len(_ORDER)),
    )
    return KIND_WORDS.get(best.kind, "a contradiction")


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """The text on one line, cut at the last word that fits in `limit` characters (with the
    ellipsis), never inside a word unless the first word alone is longer."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    if space > 0:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-–—") + "…"


def age(recorded_at: str, now: str) -> str:
    """How long ago, coarse: today, 3d, 5w, 8mo, 2y."""
    try:
        days = (datetime.fromisoformat(now) - datetime.fromisoformat(recorded_at)).days
    except ValueError:
        return "?"
    if days < 1:
        return "today"
    if days < 14:
        return f"{days}d"
    if days < 61:
        return f"{days // 7}w"
    if days < 730:
        return f"{days // 30}mo"
    return f"{days // 365}y"


def place(memory: Memory, project: str) -> str:
    """Where a statement is, as a person reads it: `path:line` with the path relative to the
    project's folder (when the project is named by its folder, as editors name it), the file
    path otherwise; every note file that states it, first first (`AGENTS.md:3, GEMINI.md:7`);
    "a stored memory" when it comes from no file."""
    if not memory.source_uri:
        return "a stored memory"
    stated = [(s.uri, s.range) for s in memory.sources] or [
        (memory.source_uri, memory.source_range)
    ]
    return ", ".join(_place(uri, where, project) for uri, where in stated)


def related(refs: Sequence[RelationRef]) -> str:
    """A memory's named relations, as another memory tool named them: `depends_on m_1, ...`."""
    return ", ".join(f"{ref.label or 'relates to'} {ref.id}" for ref in refs)


def _place(uri: str, source_range: str | None, project: str) -> str:
    parts = urlsplit(uri)
    path = unquote(parts.path) if parts.scheme == "file" else uri
    try:
        shown = PurePosixPath(path).relative_to(PurePosixPath(project)).as_posix()
    except ValueError:
        shown = path
    where = SourceRange.parse(source_range)
    return f"{shown}:{where.start_line + 1}" if where is not None else shown


def words(project: str, signals: Sequence[Signal], newer: Memory, older: Memory) -> ConflictWords:
    return ConflictWords(
        kind=kind(signals),
        newer_quote=quote(newer.content),
        newer_place=place(newer, project),
        older_quote=quote(older.content),
        older_place=place(older, project),
    )


def sentence(w: ConflictWords, *, newer_side: bool, confidence: float | None = None) -> str:
    """The message shown on one side of the pair: what the other side says and where.
    "A later switch: contradicts “Use yarn to install dependencies.” (AGENTS.md:3)"."""
    if newer_side:
        said = f"contradicts “{w.older_quote}” ({w.older_place})"
    else:
        said = f"contradicted by “{w.newer_quote}” ({w.newer_place})"
    text = f"{w.kind[:1].upper()}{w.kind[1:]}: {said}"
    return text if confidence is None else f"{text}; confidence {confidence:.2f}"
