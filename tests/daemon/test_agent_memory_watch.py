"""The owner follows the memories agents keep by themselves, outside the project's folder:
Claude Code's auto memory of each watched project (synced into that project, checked against
its AGENTS.md, briefed with the line that contradicts it), and the Codex CLI's and Gemini
CLI's user-wide memories (synced into `@user`). Real engine, real watchfiles, real files in a
throwaway HOME laid out as the agents lay them out."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pygls import uris

from daemon_helpers import Heard
from memls import protocol as p
from memls.daemon import RemoteEngine, open_engine
from memls.notes.agent_places import claude_slug

RELEASES = "Releases are cut from the develop branch."
AGENTS_LINE = "Releases are cut from main, not from the develop branch."
GITLAB = "glpat-" + "Xy7_kP2mQ9vR4tL8wZ1n"  # FAKE, in GitLab's format
AGENT_ENV = (
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE",
    "CLAUDE_CODE_REMOTE_MEMORY_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "MEMLS_AGENT_MEMORIES",
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    """A throwaway HOME where Claude Code has run once (its projects folder is there)."""
    home = tmp_path / "home"
    (home / ".claude" / "projects").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for name in AGENT_ENV:
        monkeypatch.delenv(name, raising=False)
    return home


def topic(body: str, kind: str = "project") -> str:
    """A topic file as Claude Code 2.1.197's Write tool leaves it."""
    return (
        f"---\nname: release-branch\ndescription: where releases are cut from\nmetadata:\n"
        f"  type: {kind}\n  node_type: memory\n"
        "  originSessionId: 4b1e6c1e-0f6a-4f51-a3c2-7d1b2f0a9e11\n---\n\n"
        f"{body}\n"
    )


def project_with(tmp_path: Path, agents: str = f"- {AGENTS_LINE}\n") -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "AGENTS.md").write_text(agents)
    return root.resolve()


def memory_folder(home: Path, project: Path) -> Path:
    return home / ".claude" / "projects" / claude_slug(str(project)) / "memory"


def listed(engine, project: str) -> list[p.Memory]:
    return engine.list(p.ListParams(project=project, limit=1000)).memories


def texts(engine, project: str) -> set[str]:
    return {m.content for m in listed(engine, project)}


def test_claude_auto_memory_is_read_followed_checked_and_briefed(tmp_path, home):
    project = project_with(tmp_path)
    key = str(project)
    with open_engine(tmp_path / "data", front="test", serve=True) as engine:
        heard = Heard()
        engine.listeners.append(heard)
        assert engine.watch(p.WatchParams(project=key, wait=30)).indexed
        watcher = engine.notes_watcher.agents
        assert watcher.watching.wait(30)
        # what Claude Code does on its first memory: the folder, the topic file, the index
        folder = memory_folder(home, project)
        folder.mkdir(parents=True)
        (folder / "release_branch.md").write_text(topic(RELEASES))
        (folder / "MEMORY.md").write_text(
            "- [Release branch](release_branch.md) — where releases are cut from\n"
            "- The user reviews every migration by hand.\n"
        )
        assert heard.wait(
            lambda _: {RELEASES, "The user reviews every migration by hand."} <= texts(engine, key)
        ), texts(engine, key)
        (mine,) = [m for m in listed(engine, key) if m.content == RELEASES]
        assert (mine.origin, mine.type, mine.trust) == ("claude-memory", "fact", "candidate")
        assert mine.source_uri == uris.from_fs_path(str(folder / "release_branch.md"))
        assert not any("release-branch" in t or "Release branch" in t for t in texts(engine, key))
        notes = engine.watch(p.WatchParams(project=key, wait=0)).notes
        ours = {Path(uris.to_fs_path(n.uri)).name: n for n in notes if n.agent_memory}
        assert set(ours) == {"release_branch.md", "MEMORY.md"}
        assert {(n.kind, n.agent_memory, n.origin) for n in ours.values()} == {
            ("instructions", "claude-memory", "Claude Code auto memory")
        }

        # checked like a note: AGENTS.md's line contradicts it, and AGENTS.md stands
        assert engine.flush(120)  # embedded and checked (the models may load first)
        (pair,) = engine.conflicts(p.ConflictsParams(project=key, status="open")).conflicts
        assert (pair.newer.id, pair.older.content) == (mine.id, AGENTS_LINE)
        mine = engine.get(p.GetParams(id=mine.id, project=key))
        (ref,) = mine.contradicts
        assert ref.current == pair.older.id  # the project's file, not the agent's own memory

        brief = engine.context(p.ContextParams(project=key, standing=True))
        assert f'Your auto memory says "{RELEASES}"' in brief.markdown, brief.markdown
        assert f'AGENTS.md:1 says "{AGENTS_LINE}"' in brief.markdown
        assert "Claude Code auto memory" in brief.markdown
        sections = {e.memory.id: e.section for e in brief.entries}
        assert sections == {
            mine.id: "contradicted",
            pair.older.id: "standing",
            next(m.id for m in listed(engine, key) if m.content.startswith("The user")): "standing",
        }

        # a person approves the agent's memory: then it is the statement that stands
        engine.review(p.ReviewParams(project=key, action="approve", id=mine.id))
        (ref,) = engine.get(p.GetParams(id=mine.id, project=key)).contradicts
        assert ref.current == mine.id
        brief = engine.context(p.ContextParams(project=key, standing=True))
        assert "Your auto memory says" not in brief.markdown
        assert AGENTS_LINE not in brief.markdown  # the losing side is left out, as for notes

        # followed: an edit replaces the unit, a deletion forgets it
        (folder / "release_branch.md").write_text(topic("Releases are cut every Tuesday."))
        assert heard.wait(lambda _: "Releases are cut every Tuesday." in texts(engine, key))
        assert RELEASES not in texts(engine, key)
        (folder / "release_branch.md").unlink()
        assert heard.wait(lambda _: "Releases are cut every Tuesday." not in texts(engine, key))
        gone = engine.forgotten(p.ForgottenParams(project=key)).entries
        assert {e.reason for e in gone} == {"source_removed"}


def test_a_token_is_flagged_on_its_line_and_a_restatement_is_not_stored_twice(tmp_path, home):
    project = project_with(tmp_path, "- Deploys go through Jenkins.\n")
    folder = memory_folder(home, project)
    folder.mkdir(parents=True)
    (folder / "gitlab.md").write_text(topic(f"The mirror job logs in with {GITLAB}.", "reference"))
    (folder / "deploys.md").write_text(topic("Deploys go through Jenkins."))
    key = str(project)
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        notes = engine.watch(p.WatchParams(project=key, wait=30)).notes
        (leak,) = [n for n in notes if n.uri.endswith("/gitlab.md")]
        assert [(s.line, s.kind) for s in leak.secrets] == [(9, "gitlab-token")]  # its line
        contents = [m.content for m in listed(engine, key)]
        assert "The mirror job logs in with [REDACTED:gitlab-token]." in contents
        assert not any(GITLAB in c for c in contents)
        assert contents.count("Deploys go through Jenkins.") == 1  # AGENTS.md's, kept once


def test_auto_memory_directory_moves_the_folder(tmp_path, home):
    project = project_with(tmp_path)
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(
        json.dumps({"autoMemoryDirectory": "~/claude-memory"})
    )
    (home / "claude-memory").mkdir()
    (home / "claude-memory" / "style.md").write_text(
        topic("Keep commits small and focused.", "feedback")
    )
    key = str(project)
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        engine.watch(p.WatchParams(project=key, wait=30))
        (m,) = [m for m in listed(engine, key) if m.origin]
        assert (m.content, m.type) == ("Keep commits small and focused.", "convention")


def _user_wide(home: Path) -> None:
    (home / ".gemini").mkdir()
    (home / ".gemini" / "GEMINI.md").write_text(
        "## Gemini Added Memories\n- I prefer tabs over spaces.\n"
    )
    (home / ".codex" / "memories").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text("[features]\nmemories = true\n")
    (home / ".codex" / "memories" / "MEMORY.md").write_text(
        "# Task Group: releases\nscope: cutting releases\n## Task 1: cut 1.2\n### keywords\n"
        "- release, tag\n## User preferences\n- the user signs every release tag [Task 1]\n"
    )


def test_codex_and_gemini_memories_are_user_wide(tmp_path, home):
    _user_wide(home)
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        heard = Heard()
        engine.listeners.append(heard)
        wanted = {"I prefer tabs over spaces.", "the user signs every release tag [Task 1]"}
        assert heard.wait(lambda _: wanted <= texts(engine, "@user")), texts(engine, "@user")
        origins = {m.content: m.origin for m in listed(engine, "@user")}
        assert origins == {
            "I prefer tabs over spaces.": "gemini-memory",
            "the user signs every release tag [Task 1]": "codex-memories",
        }
        assert engine.notes_watcher.agents.watching.wait(30)
        with (home / ".gemini" / "GEMINI.md").open("a") as f:
            f.write("- I answer in British English.\n")
        assert heard.wait(lambda _: "I answer in British English." in texts(engine, "@user"))
        assert "" not in {m.project for m in listed(engine, "@user")}


def test_the_setting_off_reads_none_and_forgets_those_read(tmp_path, home, monkeypatch):
    _user_wide(home)
    project = project_with(tmp_path)
    folder = memory_folder(home, project)
    folder.mkdir(parents=True)
    (folder / "release_branch.md").write_text(topic(RELEASES))
    key, data = str(project), tmp_path / "data"
    with open_engine(data, front="test", serve=True, vectors=False) as engine:
        engine.watch(p.WatchParams(project=key, wait=30))
        assert RELEASES in texts(engine, key)
    monkeypatch.setenv("MEMLS_AGENT_MEMORIES", "0")
    with open_engine(data, front="test", serve=True, vectors=False) as engine:
        assert engine.watch(p.WatchParams(project=key, wait=30)).indexed
        assert texts(engine, key) == {AGENTS_LINE}
        assert not any(
            n.agent_memory for n in engine.watch(p.WatchParams(project=key, wait=0)).notes
        )
        engine.notes_watcher.agents.scan("@user")  # what its start queued, done here
        assert texts(engine, "@user") == set()


def _socket_daemon(data: Path, home: Path, *flags: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in AGENT_ENV}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memls", "--data-dir", str(data), "serve", "--socket", *flags],
        env={**env, "HOME": str(home)},
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None and "serving" in proc.stderr.readline()
    return proc


def test_serve_no_agent_memories_reads_none_and_forgets_those_read(tmp_path, home):
    _user_wide(home)
    data = tmp_path / "data"
    data.mkdir()
    (data / "config.toml").write_text("[index]\nvectors = false\n")  # no models to load
    wanted = {"I prefer tabs over spaces.", "the user signs every release tag [Task 1]"}
    for flags, expected in (((), wanted), (("--no-agent-memories",), set())):
        proc = _socket_daemon(data, home, *flags)
        try:
            with RemoteEngine.connect(data, front="test") as engine:
                heard = Heard()
                engine.listeners.append(heard)
                engine.subscribe(["@user"])
                if expected:
                    assert heard.wait(lambda _: texts(engine, "@user") == expected)
                else:  # the start's reading of @user forgets what the first daemon read
                    assert heard.wait(lambda _: texts(engine, "@user") == set())
        finally:
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=60) == 0
