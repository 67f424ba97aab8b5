"""The real Codex CLI (npm @openai/codex 0.169.0), headless (`codex exec`), memls configured as
the README's Codex snippet says (`[mcp_servers.memls]`, `command = "memls"`, `args = ["mcp"]`)
in the README's quickstart project (a git repository here: Codex works in one), a fresh data
directory and no daemon at the start. Its model is this test: a scripted Responses API on
loopback (a `[model_providers.scripted]` entry, `wire_api = "responses"`).

Codex shows an MCP server's tools to the model as one `namespace` tool, `mcp__memls`, holding
function tools (`recall`, `remember`, ...); the model's `function_call` names the tool and the
namespace. Codex sends no MCP roots (its `initialize` declares none) and starts the server in
the session's working directory, with only a few of its environment variables: memls must
take the project from there. Assertions are on
what Codex sent its model: the tools of the first request, and the `function_call_output`
that carried recall's result."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agents.harness import (
    AGENTS_LINE,
    CLAUDE_LINE,
    agent_env,
    default_data_dir,
    quickstart,
    run,
    stop_daemon,
)
from agents.scripted_api import Call, ResponsesAPI, function_outputs, namespaces

PROMPT = "how do we deploy?"
SCRIPT: list[Call | str] = [Call("recall", {"query": PROMPT}), "Deploys go through GitHub Actions."]
CONFIG = """model = "scripted-model"
model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "{url}/v1"
env_key = "SCRIPTED_API_KEY"
wire_api = "responses"

[mcp_servers.memls]
command = "memls"
args = ["mcp"]

# not the README's: an MCP server with no tools that records what Codex declares to its servers
[mcp_servers.observer]
command = "{python}"
args = ["{observer}", "{initialize}"]
"""
OBSERVER = Path(__file__).with_name("observer_mcp.py")


@dataclass
class Demo:
    codex: Path
    project: Path
    home: Path
    data_dir: Path
    env: dict[str, str]
    initialize: Path  # the params of Codex's `initialize`, as the observer server got them


@dataclass
class Session:
    requests: list[dict[str, Any]]  # the main-loop requests, in order
    stdout: str


def session(demo: Demo, script: list[Call | str], cwd: Path) -> Session:
    with ResponsesAPI(script) as api:
        (demo.home / ".codex").mkdir(exist_ok=True)
        (demo.home / ".codex" / "config.toml").write_text(
            CONFIG.format(
                url=api.url, python=sys.executable, observer=OBSERVER, initialize=demo.initialize
            )
        )
        done = run([str(demo.codex), "exec", PROMPT], cwd, demo.env, timeout=120)
        requests = api.main_requests()
    assert done.returncode == 0, (done.stdout, done.stderr[-2000:])
    assert requests, "Codex sent its model no main-loop request"
    return Session(requests, done.stdout)


@pytest.fixture(scope="module")
def demo(agent_bins, tmp_path_factory):
    root = tmp_path_factory.mktemp("codex")
    project = quickstart(root / "demo")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    home = root / "home"
    # Codex hands an MCP server only a few of its variables (HOME, PATH, LANG, TERM, TMPDIR;
    # not MEMLS_DATA_DIR): memls mcp runs on the user's default data directory, which under
    # the throwaway HOME is a fresh one.
    data_dir = default_data_dir(home)
    env = agent_env(home, None, SCRIPTED_API_KEY="anything")
    try:
        yield Demo(agent_bins["codex"], project, home, data_dir, env, root / "initialize.json")
    finally:
        stop_daemon(data_dir)


@pytest.fixture(scope="module")
def at_root(demo) -> Session:
    return session(demo, SCRIPT, demo.project)


def output_text(s: Session, call_id: str) -> str:
    """The function_call_output for `call_id` as the model read it (its text items joined)."""
    for body in s.requests:
        item = function_outputs(body).get(call_id)
        if item is not None:
            out = item.get("output")
            if isinstance(out, str):
                return out
            return "\n".join(part.get("text", "") for part in out or [] if isinstance(part, dict))
    raise AssertionError(f"no request carried the output of {call_id}")


def recall_result(text: str) -> dict:
    """Recall's structured result inside the output (Codex puts a line of its own, "Wall
    time: ...", before it): a project and its memories (`results`)."""
    assert "invalid input" not in text and "refused" not in text, text[:600]
    start = text.find("{")
    assert start >= 0, f"recall's result holds no JSON: {text[:600]}"
    data = json.loads(text[start:])
    assert isinstance(data.get("results"), list), text[:600]
    return data


def own(value: dict, text: str) -> bool:
    return any(isinstance(v, str) and v.strip() == text for v in value.values())


def test_memls_is_one_namespace_in_the_first_request(at_root):
    offered = namespaces(at_root.requests[0])
    assert "mcp__memls" in offered, sorted(offered)
    assert {"recall", "remember"} <= set(offered["mcp__memls"]), offered["mcp__memls"]


def test_codex_declares_no_roots(at_root, demo):
    declared = json.loads(demo.initialize.read_text())
    assert declared["clientInfo"]["name"] == "codex-mcp-client"
    assert "roots" not in declared["capabilities"], declared["capabilities"]


def test_recall_gives_the_notes_with_no_roots(at_root, demo):
    """The model's call names no project and Codex sends no roots: memls takes the
    repository that holds the server's working directory, and names it."""
    call = next(i for i in at_root.requests[-1]["input"] if i.get("type") == "function_call")
    assert (call["namespace"], call["name"]) == ("mcp__memls", "recall")
    assert "project" not in json.loads(call["arguments"])
    result = recall_result(output_text(at_root, "call_script_0"))
    assert result.get("project") == str(demo.project)  # the project it acted on, named
    memories = result["results"]
    (note,) = [m for m in memories if own(m, AGENTS_LINE)]
    assert "AGENTS.md" in json.dumps(note)
    # AGENTS.md's line (which Codex itself gives the model, as its instructions) comes with
    # the CLAUDE.md line that overrules it
    assert CLAUDE_LINE in json.dumps(note), note
    assert any(own(m, CLAUDE_LINE) for m in memories)


def test_from_a_subfolder_the_project_is_the_repository(demo, at_root):
    sub = demo.project / "src" / "app"
    sub.mkdir(parents=True, exist_ok=True)
    s = session(demo, SCRIPT, sub)
    result = recall_result(output_text(s, "call_script_0"))
    assert result.get("project") == str(demo.project)
    assert any(own(m, AGENTS_LINE) for m in result["results"]), result
