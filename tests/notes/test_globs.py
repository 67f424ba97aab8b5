"""memls.notes globs: `**` matching on project-relative paths, and which folders can hold a note."""

from __future__ import annotations

import pytest

from memls.notes import match, matches
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


def test_a_lone_string_is_one_glob_and_case_can_be_ignored() -> None:
    assert matches("AGENTS.md", "AGENTS.md")
    assert not matches("agents.md", ("AGENTS.md",))
    assert matches("agents.md", ("AGENTS.md",), case_sensitive=False)


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
