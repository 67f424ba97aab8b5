"""`memls hooks install|uninstall|status claude` (the CLI as a subprocess) on real-shaped
Claude Code settings files: what is there is kept, a second install changes nothing, uninstall
takes out exactly memls's entries."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from memls.hooks import claude

DATA = Path(__file__).resolve().parents[1] / "data" / "claude_code"


def memls(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memls", "--data-dir", str(data_dir), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def repo(tmp_path) -> Path:
    folder = tmp_path / "shop"
    (folder / ".claude").mkdir(parents=True)
    return folder.resolve()


def test_install_keeps_what_is_there_and_a_second_install_is_a_no_op(tmp_path, repo):
    local = repo / ".claude" / "settings.local.json"
    original = (DATA / "settings.local.json").read_text()
    local.write_text(original)
    local.chmod(0o640)  # the user's choice: kept
    data_dir = tmp_path / "data"
    first = memls(data_dir, "hooks", "install", "claude", "--project", str(repo))
    assert first.returncode == 0, first.stderr
    assert f"installed in {local}" in first.stdout
    after = json.loads(local.read_text())
    before = json.loads(original)
    for key in ("permissions", "env", "enableAllProjectMcpServers"):
        assert after[key] == before[key]
    assert after["hooks"]["PreToolUse"] == before["hooks"]["PreToolUse"]
    other, ours = after["hooks"]["SessionStart"]
    assert other == before["hooks"]["SessionStart"][0]  # another tool's hook, untouched
    assert ours["matcher"] == "startup|resume|clear|compact"
    (entry,) = ours["hooks"]
    assert entry["type"] == "command" and entry["timeout"] == claude.TIMEOUT_S
    words = shlex.split(entry["command"])
    assert words[:2] == [sys.executable, "-S"] and words[2].endswith("memls/hooks/client.py")
    assert words[3:7] == ["--project", str(repo), "--data-dir", str(data_dir.resolve())]
    (prompt,) = after["hooks"]["UserPromptSubmit"]
    assert "matcher" not in prompt and prompt["hooks"] == [entry]

    written = local.read_bytes()
    stamp = local.stat().st_mtime_ns
    second = memls(data_dir, "hooks", "install", "claude", "--project", str(repo))
    assert second.returncode == 0 and "already installed" in second.stdout
    assert local.read_bytes() == written and local.stat().st_mtime_ns == stamp

    status = memls(data_dir, "hooks", "status", "--project", str(repo), "--json")
    found = json.loads(status.stdout)
    (listed,) = [f for f in found["files"] if f["path"] == str(local)]
    assert sorted(listed["events"]) == ["SessionStart", "UserPromptSubmit"]
    assert found["daemon"] is False

    gone = memls(data_dir, "hooks", "uninstall", "claude", "--project", str(repo))
    assert gone.returncode == 0 and "removed from" in gone.stdout
    assert json.loads(local.read_text()) == before  # exactly what was there
    assert local.stat().st_mode & 0o777 == 0o640


def test_install_creates_the_file_and_uninstall_leaves_no_trace(tmp_path):
    repo = tmp_path / "new"
    repo.mkdir()
    data_dir = tmp_path / "data"
    assert memls(data_dir, "hooks", "install", "claude", "--project", str(repo)).returncode == 0
    local = repo / ".claude" / "settings.local.json"
    assert sorted(json.loads(local.read_text())["hooks"]) == ["SessionStart", "UserPromptSubmit"]
    assert local.stat().st_mode & 0o777 == 0o600  # it names this machine's paths
    text = memls(data_dir, "hooks", "status", "--project", str(repo)).stdout
    assert f"{local}: SessionStart:" in text and "daemon: not running" in text
    assert memls(data_dir, "hooks", "uninstall", "claude", "--project", str(repo)).returncode == 0
    assert json.loads(local.read_text()) == {}
    again = memls(data_dir, "hooks", "uninstall", "claude", "--project", str(repo))
    assert again.returncode == 0 and "not installed" in again.stdout


def test_an_older_memls_entry_is_replaced_in_place(repo):
    old = {"type": "command", "command": "/old/venv/bin/memls-hook --project /x", "timeout": 5}
    settings = {
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "a"}, old]}]}
    }
    merged = claude.merged(settings, "/new/bin/memls-hook --project /x")
    entries = merged["hooks"]["UserPromptSubmit"][0]["hooks"]
    assert entries[0] == {"type": "command", "command": "a"}
    assert entries[1]["command"] == "/new/bin/memls-hook --project /x"
    assert len(merged["hooks"]["UserPromptSubmit"]) == 1
    assert claude.removed(merged) == {
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "a"}]}]}
    }
    assert settings["hooks"]["UserPromptSubmit"][0]["hooks"][1] == old  # input untouched


@pytest.mark.parametrize(
    "text, why",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"hooks": []}', "`hooks` is not an object"),
        ('{"hooks": {"SessionStart": {}}}', "`hooks.SessionStart` is not a list"),
    ],
)
def test_a_settings_file_it_cannot_read_is_left_alone(tmp_path, repo, text, why):
    local = repo / ".claude" / "settings.local.json"
    local.write_text(text)
    result = memls(tmp_path / "data", "hooks", "install", "claude", "--project", str(repo))
    assert result.returncode == 2 and why in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert local.read_text() == text


def test_unknown_agent_and_folder(tmp_path):
    result = memls(tmp_path / "data", "hooks", "install", "cursor", "--project", str(tmp_path))
    assert result.returncode == 2 and "unknown agent 'cursor'" in result.stderr
    missing = memls(tmp_path / "data", "hooks", "status", "--project", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "is not a folder" in missing.stderr


def test_a_settings_file_it_creates_in_a_git_clone_is_kept_out_of_git(tmp_path):
    """The file names this machine's paths: `git status` does not offer it for a commit, and
    the shared `.gitignore` is not touched; a file something already ignores adds nothing."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    assert (
        memls(tmp_path / "data", "hooks", "install", "claude", "--project", str(clone)).returncode
        == 0
    )
    status = subprocess.run(
        ["git", "-C", str(clone), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "settings.local.json" not in status and not (clone / ".gitignore").exists()
    exclude = (clone / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.claude/settings.local.json") == 1

    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    (other / ".gitignore").write_text(".claude/\n")
    before = (other / ".git" / "info" / "exclude").read_text()
    assert (
        memls(tmp_path / "data", "hooks", "install", "claude", "--project", str(other)).returncode
        == 0
    )
    assert (other / ".git" / "info" / "exclude").read_text() == before
