"""The memories agents keep by themselves, read as notes (`notes.agent_memory`) and found where
each agent keeps them (`notes.agent_places`). The file shapes are the ones the real binaries
write or were read from: Claude Code 2.1.197's auto memory topic files and MEMORY.md index,
Codex 0.169.0's consolidated MEMORY.md, Gemini CLI 0.61.0's global memory file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memls.notes import agent_memory as am
from memls.notes import parse
from memls.notes.agent_places import (
    claude_memory,
    claude_slug,
    codex_memories,
    gemini_memory,
    git_root,
    user_places,
)

RELEASES = "Releases are cut from the develop branch."


def topic(kind: str | None, body: str = RELEASES) -> str:
    """A topic file as Claude Code writes it (its Write tool adds node_type and
    originSessionId to the metadata)."""
    meta = "" if kind is None else f"  type: {kind}\n"
    return (
        "---\nname: release-branch\ndescription: where releases are cut from\nmetadata:\n"
        f"{meta}  node_type: memory\n  originSessionId: 4b1e6c1e-0f6a-4f51-a3c2-7d1b2f0a9e11\n"
        f"---\n\n{body}\n"
    )


def units(text: str, origin: str, name: str):
    return parse(am.readable(text, origin, name), default_type=am.memory_type(text, origin, name))


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        pytest.param("user", "preference", id="user"),
        pytest.param("feedback", "convention", id="feedback"),
        pytest.param("project", "fact", id="project"),
        pytest.param("reference", "note", id="reference"),
        pytest.param("Project", "fact", id="case"),
        pytest.param("opinion", "note", id="unknown"),
        pytest.param(None, "note", id="none"),
    ],
)
def test_a_claude_topic_file_is_typed_by_its_front_matter(kind, expected):
    text = topic(kind)
    (unit,) = units(text, "claude-memory", "release_branch.md")
    assert (unit.text, unit.type) == (RELEASES, expected)
    # the file's own line: the front matter is blanked, not cut
    assert unit.start_line == text.splitlines().index(RELEASES)


def test_a_top_level_type_counts_as_claude_code_reads_it_as_metadata():
    text = "---\nname: x\ntype: feedback\n---\nAlways run the linter before committing.\n"
    assert am.memory_type(text, "claude-memory", "x.md") == "convention"


def test_front_matter_is_never_memory_text():
    found = units(
        topic("project", RELEASES + "\n\n**Why:** the team asked."), "claude-memory", "a.md"
    )
    texts = " ".join(u.text for u in found)
    for word in ("release-branch", "node_type", "originSessionId", "description", "metadata"):
        assert word not in texts
    assert [u.text for u in found] == [RELEASES, "**Why:** the team asked."]


def test_bad_yaml_front_matter_is_skipped_and_types_nothing():
    text = "---\nname: [unclosed\n---\nThe deploy key lives in the vault.\n"
    assert am.front_matter(text) == ({}, 3)
    (unit,) = units(text, "claude-memory", "a.md")
    assert (unit.text, unit.type, unit.start_line) == (
        "The deploy key lives in the vault.",
        "note",
        3,
    )


def test_memory_md_pointers_stand_for_their_files_and_other_lines_are_memory():
    index = (
        "- [Release branch](release_branch.md) — where releases are cut from\n"
        "* [Team style](team/style.md) - the house style\n"
        "- [Docs](https://example.com/guide.md) — a page, not a memory file\n"
        "- The user reviews every migration by hand.\n"
    )
    found = units(index, "claude-memory", "MEMORY.md")
    assert [(u.text, u.start_line) for u in found] == [
        ("[Docs](https://example.com/guide.md) — a page, not a memory file", 2),
        ("The user reviews every migration by hand.", 3),
    ]


CODEX_MEMORY = """# Task Group: memls repo tests
scope: running the test suite
applies_to: cwd=/src/memls; reuse_rule=this checkout
## Task 1: fix the flaky watcher test, fixed
### rollout_summary_files
- rollout_summaries/2026-02-17T21-23-02-abc.md (cwd=/src/memls, updated_at=2026-02-17)
### keywords
- watchfiles, debounce
## User preferences
- when tests are slow, the user asked: "run them with -n 2" -> use two workers [Task 1]
## Reusable knowledge
- make lint runs import-linter, ruff and mypy [Task 1]
## Failures and how to do differently
- a sleep in a test hid a race -> wait on an event instead [Task 1]
"""


def test_codex_memory_keeps_what_it_learned_not_its_routing():
    found = units(CODEX_MEMORY, "codex-memories", "MEMORY.md")
    assert [(u.text, u.type) for u in found] == [
        (
            'when tests are slow, the user asked: "run them with -n 2" -> use two workers [Task 1]',
            "preference",
        ),
        ("make lint runs import-linter, ruff and mypy [Task 1]", "fact"),
        ("a sleep in a test hid a race -> wait on an event instead [Task 1]", "fact"),
    ]


def test_a_codex_ad_hoc_note_and_gemini_memory_are_read_whole():
    note = "The user wants commit messages in the imperative.\n"
    (unit,) = units(note, "codex-memories", "2026-03-01T10-00-00-commit-style.md")
    assert unit.text == note.strip()
    gemini = "# Global memory\n\n## Gemini Added Memories\n- I prefer tabs over spaces.\n"
    (unit,) = units(gemini, "gemini-memory", "GEMINI.md")
    assert (unit.text, unit.type) == ("I prefer tabs over spaces.", "preference")


# ---------------------------------------------------------------- where they are


@pytest.mark.parametrize(
    ("path", "slug"),
    [
        pytest.param("/home/ada/src/demo", "-home-ada-src-demo", id="plain"),
        pytest.param("/tmp/x/demo_1.2 b", "-tmp-x-demo-1-2-b", id="punctuation"),
        # a character outside the BMP is two UTF-16 units, so two dashes
        pytest.param("/tmp/😀é", "-tmp----", id="astral"),
        # past 200: cut, then the string hash in base 36 (computed with Claude Code's own
        # function, `Math.abs(hash).toString(36)`, in node)
        pytest.param("/a" * 150, "-a" * 100 + "-g3ckr0", id="long"),
    ],
)
def test_claude_slug_is_claude_codes(path, slug):
    assert claude_slug(path) == slug


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_the_auto_memory_folder_is_the_git_roots_and_a_worktrees_is_the_main_checkouts(
    tmp_path: Path,
):
    home = tmp_path / "home"
    main = tmp_path / "repo"
    (main / "pkg").mkdir(parents=True)
    _git("init", "-q", cwd=main)
    _git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty",
         "-m", "x", cwd=main)  # fmt: skip
    _git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=main)
    expected = home / ".claude" / "projects" / claude_slug(str(main)) / "memory"
    assert claude_memory(main / "pkg", home, {}).folder == expected  # a subfolder: the root's
    assert git_root(tmp_path / "wt") == main
    assert claude_memory(tmp_path / "wt", home, {}).folder == expected
    outside = tmp_path / "plain"
    outside.mkdir()
    assert claude_memory(outside, home, {}).folder == (
        home / ".claude" / "projects" / claude_slug(str(outside)) / "memory"
    )
    config = tmp_path / "config"
    assert claude_memory(outside, home, {"CLAUDE_CONFIG_DIR": str(config)}).folder == (
        config / "projects" / claude_slug(str(outside)) / "memory"
    )


def test_auto_memory_directory_is_taken_from_local_then_project_then_user_settings(
    tmp_path: Path,
):
    home, project = tmp_path / "home", tmp_path / "proj"
    (home / ".claude").mkdir(parents=True)
    (project / ".claude").mkdir(parents=True)

    def settings(path: Path, value: object) -> None:
        path.write_text(json.dumps({"autoMemoryDirectory": value}))

    settings(home / ".claude" / "settings.json", "~/notes/claude")
    assert claude_memory(project, home, {}).folder == home / "notes" / "claude"
    settings(project / ".claude" / "settings.json", str(tmp_path / "shared"))
    assert claude_memory(project, home, {}).folder == tmp_path / "shared"
    settings(project / ".claude" / "settings.local.json", str(tmp_path / "mine") + "/")
    assert claude_memory(project, home, {}).folder == tmp_path / "mine"
    for unusable in ("relative/dir", "~/../escape", "", 7):  # ignored, as Claude Code does
        settings(project / ".claude" / "settings.local.json", unusable)
        assert claude_memory(project, home, {}).folder == tmp_path / "shared"


def test_codex_memories_only_when_its_feature_is_on(tmp_path: Path):
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    config = home / ".codex" / "config.toml"
    assert codex_memories(home, {}) is None  # no config.toml
    config.write_text('model = "o3"\n')
    assert codex_memories(home, {}) is None  # the feature is off by default
    config.write_text("[features]\nmemories = true\n")
    place = codex_memories(home, {})
    assert place is not None and place.folder == home / ".codex" / "memories"
    assert place.holds(place.folder / "extensions" / "ad_hoc" / "notes" / "2026-x.md")
    assert place.holds(place.folder / "memory_summary.md")
    assert not place.holds(place.folder / "raw_memories.md")
    assert not place.holds(place.folder / "rollout_summaries" / "a.md")
    config.write_text("[features]\nmemories = true\n[memories]\nuse_memories = false\n")
    assert codex_memories(home, {}) is None
    other = tmp_path / "codex-home"
    other.mkdir()
    (other / "config.toml").write_text("[features]\nmemories = true\n")
    assert codex_memories(home, {"CODEX_HOME": str(other)}).folder == other / "memories"


def test_gemini_memory_is_its_global_context_file(tmp_path: Path):
    home = tmp_path / "home"
    place = gemini_memory(home, {})
    assert (place.folder, place.patterns) == (home / ".gemini", ("GEMINI.md",))
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text(
        json.dumps({"context": {"fileName": ["AGENTS.md", "GEMINI.md"]}})
    )
    assert gemini_memory(home, {}).patterns == ("AGENTS.md",)
    assert gemini_memory(home, {"GEMINI_CLI_HOME": str(tmp_path / "g")}).folder == (
        tmp_path / "g" / ".gemini"
    )
    assert [p.origin for p in user_places(home, {})] == ["gemini-memory"]


def test_a_place_watches_the_nearest_folder_that_exists(tmp_path: Path):
    home = tmp_path / "home"
    (home / ".claude" / "projects").mkdir(parents=True)
    place = claude_memory(tmp_path, home, {})
    assert place.watch() == {home / ".claude" / "projects"}  # memory/ and team/ are not there
    (place.folder / "team").mkdir(parents=True)
    (place.folder / "a.md").write_text("x")
    (place.folder / "team" / "b.md").write_text("y")
    (place.folder / "notes.txt").write_text("z")
    assert place.watch() == {place.folder, place.folder / "team"}
    assert place.files() == [place.folder / "a.md", place.folder / "team" / "b.md"]
