"""The relevance floor of prompt-time memories, through the hook client Claude Code runs
(`memls-hook` as a subprocess) against `memls serve --socket` with the full engine (the
packaged embedder: the floor is on the embedding cosine or BM25): a prompt nothing in the
project answers gets nothing; a prompt a memory answers gets that memory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import memls.hooks.client
from hook_helpers import socket_daemon
from memls import protocol as p
from memls.daemon import RemoteEngine

HOOK = [sys.executable, "-S", memls.hooks.client.__file__]  # as `memls hooks install` writes it
EVENT = Path(__file__).resolve().parents[1] / "data" / "claude_code" / "user_prompt_submit.json"
MEMORIES = {
    "retry": (
        "The payment client retries a failed charge 3 times with exponential backoff",
        "fact",
    ),
    "money": ("Money amounts are stored as integer cents, never as floats", "convention"),
    "deploy": ("Deploys go out on Tuesdays through ArgoCD", "decision"),
    "lesson": ("The asyncpg pool must be created inside the FastAPI lifespan handler", "lesson"),
}


@pytest.fixture
def daemon(tmp_path):
    with socket_daemon(tmp_path / "data") as data_dir:
        yield data_dir


def ask(data_dir, project, prompt: str, session: str) -> subprocess.CompletedProcess:
    event = json.loads(EVENT.read_text())
    event.update(prompt=prompt, session_id=session, cwd=str(project))
    args = ["--project", str(project), "--data-dir", str(data_dir)]
    return subprocess.run(
        HOOK + args, input=json.dumps(event), capture_output=True, text=True, timeout=60
    )


def test_prompt_floor_through_the_hook(daemon, tmp_path):
    project = (tmp_path / "shop").resolve()
    project.mkdir()
    with RemoteEngine.connect(daemon, front="test") as engine:
        ids = {
            key: engine.store(p.StoreParams(text=t, type=k, project=str(project))).id
            for key, (t, k) in MEMORIES.items()
        }
        assert engine.flush()  # embedded: the floor judges the cosine

    for n, prompt in enumerate(("Write a haiku about debugging", "What is a tuple?")):
        nothing = ask(daemon, project, prompt, f"idle-{n}")
        assert (nothing.returncode, nothing.stdout, nothing.stderr) == (0, "", "")

    answered = ask(daemon, project, "How many times does the payment client retry a charge?", "s")
    assert answered.returncode == 0, answered.stderr
    output = json.loads(answered.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    given = output["additionalContext"]
    assert ids["retry"] in given
    assert ids["deploy"] not in given and ids["lesson"] not in given
