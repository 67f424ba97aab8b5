"""`memls-hook` as Claude Code runs it: a subprocess fed the hook payloads of
tests/data/claude_code on stdin, against a running daemon (`memls serve --socket`) and with
none (it answers at once with nothing and starts the daemon for the next prompt)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import memls.hooks.client
from hook_helpers import HOOK, hook, payload, socket_daemon
from memls import protocol as p
from memls.daemon import RemoteEngine
from memls.ownership import OwnerLock

HEAVY = ("typer", "rich", "msgspec", "chromadb", "onnxruntime", "numpy", "tokenizers", "pygls")


def lexical(data_dir: Path) -> Path:
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    (data_dir / "config.toml").write_text("[index]\nvectors = false\n")
    return data_dir


@pytest.fixture
def project(tmp_path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    return folder.resolve()


@pytest.fixture
def daemon(tmp_path):
    """`memls serve --socket` on a lexical data directory, up once it says it serves."""
    with socket_daemon(lexical(tmp_path / "data")) as data_dir:
        yield data_dir


def seed(data_dir: Path, project: Path) -> dict[str, str]:
    """Through the owner socket (the daemon is running)."""
    texts = {
        "rule": ("Never log card numbers, not even masked", "constraint"),
        "deploy": ("Deploys go out on Tuesdays through ArgoCD", "decision"),
        "retry": ("The payment client retries a failed charge 3 times with backoff", "fact"),
        "theme": ("The office plant is watered on Fridays", "note"),
    }
    with RemoteEngine.connect(data_dir, front="test") as engine:
        return {
            key: engine.store(p.StoreParams(text=t, type=k, project=str(project))).id
            for key, (t, k) in texts.items()
        }


def context_of(result: subprocess.CompletedProcess, event: str) -> str:
    """The hook's stdout must be Claude Code's hook output, exactly this shape."""
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert list(output) == ["hookSpecificOutput"]
    assert sorted(output["hookSpecificOutput"]) == ["additionalContext", "hookEventName"]
    assert output["hookSpecificOutput"]["hookEventName"] == event
    return output["hookSpecificOutput"]["additionalContext"]


def test_against_a_running_daemon(daemon, project):
    ids = seed(daemon, project)
    start = context_of(
        hook(daemon, project, payload("session_start.json", project)), "SessionStart"
    )
    assert ids["rule"] in start and ids["deploy"] in start
    assert ids["theme"] not in start and ids["retry"] not in start

    ask = payload("user_prompt_submit.json", project)
    first = context_of(hook(daemon, project, ask), "UserPromptSubmit")
    assert ids["retry"] in first
    assert ids["rule"] not in first and ids["deploy"] not in first  # given at the start
    again = hook(daemon, project, ask)
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")  # nothing new

    compacted = payload("session_start_compact.json", project)
    fresh = context_of(hook(daemon, project, compacted), "SessionStart")
    assert ids["rule"] in fresh  # the context was compacted: brief again

    other = json.loads(ask)
    other["session_id"] = "another-session"
    assert ids["retry"] in context_of(hook(daemon, project, json.dumps(other)), "UserPromptSubmit")

    pasted = json.loads(ask)  # a prompt longer than a memory may be (a pasted log)
    pasted["session_id"] = "pasted"
    pasted["prompt"] += " traceback line" * 5000
    assert ids["retry"] in context_of(hook(daemon, project, json.dumps(pasted)), "UserPromptSubmit")


def test_budgets_are_the_installed_ones(daemon, project):
    seed(daemon, project)
    status = subprocess.run(
        [sys.executable, "-m", "memls", "--data-dir", str(daemon), "hooks", "status"]
        + ["--project", str(project), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(status.stdout)["daemon"] is True  # it answers, as the hook asks it
    start = payload("session_start.json", project)
    small = hook(daemon, project, start, "--budget", "50")
    assert (small.returncode, small.stdout) == (0, "")  # the head alone does not fit
    usage = hook(daemon, project, start, "--budget")  # a flag without its value
    assert usage.returncode == 1 and usage.stderr.startswith("memls-hook: usage:")
    bad = hook(daemon, project, start, "--budget", "10")
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith("memls-hook: budget:") and bad.stderr.count("\n") == 1


def test_bad_input_never_blocks(tmp_path, project):
    data_dir = lexical(tmp_path / "data")
    for stdin in ("not json", "[1, 2]"):
        result = hook(data_dir, project, stdin)
        assert result.returncode == 1 and result.stdout == ""
        assert result.stderr.startswith("memls-hook:") and result.stderr.count("\n") == 1
    for flag, value in (("--budget", "lots"), ("--timeout", "soon")):
        result = hook(data_dir, project, "{}", flag, value)
        assert result.returncode == 1 and result.stdout == ""
        assert result.stderr == f"memls-hook: {flag}: {value!r} is not " + (
            "a whole number\n" if flag == "--budget" else "a number\n"
        )
    stop = json.dumps({"session_id": "s", "hook_event_name": "Stop", "stop_hook_active": False})
    assert hook(data_dir, project, stop).returncode == 0
    assert not (data_dir / "memls.sock").exists()  # an event it ignores starts nothing


def test_without_a_daemon_it_starts_one_and_briefs_the_first_session(tmp_path, project):
    """The first session after a reboot: no daemon serves; the hook starts it, waits for it
    (within START_WAIT) and gives the briefing with the project's notes, read by the daemon."""
    data_dir = lexical(tmp_path / "data")
    (project / "CLAUDE.md").write_text("- Card numbers are never logged, not even masked.\n")
    assert not (data_dir / "memls.sock").exists()
    started = time.perf_counter()
    first = hook(data_dir, project, payload("session_start.json", project))
    took = time.perf_counter() - started
    try:
        assert first.returncode == 0 and first.stderr == ""
        bound = memls.hooks.client.START_WAIT["SessionStart"] + 5
        assert took < bound, f"held the session {took:.2f} s"
        assert "Card numbers are never logged" in context_of(first, "SessionStart")
        assert (data_dir / "memls.sock").exists()  # the daemon goes on after the hook
        watched = subprocess.run(
            [sys.executable, "-m", "memls", "--data-dir", str(data_dir), "watched", "--json"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert [p["project"] for p in json.loads(watched.stdout)["projects"]] == [str(project)]
    finally:
        owner = OwnerLock(data_dir).holder()
        if owner is not None and owner != os.getpid():  # the daemon the hook started
            os.kill(owner, signal.SIGTERM)


def test_it_imports_nothing_heavy(tmp_path, project):
    """What `python -X importtime` says the hook command loads."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", *HOOK[1:], "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    loaded = {
        line.split("|")[-1].strip().split(".")[0]
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "json" in loaded and "socket" in loaded
    assert not loaded & set(HEAVY), loaded & set(HEAVY)
    # a script: of memls only the package and its light client of the owner
    assert {m for m in loaded if m.startswith("memls")} <= {"memls"}
    modules = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    assert {m for m in modules if m.startswith("memls")} <= {"memls", "memls.reach"}
    assert not loaded & {"argparse", "site", "typing", "pathlib", "subprocess"}
    console = subprocess.run(  # the console script `memls-hook` imports only its package
        [sys.executable, "-X", "importtime", "-m", "memls.hooks", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    names = {line.split("|")[-1].strip() for line in console.stderr.splitlines() if "|" in line}
    assert {n for n in names if n.startswith("memls")} <= {
        "memls",
        "memls.hooks",
        "memls.hooks.client",
        "memls.hooks.__main__",
        "memls.reach",
    }
