"""memls.notes globs: which files are notes, and the default type a note's folder gives."""

from __future__ import annotations

import pytest

from memls.notes import DEFAULT_GLOBS, default_type, match, matches, note_kind
from memls.notes.globs import below


@pytest.mark.parametrize(
    "path, glob, expected",
    [
        (".memls/a.md", ".memls/**/*.md", True),
        (".memls/x/y/a.md", ".memls/**/*.md", True),
        (".memls/a.txt", ".memls/**/*.md", False),
        ("other/.memls/a.md", ".memls/**/*.md", False),
        ("AGENTS.md", "AGENTS.md", True),
        ("pkg/AGENTS.md", "AGENTS.md", False),
        ("pkg/AGENTS.md", "**/AGENTS.md", True),
        ("AGENTS.md", "**/AGENTS.md", True),
        (".cursor/rules/python.mdc", ".cursor/rules/**", True),
        (".cursor/rules/a/b/c.mdc", ".cursor/rules/**", True),
        (".cursor/rules", ".cursor/rules/**", False),
        (".cursor/other.mdc", ".cursor/rules/**", False),
        ("docs/adr/0001-x.md", "docs/adr/**/*.md", True),
        ("docs/adrs/0001-x.md", "docs/adr/**/*.md", False),
        ("a/b/c.md", "a/*.md", False),  # `*` never crosses `/`
        ("a/bc.md", "a/?c.md", True),
        ("a/b.md", "a/[!b].md", False),
        ("./AGENTS.md", "AGENTS.md", True),
        ("a/x/b/y/c", "a/**/b/**/c", True),
        ("a/b/c", "a/**/b/**/c", True),
        ("", "**", False),
    ],
)
def test_glob_match(path: str, glob: str, expected: bool) -> None:
    assert match(path, glob) is expected


def test_default_globs() -> None:
    yes = [
        "AGENTS.md",
        "CLAUDE.md",
        ".memls/team.md",
        ".memls/a/b.md",
        "docs/adr/0001-sqlite.md",
        "docs/decisions/2024/x.md",
        ".github/copilot-instructions.md",
        ".cursor/rules/python.mdc",
    ]
    no = ["README.md", "src/AGENTS.md", "docs/guide.md", ".github/workflows/ci.yml", "agents.md"]
    assert all(matches(p, DEFAULT_GLOBS) for p in yes)
    assert not any(matches(p, DEFAULT_GLOBS) for p in no)
    assert matches("agents.md", DEFAULT_GLOBS, case_sensitive=False)
    assert matches("AGENTS.md", "AGENTS.md")  # a lone string is one glob
    assert default_type("docs/adr/0001-sqlite.md") == "decision"
    assert default_type(".cursor/rules/py.mdc") == "convention"
    assert default_type("AGENTS.md") == "note"


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        pytest.param("AGENTS.md", "instructions", id="root AGENTS.md"),
        pytest.param("packages/web/AGENTS.md", "instructions", id="nested AGENTS.md"),
        pytest.param("CLAUDE.md", "instructions", id="CLAUDE.md"),
        pytest.param(".github/copilot-instructions.md", "instructions", id="copilot"),
        pytest.param(".cursor/rules/python.mdc", "instructions", id="cursor rule"),
        pytest.param(".memls/decisions.md", "instructions", id="memls notes"),
        pytest.param("docs/adr/0007-use-kafka.md", "record", id="ADR"),
        pytest.param("docs/decisions/0001-x.md", "record", id="decision"),
        pytest.param("docs/notes.md", "", id="neither"),
    ],
)
def test_note_kind_by_default_globs(path: str, kind: str) -> None:
    assert note_kind(path) == kind


def test_note_kind_follows_the_globs_given() -> None:
    assert note_kind("NOTES.md", instructions=["NOTES.md"], records=[]) == "instructions"
    assert note_kind("AGENTS.md", instructions=[], records=["*.md"]) == "record"
    assert note_kind("AGENTS.md", instructions=[], records=[]) == ""


@pytest.mark.parametrize(
    "folder, expected",
    [
        (".memls", True),  # .memls/**/*.md
        (".memls/a/b", True),
        ("docs", True),  # docs/adr/**/*.md
        ("docs/adr", True),
        ("docs/other", False),
        ("src", False),
        ("AGENTS.md", False),  # the glob names it, nothing inside it
    ],
)
def test_below_says_whether_a_folder_can_hold_a_note(folder: str, expected: bool) -> None:
    globs = ("AGENTS.md", ".memls/**/*.md", "docs/adr/**/*.md")
    assert below(folder, globs) is expected
    assert below(folder, ("**/AGENTS.md",))  # an AGENTS.md can be in any folder
