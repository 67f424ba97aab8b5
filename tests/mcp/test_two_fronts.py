"""An editor (LSP, pytest-lsp) and an agent (MCP, the SDK's stdio client) on one data
directory: one store, one owner, the same project for the same folder.

- what the agent remembers is in the editor's `memory/query` at once, and a contradiction with
  a note raises a diagnostic on the note's line;
- what the editor changes in a note is in the agent's next recall;
- whichever front started first owns the store; the other goes through its socket; when the
  owner leaves, the other takes over.
Every wait is on a notification or a reply (no sleeps)."""

from __future__ import annotations

import os
import sys

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, client_capabilities

from lsp_helpers import plain
from mcp_helpers import Events, mcp_session, ok
from memls.ownership import OwnerLock

pytestmark = pytest.mark.asyncio

AGENTS = """# Agent notes

- We use yarn for package management
- The API listens on port 8080
"""


@pytest_asyncio.fixture
async def editor(tmp_path, workspace):
    """A VS Code-like LSP session on the workspace (its notes indexed and embedded)."""
    (workspace / "AGENTS.md").write_text(AGENTS)
    env = {**os.environ, "MEMLS_DATA_DIR": str(tmp_path / "data")}
    lsp = await ClientServerConfig(
        server_command=[sys.executable, "-m", "memls", "serve", "--stdio"], server_env=env
    ).start()
    lsp.events = Events()

    def diagnostics(params: types.PublishDiagnosticsParams):
        lsp.events.add(("diagnostics", params.uri, list(params.diagnostics)))

    def progress(params: types.ProgressParams):
        value = params.value
        lsp.events.add(
            (
                "progress",
                value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None),
            )
        )

    _tap(lsp, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, diagnostics)
    _tap(lsp, types.PROGRESS, progress)

    @lsp.feature("memory/changed")
    def changed(params):
        lsp.events.add(("changed", plain(params)))

    @lsp.feature("memory/conflicts")
    def conflicts(params):
        lsp.events.add(("conflicts", plain(params)))

    @lsp.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        return None

    lsp.start = lambda: lsp.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            workspace_folders=[
                types.WorkspaceFolder(uri=uris.from_fs_path(str(workspace)), name="proj")
            ],
        )
    )
    yield lsp
    await lsp.shutdown_session()


def _tap(lsp, method: str, after) -> None:
    """Also tell `after` about a notification pytest-lsp already handles."""
    features = lsp.protocol.fm.features
    original = features[method]

    def handler(params):
        result = original(params)
        after(params)
        return result

    features[method] = handler


async def request(lsp, method: str, **params):
    return plain(await lsp.protocol.send_request_async(method, params))


@pytest.mark.parametrize("first", ["editor", "agent"])
async def test_agent_and_editor_share_one_memory(tmp_path, workspace, editor, first):
    data = tmp_path / "data"
    agents = uris.from_fs_path(str(workspace / "AGENTS.md"))
    key = str(workspace.resolve())
    async with mcp_session(data, [workspace], client="codex") as agent:
        if first == "agent":  # the agent alone has the notes: the daemon read them
            assert (await ok(agent, "stats"))["memories"] == 2  # the two lines of AGENTS.md
        await editor.start()
        # the notes are indexed and embedded: the editor's progress ends
        await editor.events.wait(
            lambda e: e[0] == "progress" and e[1] == "end", what="initial indexing"
        )
        holder = OwnerLock(data).holder()
        # the daemon `memls mcp` started owns the store (the relay never does); the editor
        # joins it
        assert holder is not None and holder != editor._server.pid
        notes = (await ok(agent, "recall", query="package management"))["results"]
        yarn = next(h for h in notes if h["text"] == "We use yarn for package management")
        assert yarn["source"] == "AGENTS.md:3"  # the line, relative to the project

        # the agent stores a statement that contradicts the note
        stored = await ok(
            agent,
            "remember",
            type="decision",
            text="We switched from yarn to pnpm for package management",
        )
        assert stored["memory"]["trust"] == "candidate"
        assert [c["id"] for c in stored["contradicts"]] == [yarn["id"]]
        assert stored["contradicts"][0]["source"] == "AGENTS.md:3"
        assert stored["project"] == key  # the editor's folder and the agent's root: one project

        # ... it is in the editor's query at once
        found = await request(editor, "memory/query", query="pnpm package management", uri=agents)
        assert found["project"] == key
        hit = next(r for r in found["results"] if r["id"] == stored["id"])
        assert hit["trust"] == "candidate"

        # ... and the note's line carries a contradiction diagnostic quoting it
        _, _, diags = await editor.events.wait(
            lambda e: (
                e[0] == "diagnostics" and e[1] == agents and any("pnpm" in d.message for d in e[2])
            ),
            what="a diagnostic on AGENTS.md",
        )
        d = next(d for d in diags if "pnpm" in d.message)
        assert d.range.start.line == 2 and d.source == "memls"
        assert d.severity == types.DiagnosticSeverity.Warning

        # the editor edits the note; the agent's next recall sees the new text
        edited = AGENTS + "- Deploys go out on Fridays after the freeze\n"
        mark = editor.events.mark()
        editor.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=agents, language_id="markdown", version=1, text=AGENTS
                )
            )
        )
        editor.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=agents, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
            )
        )
        synced = await editor.events.wait(
            lambda e: e[0] == "changed" and e[1]["op"] == "sync" and e[1]["ids"],
            what="the edit indexed",
            since=mark,
        )
        recalled = await ok(agent, "recall", query="when do deploys go out")
        deploy = next(h for h in recalled["results"] if "Fridays" in h["text"])
        assert deploy["id"] in synced[1]["ids"]
        assert deploy["text"] == "Deploys go out on Fridays after the freeze"
        assert deploy["source"] == "AGENTS.md:5"

        # the agent's write is in the audit log as made by its client
        audit = await request(editor, "memory/audit", id=stored["id"], uri=agents)
        assert [e["front"] for e in audit["entries"] if e["op"] == "store"] == ["mcp:codex"]
        stats = await ok(agent, "stats")
        listed = await request(editor, "memory/list", uri=agents)
        assert stats["memories"] == 4, [m["content"] for m in listed["memories"]]

        if first == "editor":
            # the editor leaves: the agent goes on with the daemon, which still owns the store
            await editor.shutdown_session()
            editor.shutdown_session = _noop
            again = await ok(agent, "recall", query="when do deploys go out")
            assert deploy["id"] in {h["id"] for h in again["results"]}
            more = await ok(
                agent,
                "remember",
                text="Feature flags live in flags.yaml",
                type="convention",
                check=False,
            )
            assert more["created"]
            assert OwnerLock(data).holder() == holder  # the daemon, not the agent's process

    if first == "agent":
        # the owner (the daemon) is stopped with the agent's session: the editor takes the
        # store over and goes on, its open buffer (with the Fridays line) winning over the disk
        after = await request(editor, "memory/stats", uri=agents)
        listed = await request(editor, "memory/list", uri=agents)
        assert after["memories"] == 4, [m["content"] for m in listed["memories"]]
        assert OwnerLock(data).holder() == editor._server.pid


async def _noop() -> None:
    return None
