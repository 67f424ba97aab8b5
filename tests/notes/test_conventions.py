"""The table of the agents' file conventions: which path is which agent's file, of which kind,
default type and scope rule, and the folder it applies from."""

from __future__ import annotations

import pytest

from memls.notes import DEFAULT, table
from memls.notes.conventions import CONVENTIONS


@pytest.mark.parametrize(
    ("path", "origin", "kind", "memory_type", "base"),
    [
        pytest.param("AGENTS.md", "Codex AGENTS.md", "instructions", "note", "", id="AGENTS.md"),
        pytest.param(
            "services/api/AGENTS.md",
            "Codex AGENTS.md",
            "instructions",
            "note",
            "services/api",
            id="nested AGENTS.md",
        ),
        pytest.param(
            "services/api/AGENTS.override.md",
            "Codex AGENTS.override.md",
            "instructions",
            "note",
            "services/api",
            id="AGENTS.override.md",
        ),
        pytest.param("CLAUDE.md", "Claude Code", "instructions", "note", "", id="CLAUDE.md"),
        pytest.param(
            "pkg/CLAUDE.md", "Claude Code", "instructions", "note", "pkg", id="nested CLAUDE.md"
        ),
        pytest.param(
            ".claude/CLAUDE.md", "Claude Code", "instructions", "note", "", id=".claude/CLAUDE.md"
        ),
        pytest.param(
            "pkg/.claude/CLAUDE.md",
            "Claude Code",
            "instructions",
            "note",
            "pkg",
            id="nested .claude/CLAUDE.md",
        ),
        pytest.param(
            "CLAUDE.local.md",
            "Claude Code (local)",
            "instructions",
            "note",
            "",
            id="CLAUDE.local.md",
        ),
        pytest.param(
            ".claude/rules/testing.md",
            "Claude Code rules",
            "instructions",
            "convention",
            "",
            id="Claude rule",
        ),
        pytest.param(
            ".claude/rules/frontend/react.md",
            "Claude Code rules",
            "instructions",
            "convention",
            "",
            id="Claude rule in a subfolder",
        ),
        pytest.param(
            ".claude/rules/CLAUDE.md",
            "Claude Code rules",
            "instructions",
            "convention",
            "",
            id="a CLAUDE.md among the rules is a rule",
        ),
        pytest.param("GEMINI.md", "Gemini CLI", "instructions", "note", "", id="GEMINI.md"),
        pytest.param(
            "a/b/GEMINI.md", "Gemini CLI", "instructions", "note", "a/b", id="nested GEMINI"
        ),
        pytest.param(
            ".github/copilot-instructions.md",
            "Copilot instructions",
            "instructions",
            "convention",
            "",
            id="copilot-instructions.md",
        ),
        pytest.param(
            ".github/instructions/ts.instructions.md",
            "Copilot instructions",
            "instructions",
            "convention",
            "",
            id="Copilot path instructions",
        ),
        pytest.param(
            ".cursor/rules/python.mdc",
            "Cursor rules",
            "instructions",
            "convention",
            "",
            id="Cursor rule",
        ),
        pytest.param(
            "web/.cursor/rules/react.mdc",
            "Cursor rules",
            "instructions",
            "convention",
            "web",
            id="nested Cursor rule",
        ),
        pytest.param(
            ".cursorrules",
            "Cursor (legacy .cursorrules)",
            "instructions",
            "convention",
            "",
            id=".cursorrules",
        ),
        pytest.param(
            ".windsurf/rules/style.md",
            "Windsurf rules",
            "instructions",
            "convention",
            "",
            id="Windsurf rule",
        ),
        pytest.param(
            ".windsurfrules",
            "Windsurf (legacy .windsurfrules)",
            "instructions",
            "convention",
            "",
            id=".windsurfrules",
        ),
        pytest.param(
            ".clinerules",
            "Cline (.clinerules file)",
            "instructions",
            "convention",
            "",
            id=".clinerules file",
        ),
        pytest.param(
            ".clinerules/01-style.md",
            "Cline rules",
            "instructions",
            "convention",
            "",
            id=".clinerules folder",
        ),
        pytest.param(
            ".kiro/steering/tech.md",
            "Kiro steering",
            "instructions",
            "convention",
            "",
            id="Kiro steering",
        ),
        pytest.param(
            ".junie/guidelines.md",
            "Junie guidelines",
            "instructions",
            "convention",
            "",
            id="Junie",
        ),
        pytest.param("AGENT.md", "Amp AGENT.md", "instructions", "note", "", id="AGENT.md"),
        pytest.param(".rules", "Zed .rules", "instructions", "convention", "", id="Zed .rules"),
        pytest.param(".memls/team.md", "memls notes", "instructions", "note", "", id="memls"),
        pytest.param(
            "docs/adr/0001-sqlite.md",
            "decision records (docs/adr)",
            "record",
            "decision",
            "",
            id="docs/adr",
        ),
        pytest.param(
            "doc/adr/0002-kafka.md",
            "decision records (adr-tools)",
            "record",
            "decision",
            "",
            id="doc/adr (adr-tools)",
        ),
        pytest.param(
            "docs/decisions/0003-x.md",
            "decision records (MADR)",
            "record",
            "decision",
            "",
            id="docs/decisions",
        ),
    ],
)
def test_each_agents_file_is_named_with_its_origin_kind_type_and_base(
    path: str, origin: str, kind: str, memory_type: str, base: str
) -> None:
    found = DEFAULT.match(path)
    assert found is not None
    assert (found.origin, found.kind, found.memory_type, found.base) == (
        origin,
        kind,
        memory_type,
        base,
    )


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("README.md", id="a readme"),
        pytest.param("docs/guide.md", id="a doc"),
        pytest.param(".github/workflows/ci.yml", id="a workflow"),
        pytest.param("agents.md", id="another case"),
        pytest.param("src/.cursorrules", id="a legacy rules file below the root"),
        pytest.param(".github/instructions/ts.md", id="no .instructions.md"),
        pytest.param("pkg/.github/copilot-instructions.md", id="copilot below the root"),
        pytest.param("pkg/docs/adr/0001-x.md", id="records below the root"),
        pytest.param(".kiro/steering/tech.txt", id="not markdown"),
    ],
)
def test_what_no_agent_reads_is_no_note(path: str) -> None:
    assert DEFAULT.match(path) is None


def test_a_users_globs_add_notes_and_say_kinds_before_the_table() -> None:
    mine = table(
        globs=["NOTES.md", "team/**/*.md"], instructions=["NOTES.md"], records=["AGENTS.md"]
    )
    assert mine.match("NOTES.md").kind == "instructions"  # type: ignore[union-attr]
    assert mine.match("NOTES.md").origin == "config.toml [notes]"  # type: ignore[union-attr]
    assert mine.match("team/a/b.md").kind == ""  # type: ignore[union-attr]
    assert mine.match("AGENTS.md").kind == "record"  # type: ignore[union-attr]
    assert mine.match("sub/NOTES.md") is None  # a user's glob is anchored at the root


def test_the_table_gives_globs_and_watched_prefixes() -> None:
    globs = DEFAULT.globs()
    assert "**/AGENTS.md" in globs and ".github/copilot-instructions.md" in globs
    assert ".claude/rules" in DEFAULT.prefixes() and "doc/adr" in DEFAULT.prefixes()
    # the rows of the agents' own memory folders name no file of the project
    outside = [c for c in CONVENTIONS if c.anchor != "project"]
    assert {c.anchor for c in outside} == {"claude-memory", "codex-memories", "gemini-memory"}
    assert len(globs) == len(CONVENTIONS) - len(outside)
    assert DEFAULT.match("team/notes.md") is None and DEFAULT.match("MEMORY.md") is None
    assert DEFAULT.anchored("claude-memory") == ("*.md", "team/*.md")
