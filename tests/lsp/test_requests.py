"""The daemon driven by a real LSP client (pytest-lsp), with VS Code's and Neovim's capabilities."""

from __future__ import annotations

import ast
import asyncio
import os
import sys
import time

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls import uris
from pygls.exceptions import JsonRpcException
from lsp_helpers import plain
from pytest_lsp import ClientServerConfig, client_capabilities

EDITORS = ["visual-studio-code", "neovim"]
AGENTS = """# Agent notes

## Conventions
- We use yarn for package management
- The API listens on port 8080
- Tests run with pytest
"""


async def wait_for(predicate, timeout=60.0, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    (root / "AGENTS.md").write_text(AGENTS)
    (root / ".memls").mkdir()
    (root / ".memls" / "decisions.md").write_text("- Deploys go out on Tuesdays\n")
    (root / "README.md").write_text("- not a note file: never indexed\n")
    return root


@pytest_asyncio.fixture(params=EDITORS)
async def client(request, workspace, tmp_path):
    env = {**os.environ, "MEMLS_DATA_DIR": str(tmp_path / "data")}
    config = ClientServerConfig(server_command=[sys.executable, "-m", "memls", "serve",
                                                "--stdio"], server_env=env)
    lsp = await config.start()
    registrations = []

    @lsp.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        registrations.extend(params.registrations)

    lsp.registrations = registrations
    lsp.notified = []

    for method in ("memory/changed", "memory/conflicts"):
        @lsp.feature(method)
        def on_note(params, method=method):
            lsp.notified.append((method, plain(params)))

    lsp.editor = request.param
    lsp.root = workspace
    started = time.perf_counter()
    await lsp.initialize_session(types.InitializeParams(
        capabilities=client_capabilities(request.param),
        workspace_folders=[types.WorkspaceFolder(uri=uris.from_fs_path(str(workspace)),
                                                 name="proj")]))
    lsp.initialize_seconds = time.perf_counter() - started
    yield lsp
    await lsp.shutdown_session()


async def call(client, method, **params):
    return plain(await client.protocol.send_request_async(method, params))


def command_of(action) -> types.Command:
    """A code action's command (the test client may decode a CodeAction as a Command whose
    `command` holds the nested command as a dict)."""
    inner = action.command
    if isinstance(inner, str) and inner.startswith("{"):
        # lsprotocol's union hook decodes a CodeAction as a Command and turns the nested
        # command into its repr; real editors parse the JSON themselves
        inner = ast.literal_eval(inner)
    if isinstance(inner, str):
        return action
    if isinstance(inner, dict):
        return types.Command(title=inner["title"], command=inner["command"],
                             arguments=inner.get("arguments"))
    return inner


def project_of(client) -> str:
    return str(client.root.resolve())


@pytest.mark.asyncio
async def test_initialize_is_answered_at_once(client):
    assert client.initialize_seconds < 5  # models load later, lazily


@pytest.mark.asyncio
async def test_every_request_round_trips(client):
    stored = await call(client, "memory/store", text="We deploy with ArgoCD", type="decision")
    assert stored["created"] and stored["project"] == project_of(client)
    mid = stored["id"]
    got = await call(client, "memory/get", id=mid)
    assert got["content"] == "We deploy with ArgoCD"
    found = await call(client, "memory/query", query="how do we deploy", k=5)
    assert found["project"] == project_of(client)
    assert mid in [r["id"] for r in found["results"]]
    fb = await call(client, "memory/feedback", id=mid, signal="helpful", query="deploy")
    assert fb["score"] == 1
    review = await call(client, "memory/review", action="list")
    assert review["memories"] == []
    other = await call(client, "memory/store", text="We deploy with Spinnaker now")
    sup = await call(client, "memory/supersede", old=mid, by=other["id"])
    assert sup["old"]["status"] == "superseded"
    gone = await call(client, "memory/forget", id=other["id"], reason="user_deleted")
    assert gone["reason"] == "user_deleted"
    log = await call(client, "memory/forgotten")
    assert [e["memoryId"] for e in log["entries"]] == [other["id"]]
    stats = await call(client, "memory/stats")
    assert stats["project"] == project_of(client) and stats["forgotten"] == 1
    health = await call(client, "memory/health")
    assert health["version"] and "models" in health
    conflicts = await call(client, "memory/conflicts")
    assert conflicts["project"] == project_of(client)
    assert ("memory/changed" in [m for m, _ in client.notified])


@pytest.mark.asyncio
async def test_bad_params_are_invalid_params_naming_the_field(client):
    cases = [("memory/store", {}, "text"), ("memory/store", {"text": "x", "type": "opinion"},
                                             "type"),
             ("memory/query", {"query": "x", "k": "many"}, "k"),
             ("memory/store", {"text": "x", "project": "  "}, "project"),
             ("memory/query", {"query": "x", "uri": "file:///elsewhere/a.md"}, "uri"),
             ("memory/forget", {"id": "m_1", "reason": "bored"}, "reason")]
    for method, params, field in cases:
        with pytest.raises(JsonRpcException) as err:
            await client.protocol.send_request_async(method, params)
        assert err.value.code == -32602 and field in str(err.value), (method, params)
    with pytest.raises(JsonRpcException) as err:
        await client.protocol.send_request_async("memory/get", {"id": "m_nope"})
    assert err.value.code == -32004
    with pytest.raises(JsonRpcException) as err:
        await client.protocol.send_request_async("memory/noSuchThing", {})
    assert err.value.code == -32601
    # and nothing was written
    assert (await call(client, "memory/stats"))["memories"] >= 0


@pytest.mark.asyncio
async def test_notes_are_indexed_with_ranges_and_sources(client):
    root = client.root
    agents = uris.from_fs_path(str(root / "AGENTS.md"))

    async def units():
        listed = await call(client, "memory/list")
        return {m["content"]: m for m in listed["memories"] if m["sourceUri"]}

    found = await wait_for_async(units, lambda u: len(u) == 4, "initial indexing")
    assert found["We use yarn for package management"]["sourceUri"] == agents
    assert found["We use yarn for package management"]["sourceRange"].startswith("3:")
    assert "not a note file: never indexed" not in found
    if client.capabilities.window and client.capabilities.window.work_done_progress:
        def ends():
            return [r for reports in client.progress_reports.values() for r in reports
                    if isinstance(r, types.WorkDoneProgressEnd)]

        await wait_for(ends, what="indexing progress to end (after embedding)")
        health = await call(client, "memory/health")
        assert health["indexPending"] == 0  # progress ends once the notes are embedded


async def wait_for_async(fetch, check, what, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await fetch()
        if check(value):
            return value
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}: {value}")


@pytest.mark.asyncio
async def test_a_note_edited_into_and_out_of_contradiction(client):
    root = client.root
    agents = uris.from_fs_path(str(root / "AGENTS.md"))
    await wait_for_async(lambda: call(client, "memory/list"),
                         lambda r: len([m for m in r["memories"] if m["sourceUri"]]) == 4,
                         "initial indexing")
    text = AGENTS + "- We switched from yarn to pnpm for package management\n"
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=agents, language_id="markdown", version=1,
                                             text=AGENTS)))
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=agents, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    diags = await wait_for(lambda: client.diagnostics.get(agents), what="a diagnostic")
    lines = sorted(d.range.start.line for d in diags)
    assert lines == [3, 6]  # the yarn line and the new pnpm line, in the buffer's numbering
    d = next(x for x in diags if x.range.start.line == 6)
    assert d.severity == types.DiagnosticSeverity.Warning and d.source == "memls"
    assert "yarn" in d.message and d.code
    assert d.related_information and d.related_information[0].location.uri == agents
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=agents), range=d.range,
        context=types.CodeActionContext(diagnostics=[d])))
    titles = [a.title for a in actions]
    assert titles == ["Supersede the older statement", "Not a contradiction",
                      "Open the other statement"]
    # edit out of contradiction: the diagnostic clears
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=agents, version=3),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=AGENTS)]))
    await wait_for(lambda: len(client.diagnostics[agents]) == 0, what="diagnostics cleared")
    # the removed unit was forgotten with reason source_removed
    log = await call(client, "memory/forgotten", reason="source_removed")
    assert any("pnpm" in e["preview"] for e in log["entries"])


@pytest.mark.asyncio
async def test_code_action_not_a_contradiction_clears_the_diagnostic(client):
    root = client.root
    note = root / ".memls" / "theme.md"
    note.write_text("- The light theme uses a white background\n"
                    "- The light theme uses a black background\n")
    uri = uris.from_fs_path(str(note))
    if client.editor == "visual-studio-code":
        await wait_for(lambda: client.registrations, what="watcher registration")
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri, type=types.FileChangeType.Created)]))
    diags = await wait_for(lambda: client.diagnostics.get(uri), what="diagnostics on disk note")
    d = diags[0]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=d.range,
        context=types.CodeActionContext(diagnostics=[d])))
    dismiss = next(a for a in actions if a.title == "Not a contradiction")
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=command_of(dismiss).command, arguments=command_of(dismiss).arguments))
    await wait_for(lambda: len(client.diagnostics[uri]) == 0, what="cleared after dismiss")
    opened = next(a for a in actions if a.title == "Open the other statement")
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=command_of(opened).command, arguments=command_of(opened).arguments))
    assert client.shown_documents and client.shown_documents[-1].uri == uri


@pytest.mark.asyncio
async def test_watched_file_removed_on_disk_forgets_its_units(client):
    root = client.root
    note = root / ".memls" / "decisions.md"
    uri = uris.from_fs_path(str(note))
    await wait_for_async(lambda: call(client, "memory/query", query="Tuesdays deploys"),
                         lambda r: any("Tuesdays" in h["content"] for h in r["results"]),
                         "the note indexed")
    note.unlink()
    if client.editor == "visual-studio-code":
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri, type=types.FileChangeType.Deleted)]))
    log = await wait_for_async(lambda: call(client, "memory/forgotten", reason="source_removed"),
                               lambda r: r["entries"], "forgetting on delete")
    assert "Tuesdays" in log["entries"][0]["preview"]


@pytest.mark.asyncio
async def test_the_remaining_requests(client):
    a = await call(client, "memory/store", text="The API listens on port 8080 in staging")
    pair = await call(client, "memory/checkPair", new="The API listens on port 9090",
                      existing="The API listens on port 8080")
    assert pair["contradiction"] is True
    audit = await call(client, "memory/audit", id=a["id"])
    assert [e["op"] for e in audit["entries"]] == ["store"] and audit["entries"][0]["front"] == "lsp"
    assert (await call(client, "memory/maintain"))["failed"] == []
    assert (await call(client, "memory/deadLetters"))["failed"] == []
    re = await call(client, "memory/reindex")
    assert re["indexed"] and re["queued"] >= 1
    doctor = await call(client, "memory/doctor")
    assert doctor["ok"], doctor["problems"]
    note = uris.from_fs_path(str(client.root / ".memls" / "extra.md"))
    synced = await call(client, "memory/syncNote", uri=note, text="- Lint with ruff\n")
    assert len(synced["added"]) == 1 and synced["project"] == project_of(client)
    with pytest.raises(JsonRpcException) as err:
        await client.protocol.send_request_async(
            "memory/syncNote", {"uri": "file:///etc/passwd.md", "text": "- x"})
    assert err.value.code == -32602 and "uri" in str(err.value)
    listed = await call(client, "memory/list", limit=1000)
    assert all(m["project"] == project_of(client) for m in listed["memories"])


@pytest.mark.asyncio
async def test_a_second_window_hears_only_its_own_projects(tmp_path):
    """Two editor windows on one store: the first owns it, the second goes through the owner's
    socket, subscribed to its own projects only (its folder and the projects it named)."""
    env = {**os.environ, "MEMLS_DATA_DIR": str(tmp_path / "data")}
    windows = []
    for name in ("first", "second"):
        root = tmp_path / name
        root.mkdir()
        config = ClientServerConfig(server_command=[sys.executable, "-m", "memls", "serve",
                                                    "--stdio"], server_env=env)
        lsp = await config.start()
        lsp.notified = []

        @lsp.feature("memory/changed")
        def on_changed(params, lsp=lsp):
            lsp.notified.append(plain(params))

        await lsp.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            workspace_folders=[types.WorkspaceFolder(uri=uris.from_fs_path(str(root)),
                                                     name=name)]))
        # the first window's engine is open (it owns the store) before the second starts
        await call(lsp, "memory/stats", project=str(root.resolve()))
        lsp.root = root
        windows.append(lsp)
    first, second = windows
    try:
        mine = await call(first, "memory/store", text="For the second window's folder",
                          project=project_of(second))
        theirs = await call(first, "memory/store", text="Only the first window's business",
                            project=project_of(first))
        named = await call(second, "memory/store", text="A project the second window named",
                           project="side")
        await wait_for(lambda: {i for n in second.notified for i in n["ids"]}
                       >= {mine["memory"]["id"], named["memory"]["id"]},
                       what="the second window's notifications")
        await call(first, "memory/store", text="Later, for the first window again",
                   project=project_of(first))
        await wait_for(lambda: len(first.notified) >= 3, what="the first window's own")
        heard = {n["project"] for n in second.notified}
        assert heard == {project_of(second), "side"}
        assert theirs["memory"]["id"] not in {i for n in second.notified for i in n["ids"]}
    finally:
        for lsp in windows[::-1]:
            await lsp.shutdown_session()
