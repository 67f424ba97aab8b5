"""The real Gemini CLI (npm @google/gemini-cli 0.61.0), headless (`gemini -p`), memls added as
the README says (`gemini mcp add memls memls mcp`, run once in the quickstart project: it
writes the project's `.gemini/settings.json`), a fresh data directory and no daemon at the
start. Its model is this test: a scripted Gemini API on loopback (`GOOGLE_GEMINI_BASE_URL`)
that calls `mcp_memls_recall`, then answers.

What the binary needs to run headless with no account, read from its bundle and its refusals
(the throwaway HOME's `~/.gemini/`): `security.auth.selectedType = "gemini-api-key"` with
`GEMINI_API_KEY` (with `GOOGLE_GEMINI_BASE_URL` set and no type selected it takes the `gateway`
type, which `-p` refuses: "Invalid auth method selected."); the project in `trustedFolders.json`
(headless in an untrusted folder exits 55); a named model (`auto` first asks a router model,
unstreamed, for a JSON score). `privacy.usageStatisticsEnabled = false` keeps it off the
network: with it on, a session resolves hosts by DNS (its usage log goes to
play.googleapis.com); with it off, `strace -f -e trace=connect` saw one connection besides
Unix sockets: to the scripted API.

Headless, Gemini CLI drops every tool that would ask for a confirmation, MCP tools included:
the model is offered memls's tools only when the server is allowed (`--allowed-mcp-server-names
memls` here; `mcp.allowed` in settings, or `trust` on the server, do the same). It names them
`mcp_<server>_<tool>`, passes each schema as `parametersJsonSchema` (adding a
`wait_for_previous` property of its own), declares MCP roots (its workspace folder) and hands
the model a tool's text content, not its structured result.

One memory across agents: a project of its own whose Claude Code auto memory (a topic file and
its MEMORY.md pointer, where Claude Code keeps it under the throwaway HOME) says releases are
cut from develop while AGENTS.md says main; Gemini CLI's recall carries the auto memory with
its origin and AGENTS.md's line that contradicts it (the daemon that `memls mcp` starts reads
the auto memory from the HOME that Gemini CLI passes it).

Run alone: `.venv/bin/python -m pytest -q -n 0 tests/agents/test_gemini.py`."""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agents.harness import AGENTS_LINE, CLAUDE_LINE, agent_env, quickstart, run, stop_daemon
from agents.scripted_api import Call, GeminiAPI, declarations, function_responses

PROMPT = "how do we deploy?"
SCRIPT: list[Call | str] = [
    Call("mcp_memls_recall", {"query": PROMPT}),
    "Deploys go through GitHub Actions.",
]
ALLOW = ["--allowed-mcp-server-names", "memls"]
MODEL = "gemini-2.5-flash"
USER_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "model": {"name": MODEL},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}
LISTING = Path(__file__).parents[2] / "server" / "memls" / "mcp" / "listing.json"
OBSERVER = Path(__file__).with_name("observer_mcp.py")


@dataclass
class Demo:
    gemini: Path
    project: Path
    home: Path
    data_dir: Path
    env: dict[str, str]
    initialize: Path  # the params of Gemini CLI's `initialize`, as the observer server got them


@dataclass
class Session:
    requests: list[dict[str, Any]]  # the main-loop requests, in order
    stdout: str
    observed: bool  # the observer server had been started by the end of it


def session(
    demo: Demo, script: list[Call | str], flags: list[str], prompt: str = PROMPT
) -> Session:
    with GeminiAPI(script) as api:
        env = dict(demo.env, GOOGLE_GEMINI_BASE_URL=api.url)
        done = run([str(demo.gemini), "-p", prompt, *flags], demo.project, env, timeout=120)
        requests = api.main_requests()
        paths = {r.path for r in api.requests}
    assert done.returncode == 0, (done.stdout, done.stderr[-2000:])
    assert requests, "Gemini CLI sent its model no main-loop request"
    assert paths == {f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"}, paths
    return Session(requests, done.stdout, demo.initialize.exists())


def setup_demo(gemini: Path, root: Path) -> Demo:
    """The quickstart project with memls added as the README says, in a throwaway HOME whose
    user settings run Gemini CLI headless and add the observer server; no daemon yet."""
    project = quickstart(root / "demo")
    home, data_dir = root / "home", root / "data"
    env = agent_env(home, data_dir, GEMINI_API_KEY="anything")
    done = run([str(gemini), "mcp", "add", "memls", "memls", "mcp"], project, env, timeout=60)
    assert done.returncode == 0, (done.stdout, done.stderr)
    added = json.loads((project / ".gemini" / "settings.json").read_text())
    assert added["mcpServers"]["memls"] == {"command": "memls", "args": ["mcp"]}, added
    initialize = root / "initialize.json"
    # not the README's: an MCP server with no tools that records what Gemini CLI declares to
    # its servers (left out of a session that allows memls alone)
    observer = {"command": sys.executable, "args": [str(OBSERVER), str(initialize)]}
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(
        json.dumps(dict(USER_SETTINGS, mcpServers={"observer": observer}))
    )
    (home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(project): "TRUST_FOLDER"})
    )
    assert not (data_dir / "owner.lock").exists()  # no daemon at the start
    return Demo(gemini, project, home, data_dir, env, initialize)


@pytest.fixture(scope="module")
def demo(agent_bins, tmp_path_factory):
    root = tmp_path_factory.mktemp("gemini")
    demo = setup_demo(agent_bins["gemini"], root)
    try:
        yield demo
    finally:
        stop_daemon(demo.data_dir)


@pytest.fixture(scope="module")
def allowed(demo) -> Session:
    return session(demo, SCRIPT, ALLOW)


@pytest.fixture(scope="module")
def not_allowed(demo, allowed) -> Session:
    return session(demo, ["Nothing to recall with."], [])


# Claude Code's auto memory, as the real binary writes it (tests/agents/test_claude_code.py)
RELEASES = "Releases are cut from the develop branch."
RELEASES_AGENTS = "Releases are cut from main, not from the develop branch."
TOPIC = (
    "---\nname: release-branch\ndescription: which branch releases are cut from\n"
    f"metadata:\n  type: project\n---\n\n{RELEASES}\n"
)
POINTER = "- [Release branch](release_branch.md) — which branch releases are cut from\n"
RELEASES_PROMPT = "how are releases cut?"


@pytest.fixture(scope="module")
def across(agent_bins, tmp_path_factory) -> tuple[Demo, Session]:
    """A project of its own whose AGENTS.md says releases are cut from main, and whose Claude
    Code auto memory (in the folder memls computes for it, under the throwaway HOME) says
    develop; one Gemini CLI session whose model recalls how releases are cut."""
    from memls.notes.agent_places import claude_memory

    root = tmp_path_factory.mktemp("gemini-auto-memory")
    demo = setup_demo(agent_bins["gemini"], root)
    (demo.project / "AGENTS.md").write_text(f"- {RELEASES_AGENTS}\n")
    folder = claude_memory(demo.project, demo.home, demo.env).folder
    assert folder.is_relative_to(demo.home / ".claude" / "projects"), folder
    folder.mkdir(parents=True)
    (folder / "release_branch.md").write_text(TOPIC)
    (folder / "MEMORY.md").write_text(POINTER)
    script: list[Call | str] = [
        Call("mcp_memls_recall", {"query": RELEASES_PROMPT}),
        "From main.",
    ]
    try:
        yield demo, session(demo, script, ALLOW, RELEASES_PROMPT)
    finally:
        stop_daemon(demo.data_dir)


def memls_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in declarations(body).items() if k.startswith("mcp_memls_")}


def recall_output(s: Session) -> str:
    """The functionResponse of the scripted recall as the model read it: the tool's text."""
    for body in s.requests:
        response = function_responses(body).get("call_script_0")
        if response is not None:
            assert response["name"] == "mcp_memls_recall", response
            assert set(response["response"]) == {"output"}, response
            return response["response"]["output"]
    raise AssertionError("no request carried the result of call_script_0")


def entries(output: str) -> list[str]:
    """The recalled memories of recall's text, one block each ("[n] id · type · ...")."""
    return re.split(r"(?m)^(?=\[\d+\] )", output)[1:]


def test_memls_tools_are_offered_with_their_schemas(allowed):
    listing = json.loads(LISTING.read_text())["tools"]
    offered = memls_tools(allowed.requests[0])
    assert set(offered) == {f"mcp_memls_{t['name']}" for t in listing}, sorted(offered)
    for tool in listing:
        given = offered[f"mcp_memls_{tool['name']}"]
        assert given["description"] == tool["description"]
        schema = json.loads(json.dumps(given["parametersJsonSchema"]))
        added = schema["properties"].pop("wait_for_previous")  # Gemini CLI's own
        assert added["type"] == "boolean"
        assert schema == tool["inputSchema"], tool["name"]


def test_headless_offers_no_memls_tool_unless_allowed(not_allowed):
    assert declarations(not_allowed.requests[0]), "no tools at all"
    assert not memls_tools(not_allowed.requests[0])


def test_allowing_memls_starts_no_other_server(allowed, not_allowed):
    """The allowed servers are the only ones started: the observer (in the user's settings)
    ran in the session that allowed none, not in the one that allowed memls, which ran first."""
    assert not allowed.observed and not_allowed.observed


def test_gemini_cli_declares_roots(not_allowed, demo):
    declared = json.loads(demo.initialize.read_text())
    assert declared["clientInfo"]["name"] == "gemini-cli-mcp-client"
    assert "roots" in declared["capabilities"], declared["capabilities"]


def test_the_notes_reach_the_model_only_through_recall(allowed):
    """Gemini CLI loads GEMINI.md, not AGENTS.md or CLAUDE.md: the first request holds
    memls's instructions but neither note's line."""
    first = json.dumps(allowed.requests[0])
    assert "memls is this project's memory" in first
    assert AGENTS_LINE not in first and CLAUDE_LINE not in first


def test_recall_gives_the_notes_and_their_contradiction(allowed, demo):
    (call,) = [
        part["functionCall"]
        for turn in allowed.requests[-1]["contents"]
        if turn["role"] == "model"
        for part in turn["parts"]
        if "functionCall" in part
    ]
    assert call == {"id": "call_script_0", "name": "mcp_memls_recall", "args": {"query": PROMPT}}
    output = recall_output(allowed)
    assert f"project: {demo.project};" in output  # the root Gemini CLI declared, named
    by_text = {}
    for entry in entries(output):
        text = re.search(r'(?m)^  text: (".*")$', entry)
        assert text, entry
        by_text[json.loads(text.group(1))] = entry
    assert set(by_text) == {AGENTS_LINE, CLAUDE_LINE}, output
    agents = by_text[AGENTS_LINE]
    assert "source AGENTS.md:1" in agents.splitlines()[0]
    (against,) = [line for line in agents.splitlines() if "contradicted by" in line]
    assert json.dumps(CLAUDE_LINE) in against and "source CLAUDE.md:1" in against, agents
    assert SCRIPT[-1] in allowed.stdout  # the session went on to the model's answer


def test_recall_gives_claude_codes_auto_memory_and_the_line_that_contradicts_it(across):
    from memls.notes.agent_places import claude_memory

    demo, s = across
    topic = claude_memory(demo.project, demo.home, demo.env).folder / "release_branch.md"
    output = recall_output(s)
    assert f"project: {demo.project};" in output
    by_text = {}
    for entry in entries(output):
        text = re.search(r'(?m)^  text: (".*")$', entry)
        assert text, entry
        by_text[json.loads(text.group(1))] = entry
    assert RELEASES in by_text and RELEASES_AGENTS in by_text, output
    assert not any("Release branch" in t for t in by_text), output  # MEMORY.md's pointer
    mine = by_text[RELEASES]
    head = mine.splitlines()[0]
    assert "Claude Code auto memory" in head and "trust candidate" in head, mine
    assert f"source {topic}:" in head, mine  # read from the throwaway HOME
    (against,) = [line for line in mine.splitlines() if "contradicted by" in line]
    assert json.dumps(RELEASES_AGENTS) in against, mine
    assert "source AGENTS.md:1" in against and "the other stands" in against, mine
    agents = by_text[RELEASES_AGENTS]
    assert "source AGENTS.md:1" in agents.splitlines()[0], agents
    (back,) = [line for line in agents.splitlines() if "contradicted by" in line]
    assert json.dumps(RELEASES) in back and "Claude Code auto memory" in back, agents
    assert "this one stands" in back, agents
    assert "From main." in s.stdout  # the session went on to the model's answer
