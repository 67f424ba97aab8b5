"""Which files are notes: one table of the agents' file conventions. Pure.

Each coding agent reads (and some write) memory in files of its own: Codex and many others
`AGENTS.md` in any folder, Claude Code `CLAUDE.md` and `.claude/rules/`, Copilot
`.github/copilot-instructions.md` and `.github/instructions/`, Cursor `.cursor/rules/`, and so
on. A row of `CONVENTIONS` says, for one of them, where the file is (`path`, a glob relative
to the folder it sits in), whose convention it is (`origin`), what kind of document it is for
the contradiction check (`kind`: every line a standing instruction, or a decision record),
which files it applies to (`scope`: the whole project, the folder it sits in, or the globs of
its front matter) and the memory type its lines default to. Every place that decides what a
note is asks this table (`Table.match`): the owner's note watcher and the engine's sync; the
editor's front only relays buffers and shows what the owner answers.

A row is relative to the project's folder (`anchor` "project"); a row for files an agent keeps
outside the project (its own memory folder: Claude Code's auto memory, Codex's memories,
Gemini CLI's global memory) names that agent's folder as its anchor, which the owner finds
(`memls.notes.agent_places`) and follows beside the project's notes; `match` never names them.
The layouts were read from each agent's documentation (README.md, "Which agent files memls
reads").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from memls.notes.globs import match as glob_match
from memls.notes.globs import matches
from memls.protocol.base import ORIGIN_NAMES, AgentOrigin, MemoryType, NoteKind

Scoping = Literal["project", "folder", "frontmatter"]
"""Which files a note's lines apply to: the whole project; the folder the note sits in (and
below it: `services/api/AGENTS.md` -> `services/api/**`); or the globs its front matter names
(`paths`, `applyTo`, `globs`, `fileMatchPattern`), else its folder."""

WILDCARDS = frozenset("*?[{")


@dataclass(frozen=True)
class Convention:
    """One agent's file convention (see the module doc)."""

    path: str
    origin: str
    kind: NoteKind
    scope: Scoping
    memory_type: MemoryType = "note"
    #: found in any folder of the project (it applies from there), not only at its root
    nested: bool = False
    #: Claude Code's `@path` imports are followed (`memls.notes.imports`)
    imports: bool = False
    #: file names of the same folder this file wins over (the agent reads one of them)
    shadows: tuple[str, ...] = ()
    #: what `path` is relative to: "project" (the project's folder) or a folder outside it
    #: that an agent keeps (resolved by the owner)
    anchor: str = "project"


def _rule(path: str, origin: str, scope: Scoping = "project", **more: object) -> Convention:
    return Convention(path, origin, "instructions", scope, "convention", **more)  # type: ignore[arg-type]


def _file(path: str, origin: str, **more: object) -> Convention:
    return Convention(path, origin, "instructions", "folder", "note", **more)  # type: ignore[arg-type]


def _record(path: str, origin: str) -> Convention:
    return Convention(path, origin, "record", "project", "decision")


def _own(path: str, anchor: AgentOrigin) -> Convention:
    return Convention(path, ORIGIN_NAMES[anchor], "instructions", "project", anchor=anchor)


CONVENTIONS: tuple[Convention, ...] = (
    # folders of rule files first: a CLAUDE.md inside `.claude/rules/` is a rule
    _rule(".claude/rules/**/*.md", "Claude Code rules", "frontmatter", nested=True),
    _file(".claude/CLAUDE.md", "Claude Code", nested=True, imports=True),
    _rule(".github/instructions/**/*.instructions.md", "Copilot instructions", "frontmatter"),
    _rule(".github/copilot-instructions.md", "Copilot instructions"),
    _rule(".cursor/rules/**", "Cursor rules", "frontmatter", nested=True),
    _rule(".windsurf/rules/**", "Windsurf rules", "frontmatter"),
    _rule(".clinerules/**/*.md", "Cline rules", "frontmatter"),
    _rule(".kiro/steering/**/*.md", "Kiro steering", "frontmatter"),
    _rule(".junie/guidelines.md", "Junie guidelines"),
    Convention(".memls/**/*.md", "memls notes", "instructions", "project"),
    _record("docs/adr/**/*.md", "decision records (docs/adr)"),
    _record("doc/adr/**/*.md", "decision records (adr-tools)"),
    _record("docs/decisions/**/*.md", "decision records (MADR)"),
    # one file a folder, in any folder
    _file("AGENTS.override.md", "Codex AGENTS.override.md", nested=True, shadows=("AGENTS.md",)),
    _file("AGENTS.md", "Codex AGENTS.md", nested=True),
    _file("CLAUDE.md", "Claude Code", nested=True, imports=True),
    _file("CLAUDE.local.md", "Claude Code (local)", nested=True, imports=True),
    _file("GEMINI.md", "Gemini CLI", nested=True),
    _file("AGENT.md", "Amp AGENT.md", nested=True),
    # one file at the root
    _rule(".cursorrules", "Cursor (legacy .cursorrules)"),
    _rule(".windsurfrules", "Windsurf (legacy .windsurfrules)"),
    _rule(".clinerules", "Cline (.clinerules file)"),
    _rule(".rules", "Zed .rules"),
    # the memories agents keep by themselves, outside the project: each anchor a folder that
    # `memls.notes.agent_places` finds as its agent does; every line a standing statement of
    # the agent's own, its type from the file (`memls.notes.agent_memory`)
    _own("*.md", "claude-memory"),
    _own("team/*.md", "claude-memory"),
    _own("MEMORY.md", "codex-memories"),
    _own("memory_summary.md", "codex-memories"),
    _own("extensions/ad_hoc/notes/*.md", "codex-memories"),
    _own("GEMINI.md", "gemini-memory"),  # the name `context.fileName` of its settings says
)
"""The agents' conventions, first match wins."""


@dataclass(frozen=True)
class Match:
    """A file the table names: its convention, and the folder it applies from."""

    convention: Convention
    #: the folder (relative to the project, POSIX, "" for its root) the file applies from:
    #: `services/api` for `services/api/AGENTS.md` and `services/api/.cursor/rules/x.mdc`
    base: str
    kind: NoteKind

    @property
    def origin(self) -> str:
        return self.convention.origin

    @property
    def memory_type(self) -> MemoryType:
        return self.convention.memory_type


def _parts(path: str) -> list[str]:
    return [p for p in path.split("/") if p not in ("", ".")]


def _literal(segment: str) -> bool:
    return not (WILDCARDS & set(segment))


@dataclass(frozen=True)
class Table:
    """The conventions in order, with a user's own globs after them (config.toml's `[notes]`:
    `globs` adds notes, `instructions` and `records` say the kind of the paths they name,
    before the table's)."""

    conventions: tuple[Convention, ...] = CONVENTIONS
    instructions: tuple[str, ...] = ()
    records: tuple[str, ...] = ()
    _by_name: dict[str, list[Convention]] = field(default_factory=dict, compare=False)
    _by_folder: dict[str, list[Convention]] = field(default_factory=dict, compare=False)
    _other: list[Convention] = field(default_factory=list, compare=False)

    def __post_init__(self) -> None:
        for c in self.conventions:
            if c.anchor != "project":
                continue
            parts = _parts(c.path)
            if len(parts) == 1 and _literal(parts[0]):
                self._by_name.setdefault(parts[0], []).append(c)
            elif parts and _literal(parts[0]):
                self._by_folder.setdefault(parts[0], []).append(c)
            else:
                self._other.append(c)

    def match(self, relative: str) -> Match | None:
        """The convention a project-relative POSIX path is a file of (None: no note)."""
        parts = _parts(relative)
        if not parts:
            return None
        tried: list[tuple[Convention, int]] = []
        for c in self._by_name.get(parts[-1], ()):
            tried.append((c, len(parts) - 1))
        for i, segment in enumerate(parts[:-1]):
            for c in self._by_folder.get(segment, ()):
                tried.append((c, i))
        for c in self._other:
            tried.append((c, 0))
        # table order first, then the deepest folder it can apply from
        tried.sort(key=lambda t: (self.conventions.index(t[0]), -t[1]))
        for c, start in tried:
            if start > 0 and not c.nested:
                continue
            if glob_match("/".join(parts[start:]), c.path):
                base = "/".join(parts[:start])
                return Match(c, base, self.kind_of(relative, c.kind))
        return None

    def kind_of(self, relative: str, kind: NoteKind = "") -> NoteKind:
        """The user's globs say the kind of the paths they name; else the convention's."""
        if matches(relative, self.instructions):
            return "instructions"
        if matches(relative, self.records):
            return "record"
        return kind

    def anchored(self, anchor: str) -> tuple[str, ...]:
        """The paths (globs relative to the anchor's folder) of the files an agent keeps by
        itself in the folder `anchor` names (`memls.notes.agent_places`)."""
        return tuple(c.path for c in self.conventions if c.anchor == anchor)

    def globs(self) -> tuple[str, ...]:
        """Each project convention as a glob on project-relative paths (a nested one with
        `**/` before it)."""
        return tuple(
            ("**/" + c.path) if c.nested else c.path
            for c in self.conventions
            if c.anchor == "project"
        )

    def root_globs(self) -> tuple[str, ...]:
        """The globs that name files at fixed places (not `**/` anywhere): a link of one of
        these names, or to a folder one of them is below, that leads out is reported."""
        return tuple(c.path for c in self.conventions if c.anchor == "project")

    def prefixes(self) -> tuple[str, ...]:
        """The folders the root conventions name before their first wildcard (`.claude/rules`,
        `docs/adr`): watched, when they exist, so that a new file there is seen."""
        out: list[str] = []
        for c in self.conventions:
            if c.anchor != "project":
                continue
            parts = _parts(c.path)[:-1]
            fixed: list[str] = []
            for part in parts:
                if not _literal(part):
                    break
                fixed.append(part)
            if fixed and "/".join(fixed) not in out:
                out.append("/".join(fixed))
        return tuple(out)


def table(
    globs: Iterable[str] = (), instructions: Iterable[str] = (), records: Iterable[str] = ()
) -> Table:
    """The table with a user's own globs added (config.toml's `[notes]`)."""
    extra = tuple(Convention(g, "config.toml [notes]", "", "project") for g in globs if g.strip())
    return Table(CONVENTIONS + extra, tuple(instructions), tuple(records))


DEFAULT = Table()


def only(globs: Iterable[str], instructions: Iterable[str] = ()) -> Table:
    """A table of these globs alone (no agent's conventions): for tests and benchmarks that
    look at a few files."""
    return Table(
        tuple(Convention(g, "globs", "", "project") for g in globs), tuple(instructions), ()
    )
