"""The real Claude Code (npm @anthropic-ai/claude-code 2.1.197, its native binary), headless,
set up exactly as the README says (`claude mcp add memls -- memls mcp`, `memls hooks install
claude`) in the README's quickstart project, a fresh data directory, no daemon running at the
start and no editor. Its model is this test: a scripted Messages API on loopback that calls
`mcp__memls__recall`, then `mcp__memls__remember`, then answers. Every assertion is on what
Claude Code actually sent its model (the request bodies), or on what an editor opened
afterwards sees.

The first session: memls's tools are in the first request, and so is the briefing; recall's
result (as the model reads it: the tool_result of the next request) holds AGENTS.md's line
with the CLAUDE.md line that contradicts it; the remembered statement is a `candidate`. The
second session's first request is briefed with it, and an editor (LSP) sees it.

Claude Code's own auto memory, in a project of its own: a first session whose model has the
real binary write a memory with its Write tool where its system prompt says (a topic file with
front matter, and its pointer in MEMORY.md), while AGENTS.md says otherwise; the next session's
briefing (SessionStart) and recall (MCP) carry that memory with its origin and AGENTS.md's
line that contradicts it, which stands.

Run alone: `.venv/bin/python -m pytest -q -n 0 tests/agents/test_claude_code.py`; the figure
of what one recalled memory costs the model: `... -k per_memory -s` (see `chars_per_memory`)."""

from __future__ import annotations

import json
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, client_capabilities

from agents.harness import (
    AGENTS_LINE,
    CLAUDE_LINE,
    agent_env,
    quickstart,
    run,
    stop_daemon,
    venv_bin,
)
from agents.scripted_api import (
    Call,
    MessagesAPI,
    Step,
    hook_context,
    result_text,
    text_of,
    tool_results,
)
from lsp_helpers import DIAGNOSTICS, call, wait_until

PROMPT = "how do we deploy?"
REMEMBERED = "Deploy previews are built for every pull request."
SCRIPT: list[Call | str] = [
    Call("mcp__memls__recall", {"query": PROMPT}),
    Call("mcp__memls__remember", {"text": REMEMBERED, "type": "convention"}),
    "Deploys go through GitHub Actions; pull requests get deploy previews.",
]
ALLOWED = "mcp__memls__recall,mcp__memls__remember"
MEMLS_TOOLS = {"mcp__memls__recall", "mcp__memls__remember"}
# What one recalled memory cost the model on the code before the lean result, measured by
# `python tests/agents/test_claude_code.py` (chars_per_memory below): the recall of PROMPT on
# the quickstart project, 2 memories, 2424 characters of tool_result (the project's path
# written as `~/demo`); output: benchmarks/results/agents-recall-chars-before.txt. The lean result
# must cost at most 40% of it.
BEFORE_CHARS_PER_MEMORY = 1212.0


@dataclass
class Demo:
    claude: Path
    project: Path
    home: Path
    data_dir: Path
    env: dict[str, str]
    payloads: Path  # what Claude Code's hooks were given on stdin, one JSON object a line


@dataclass
class Session:
    requests: list[dict[str, Any]]  # the main-loop requests, in order
    stdout: str


def setup_demo(claude: Path, root: Path) -> Demo:
    """The quickstart project, set up as the README says; an observer hook in the user's
    settings (the throwaway HOME, not the project) records every hook input."""
    project = quickstart(root / "demo")
    home, data_dir = root / "home", root / "data"
    env = agent_env(
        home,
        data_dir,
        ANTHROPIC_API_KEY="anything",
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
    )
    for argv in ([str(claude), "mcp", "add", "memls", "--", "memls", "mcp"],
                 ["memls", "hooks", "install", "claude"]):  # fmt: skip
        done = run(argv, project, env, timeout=60)
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
    payloads = root / "hook-inputs.jsonl"
    record = f"cat >> {shlex.quote(str(payloads))}; echo >> {shlex.quote(str(payloads))}"
    observer = [{"hooks": [{"type": "command", "command": record}]}]
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"SessionStart": observer, "UserPromptSubmit": observer}})
    )
    return Demo(claude, project, home, data_dir, env, payloads)


def session(
    demo: Demo, script: list[Step], prompt: str = PROMPT, allowed: str = ALLOWED
) -> Session:
    with MessagesAPI(script) as api:
        env = dict(demo.env, ANTHROPIC_BASE_URL=api.url)
        argv = [str(demo.claude), "-p", prompt, "--allowedTools", allowed]
        done = run(argv, demo.project, env, timeout=120)
        requests = api.main_requests()
    assert done.returncode == 0, (done.stdout, done.stderr[-2000:])
    assert requests, "Claude Code sent its model no main-loop request"
    return Session(requests, done.stdout)


@pytest.fixture(scope="module")
def demo(agent_bins, tmp_path_factory):
    root = tmp_path_factory.mktemp("claude-code")
    demo = setup_demo(agent_bins["claude"], root)
    assert not (demo.data_dir / "owner.lock").exists()  # no daemon at the start
    try:
        yield demo
    finally:
        stop_daemon(demo.data_dir)


@pytest.fixture(scope="module")
def first(demo) -> Session:
    return session(demo, SCRIPT)


@pytest.fixture(scope="module")
def second(demo, first) -> Session:
    return session(demo, ["Deploys go through GitHub Actions."])


# ---- reading what the model was given


def the_result(s: Session, tool_use_id: str) -> str:
    """The tool_result block for `tool_use_id` as the model read it in the next request."""
    for body in s.requests:
        block = tool_results(body).get(tool_use_id)
        if block is not None:
            assert not block.get("is_error"), result_text(block)
            return result_text(block)
    raise AssertionError(f"no request carried the result of {tool_use_id}")


def holding(value: Any, text: str) -> list[dict]:
    """Every object in `value` (parsed JSON) that has `text` as one of its own values."""
    found = []
    if isinstance(value, dict):
        if any(isinstance(v, str) and v.strip() == text for v in value.values()):
            found.append(value)
        for v in value.values():
            found += holding(v, text)
    elif isinstance(value, list):
        for v in value:
            found += holding(v, text)
    return found


def recalled(result: str) -> list[dict]:
    """The memories of a recall result (its `results`)."""
    data = json.loads(result)
    assert isinstance(data.get("results"), list), result[:500]
    return data["results"]


def chars_per_memory(result: str, project: Path) -> tuple[int, int, float]:
    """(characters, memories, characters per memory) of a recall's tool_result as the model
    read it, the project's absolute path written as `~/demo` (the README's path) so the
    figure does not depend on where the test ran."""
    text = result.replace(project.as_uri(), "file://~/demo").replace(str(project), "~/demo")
    n = len(recalled(result))
    return len(text), n, (len(text) / n if n else float("inf"))


# ---- the first session


def test_memls_tools_are_in_the_first_request(first):
    offered = {t.get("name") for t in first.requests[0].get("tools", [])}
    assert offered >= MEMLS_TOOLS, sorted(n for n in offered if n.startswith("mcp__"))


def test_the_first_request_is_briefed(first):
    """The hooks' additionalContext (SessionStart, UserPromptSubmit) reaches the first
    request: the project's note that stands, with its source."""
    body = first.requests[0]
    given = {e: hook_context(body, e) for e in ("SessionStart", "UserPromptSubmit")}
    briefing = "\n".join(text for text in given.values() if text)
    assert briefing, "no memls hook gave the first request anything"
    assert CLAUDE_LINE in briefing and "CLAUDE.md:1" in briefing, given
    assert AGENTS_LINE not in briefing, given  # the line CLAUDE.md overrules is left out


def test_recall_gives_the_note_and_its_contradiction(first, demo):
    result = the_result(first, "toolu_script_0")
    memories = recalled(result)
    agents = [m for m in memories if m in holding(m, AGENTS_LINE)]  # its own text
    assert agents, f"AGENTS.md's line is not recalled: {result[:800]}"
    (note,) = agents
    assert "AGENTS.md" in json.dumps(note)  # its source
    assert holding(note, CLAUDE_LINE), f"AGENTS.md's line without its contradiction: {note}"
    assert str(demo.project) in result  # the project it acted on, named


def test_the_remembered_statement_is_a_candidate(first):
    stored = holding(json.loads(the_result(first, "toolu_script_1")), REMEMBERED)
    assert stored, "remember's result does not hold the statement"
    assert all(m.get("trust") == "candidate" for m in stored), stored
    assert SCRIPT[-1] in first.stdout  # the session went on to the model's answer


def test_recall_costs_the_model_little_per_memory(first, demo):
    """What one recalled memory costs the model: at most 40% of the result before it was made
    lean, with what a model needs kept (the lines, their source, the contradiction: above)."""
    chars, n, per = chars_per_memory(the_result(first, "toolu_script_0"), demo.project)
    print(f"\nrecall {PROMPT!r}: {chars} characters, {n} memories, {per:.1f} per memory")
    assert n >= 2, "both notes' lines are recalled"
    assert per <= 0.4 * BEFORE_CHARS_PER_MEMORY, (chars, n, per)


def test_hook_inputs_are_the_committed_fixtures(first, demo):
    """tests/data/claude_code holds what this binary gives its hooks: the same fields."""
    events = [json.loads(line) for line in demo.payloads.read_text().splitlines() if line]
    by_event = {e["hook_event_name"]: e for e in events}
    data = Path(__file__).parents[1] / "data" / "claude_code"
    for event, fixture in (
        ("SessionStart", "session_start.json"),
        ("UserPromptSubmit", "user_prompt_submit.json"),
    ):
        committed = json.loads((data / fixture).read_text())
        assert sorted(by_event[event]) == sorted(committed), event
        assert by_event[event]["cwd"] == str(demo.project)
    assert by_event["UserPromptSubmit"]["prompt"] == PROMPT


# ---- the next session, and an editor


def test_the_next_session_is_briefed_with_it(second):
    briefing = hook_context(second.requests[0], "SessionStart")
    assert briefing and REMEMBERED in briefing, briefing


@pytest.mark.asyncio
async def test_an_editor_opened_afterwards_sees_it(demo, second):
    """An editor (VS Code's capabilities) opened on the project afterwards: AGENTS.md shows
    its contradiction with CLAUDE.md, and the agent's memory is in the editor's list, the
    notes' lines once each (the agent's daemon and the editor index them once)."""
    editor = await ClientServerConfig(
        server_command=[str(venv_bin() / "memls"), "serve", "--stdio"], server_env=demo.env
    ).start()

    @editor.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        return None

    agents_md = demo.project / "AGENTS.md"
    uri = uris.from_fs_path(str(agents_md))
    try:
        await editor.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                workspace_folders=[
                    types.WorkspaceFolder(uri=uris.from_fs_path(str(demo.project)), name="demo")
                ],
            )
        )
        editor.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=1, text=agents_md.read_text()
                )
            )
        )
        diagnostics = await wait_until(
            editor,
            DIAGNOSTICS,
            lambda: editor.diagnostics.get(uri),
            lambda found: any(CLAUDE_LINE in d.message for d in found or []),
            what="AGENTS.md's contradiction with CLAUDE.md",
        )
        assert [d.range.start.line for d in diagnostics] == [0]
        listed = await call(editor, "memory/list", project=str(demo.project), limit=1000)
        memories = listed["memories"]
        (remembered,) = [m for m in memories if m["content"] == REMEMBERED]
        assert remembered["trust"] == "candidate" and remembered["type"] == "convention"
        contents = [m["content"] for m in memories]
        assert contents.count(AGENTS_LINE) == 1 and contents.count(CLAUDE_LINE) == 1, contents
    finally:
        await editor.shutdown_session()


# ---- Claude Code's own auto memory, contradicted by AGENTS.md

RELEASES = "Releases are cut from the develop branch."
RELEASES_AGENTS = "Releases are cut from main, not from the develop branch."
MEMORY_AT = re.compile(r"persistent file-based memory at `([^`]+)`")
TOPIC = (
    "---\nname: release-branch\ndescription: which branch releases are cut from\n"
    f"metadata:\n  type: project\n---\n\n{RELEASES}\n"
)
POINTER = "- [Release branch](release_branch.md) — which branch releases are cut from\n"


def memory_folder(body: dict[str, Any]) -> str:
    """The auto memory folder Claude Code's system prompt names ("# Memory")."""
    found = MEMORY_AT.search(text_of(body))
    assert found, "the system prompt names no auto memory folder"
    return found.group(1)


def write(name: str, content: str) -> Step:
    """The model writes `name` into the auto memory folder its system prompt names."""
    return lambda body: Call(
        "Write", {"file_path": str(Path(memory_folder(body)) / name), "content": content}
    )


@pytest.fixture(scope="module")
def remembering(agent_bins, tmp_path_factory):
    """A project whose AGENTS.md says releases are cut from main, set up as the README says,
    and a first session whose model has Claude Code write the opposite into its auto memory."""
    root = tmp_path_factory.mktemp("claude-code-auto-memory")
    demo = setup_demo(agent_bins["claude"], root)
    (demo.project / "AGENTS.md").write_text(f"- {RELEASES_AGENTS}\n")
    try:
        script = [write("release_branch.md", TOPIC), write("MEMORY.md", POINTER), "Noted."]
        wrote = session(demo, script, "remember: releases are cut from develop", "Write")
        yield demo, wrote
    finally:
        stop_daemon(demo.data_dir)


@pytest.fixture(scope="module")
def recalling(remembering) -> Session:
    """The next session: recall of how releases are cut, once the daemon that the first
    session started has found the contradiction (it watched the memory folder meanwhile)."""
    from daemon_helpers import Heard
    from memls import protocol as p
    from memls.daemon import RemoteEngine

    demo, _ = remembering
    with RemoteEngine.connect(demo.data_dir, front="test") as engine:
        heard = Heard()
        engine.listeners.append(heard)
        engine.subscribe([str(demo.project)])
        params = p.ConflictsParams(project=str(demo.project), status="open")
        assert heard.wait(lambda _: engine.conflicts(params).conflicts, 60)
    question = "how are releases cut?"
    return session(
        demo,
        [Call("mcp__memls__recall", {"query": question}), "From main."],
        question,
        "mcp__memls__recall",
    )


def test_claude_code_writes_its_auto_memory_where_memls_reads_it(remembering):
    from memls.notes.agent_places import claude_memory

    demo, wrote = remembering
    said = Path(memory_folder(wrote.requests[0]))
    place = claude_memory(demo.project, demo.home, {})
    assert said == place.folder, "memls computes the folder Claude Code names"
    written = (said / "release_branch.md").read_text()
    assert RELEASES in written and "originSessionId" in written  # the binary's own metadata
    assert (said / "MEMORY.md").read_text() == POINTER
    for n in (0, 1):
        assert not tool_results(wrote.requests[n + 1])[f"toolu_script_{n}"].get("is_error")


def test_the_next_briefing_says_the_auto_memory_is_contradicted_by_agents_md(recalling):
    briefing = hook_context(recalling.requests[0], "SessionStart")
    assert briefing, "no SessionStart briefing"
    assert f'Your auto memory says "{RELEASES}"' in briefing, briefing
    assert f'AGENTS.md:1 says "{RELEASES_AGENTS}"' in briefing, briefing
    assert "Claude Code auto memory" in briefing and "(contradiction" in briefing, briefing


def test_recall_gives_the_auto_memory_with_its_origin_and_the_line_that_stands(recalling):
    memories = recalled(the_result(recalling, "toolu_script_0"))
    (mine,) = [m for m in memories if m["text"] == RELEASES]
    assert mine["origin"] == "Claude Code auto memory", mine
    assert mine["trust"] == "candidate"
    (side,) = mine["contested"]
    assert (side["text"], side.get("stands")) == (RELEASES_AGENTS, True), side
    assert not any("Release branch" in m["text"] for m in memories)  # MEMORY.md's pointer


if __name__ == "__main__":
    # The figure behind BEFORE_CHARS_PER_MEMORY: the quickstart project with its notes indexed
    # first (as an editor relays them: memory/syncNote to the daemon), then one real Claude
    # Code session whose model recalls PROMPT; what the tool_result held, per memory.
    import subprocess
    import tempfile
    import threading

    from agents.harness import venv_bin as _bin
    from memls import protocol as p
    from memls.daemon import RemoteEngine

    cache = subprocess.run(
        ["bash", str(Path(__file__).with_name("setup.sh"))], capture_output=True, text=True
    ).stdout.split()[-1]
    claude = Path(cache) / "claude-code-2.1.197" / "node_modules" / ".bin" / "claude"
    with tempfile.TemporaryDirectory() as tmp:
        demo = setup_demo(claude, Path(tmp))
        daemon = subprocess.Popen(
            [str(_bin() / "memls"), "--data-dir", str(demo.data_dir), "serve", "--socket"],
            env=demo.env,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert daemon.stderr and "serving" in daemon.stderr.readline()
        try:
            with RemoteEngine.connect(demo.data_dir, front="measure") as engine:
                found = threading.Event()
                engine.listeners.append(
                    lambda method, _: found.set() if method == "memory/conflicts" else None
                )
                for name in ("AGENTS.md", "CLAUDE.md"):
                    note = demo.project / name
                    engine.sync_note(
                        p.SyncNoteParams(
                            uri=note.as_uri(), text=note.read_text(), project=str(demo.project)
                        )
                    )
                assert engine.flush() and found.wait(60), "the notes' contradiction"
            s = session(demo, SCRIPT[:1] + SCRIPT[2:])
            result = the_result(s, "toolu_script_0")
            chars, n, per = chars_per_memory(result, demo.project)
            shown = result.replace(demo.project.as_uri(), "file://~/demo")
            print(
                "the tool_result as the model read it:\n"
                + shown.replace(str(demo.project), "~/demo")
            )
            print(f"recall {PROMPT!r}: {chars} characters, {n} memories, {per:.1f} per memory")
        finally:
            daemon.terminate()
            daemon.wait(timeout=60)
            stop_daemon(demo.data_dir)
    sys.exit(0)
