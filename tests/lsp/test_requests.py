"""Every `memory/*` request through a real LSP client (pytest-lsp), with VS Code's and Neovim's
capabilities: round trips, and bad params answered with InvalidParams naming the field."""

from __future__ import annotations

import os
import sys

import pytest
from lsprotocol import types
from pygls import uris
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, client_capabilities

from daemon_helpers import Procs, stop
from lsp_helpers import CHANGED, EDITORS, call, notes_indexed, project_of, wait_until

# What a write would change in `memory/stats` (index_pending and degraded move with the
# background embedding, not with writes).
WRITTEN = (
    "memories",
    "byStatus",
    "byTrust",
    "byType",
    "reviewQueue",
    "forgotten",
    "tombstones",
    "feedbackSignals",
    "deadLetters",
)


@pytest.mark.asyncio
@pytest.mark.parametrize("editor", EDITORS)
async def test_initialize_is_answered_at_once(editor, workspace, tmp_path):
    """`initialize` never waits for the engine, nor for the models it loads: another process
    holds the data directory without serving it, so no engine can open while it lives, and
    `initialize` is answered all the same. Once that process leaves, the engine opens (the
    server keeps trying for 30 s) and requests are served. An order of events, not a
    stopwatch: a loaded machine cannot fail it."""
    data = tmp_path / "data"  # the models' default: vectors on
    data.mkdir(mode=0o700)
    procs = Procs(tmp_path)
    try:
        holder, _ = procs.owner(data, serve=False)  # holds the lock until it is stopped
        config = ClientServerConfig(
            server_command=[sys.executable, "-m", "memls", "serve", "--stdio"],
            server_env={**os.environ, "MEMLS_DATA_DIR": str(data)},
        )
        lsp = await config.start()
        try:
            result = await lsp.initialize_session(
                types.InitializeParams(
                    capabilities=client_capabilities(editor),
                    workspace_folders=[
                        types.WorkspaceFolder(uri=uris.from_fs_path(str(workspace)), name="proj")
                    ],
                )
            )
            assert result.capabilities is not None
            assert holder.poll() is None  # answered while the store could not be opened
            assert stop(holder) == 0
            stats = await call(lsp, "memory/stats")
            assert stats["project"] == str(workspace.resolve()) and stats["memories"] >= 0
        finally:
            await lsp.shutdown_session()
    finally:
        procs.close()


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
    # the store above was announced (the notification may trail the reply: wait for it)
    await wait_until(
        client,
        CHANGED,
        lambda: mid in {i for m, n in client.notified if m == CHANGED for i in n["ids"]},
        what="memory/changed naming the stored memory",
    )


@pytest.mark.asyncio
async def test_bad_params_are_invalid_params_naming_the_field(client):
    # the notes are in first, so nothing else writes while the bad requests go out
    await notes_indexed(client)
    before = await call(client, "memory/stats")
    audit_before = await call(client, "memory/audit", limit=1000)
    cases = [
        ("memory/store", {}, "text"),
        ("memory/store", {"text": "x", "type": "opinion"}, "type"),
        ("memory/query", {"query": "x", "k": "many"}, "k"),
        ("memory/store", {"text": "x", "project": "  "}, "project"),
        ("memory/query", {"query": "x", "uri": "file:///elsewhere/a.md"}, "uri"),
        ("memory/forget", {"id": "m_1", "reason": "bored"}, "reason"),
    ]
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
    # and nothing was written: the same counts, and no new audit entry
    after = await call(client, "memory/stats")
    assert {k: after[k] for k in WRITTEN} == {k: before[k] for k in WRITTEN}
    audit_after = await call(client, "memory/audit", limit=1000)
    stores = [e for e in audit_after["entries"] if e["op"] != "conflict_detected"]
    assert stores == [e for e in audit_before["entries"] if e["op"] != "conflict_detected"]
    assert not any(m == CHANGED and n["op"] != "sync" for m, n in client.notified)


@pytest.mark.asyncio
async def test_the_remaining_requests(client):
    a = await call(client, "memory/store", text="The API listens on port 8080 in staging")
    pair = await call(
        client,
        "memory/checkPair",
        new="The API listens on port 9090",
        existing="The API listens on port 8080",
    )
    assert pair["contradiction"] is True
    audit = await call(client, "memory/audit", id=a["id"])
    assert [e["op"] for e in audit["entries"]] == ["store"]
    assert audit["entries"][0]["front"] == "lsp"
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
            "memory/syncNote", {"uri": "file:///etc/passwd.md", "text": "- x"}
        )
    assert err.value.code == -32602 and "uri" in str(err.value)
    listed = await call(client, "memory/list", limit=1000)
    assert "Lint with ruff" in {m["content"] for m in listed["memories"]}  # not vacuous
    assert all(m["project"] == project_of(client) for m in listed["memories"])
