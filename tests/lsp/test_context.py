"""memory/context and memory/promote through the language server (pytest-lsp, VS Code's and
Neovim's capabilities): the briefing within its budget, bad input refused by field, and a
promoted memory that the note watcher reads back as the same memory, never a second one."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException

from lsp_helpers import CHANGED, call, note_units, notes_indexed, wait_until

pytestmark = pytest.mark.asyncio


async def test_briefing_and_promote_round_trip(client):
    await notes_indexed(client)
    stored = await call(
        client, "memory/store", text="Logs are kept for thirty days", type="constraint"
    )
    brief = await call(client, "memory/context", prompt="how long are logs kept", budget=300)
    assert stored["id"] in brief["markdown"] and brief["tokens"] <= 300
    assert brief["project"] == str(client.root.resolve())
    with pytest.raises(JsonRpcException) as bad:
        await call(client, "memory/context", budget=5)
    assert bad.value.code == -32602 and "budget" in str(bad.value)

    before = await call(client, "memory/stats")
    promoted = await call(client, "memory/promote", id=stored["id"])
    note = client.root / ".memls" / "memory.md"
    assert promoted["path"] == str(note.resolve()) and promoted["created"]
    assert promoted["memory"]["sourceUri"] == promoted["uri"]
    assert "- Logs are kept for thirty days" in note.read_text()

    # a teammate's edit to the note: the watcher syncs the file, the new line is a new
    # memory and the promoted item stays the memory it was
    note.write_text(note.read_text() + "- Backups are restored monthly as a drill\n")
    units = await wait_until(
        client,
        CHANGED,
        lambda: note_units(client),
        lambda u: "Backups are restored monthly as a drill" in u,
        what="the edited note synced",
    )
    assert units["Logs are kept for thirty days"]["id"] == stored["id"]
    after = await call(client, "memory/stats")
    assert after["memories"] == before["memories"] + 1
    with pytest.raises(JsonRpcException) as refused:
        await call(client, "memory/promote", id=stored["id"], to="/etc/passwd.md")
    assert refused.value.code == -32602 and "to" in str(refused.value)


async def test_prompt_time_briefing_has_a_relevance_floor(client):
    """standing false (the prompt hook's briefing): a prompt nothing in the project answers
    gets nothing; one a memory answers gets that memory."""
    await notes_indexed(client)
    texts = [
        ("The payment client retries a failed charge 3 times with exponential backoff", "fact"),
        ("Money amounts are stored as integer cents, never as floats", "convention"),
    ]
    ingested = await call(  # answered once every item is embedded: the floor reads cosines
        client, "memory/ingest", items=[{"text": t, "type": k} for t, k in texts]
    )
    retry = ingested["ids"][0]
    for prompt in ("Write a haiku about debugging", "What is a tuple?"):
        idle = await call(client, "memory/context", prompt=prompt, standing=False)
        assert (idle["entries"], idle["markdown"]) == ([], ""), prompt
    asked = await call(
        client,
        "memory/context",
        prompt="How many times does the payment client retry a failed charge?",
        standing=False,
    )
    assert [e["memory"]["id"] for e in asked["entries"]][:1] == [retry]
    assert all(e["section"] == "relevant" for e in asked["entries"])
