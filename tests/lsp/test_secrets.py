"""Secrets and near duplicates through a real LSP client (the daemon, `memls serve --stdio`):
a store holding a secret is refused with -32602 naming the kind and where, and nothing is
written; with redact it is stored redacted; a note line holding one is indexed redacted and
gets a diagnostic on that line; a restatement is merged into the earlier memory once
indexed (`memory/changed` op "merge")."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls import uris
from pygls.exceptions import JsonRpcException

from lsp_helpers import (
    AGENTS,
    CHANGED,
    DIAGNOSTICS,
    call,
    note_units,
    notes_indexed,
    wait_until,
)

SLACK = "xoxb-" + "483920175566-2039485761234-" + "q7Rt2Zx9Lm4Kp8Vw3Nb6Yc1H"  # FAKE


@pytest.mark.asyncio
async def test_store_with_a_secret_is_refused_or_redacted(client):
    await notes_indexed(client)
    before = await call(client, "memory/list", limit=1000)
    text = f"Alerts go to #oncall via the bot token {SLACK}"
    with pytest.raises(JsonRpcException) as err:
        await client.protocol.send_request_async("memory/store", {"text": text})
    assert err.value.code == -32602
    assert "slack-token" in str(err.value) and "line 1, column 40" in str(err.value)
    after = await call(client, "memory/list", limit=1000)
    assert after == before  # nothing stored
    stored = await call(client, "memory/store", text=text, redact=True)
    assert stored["created"]
    assert stored["memory"]["content"] == (
        "Alerts go to #oncall via the bot token [REDACTED:slack-token]"
    )


@pytest.mark.asyncio
async def test_a_note_line_with_a_secret_is_indexed_redacted_with_a_diagnostic(client):
    await notes_indexed(client)
    agents = uris.from_fs_path(str(client.root / "AGENTS.md"))
    text = AGENTS + f"- The notifier posts with SLACK_BOT_TOKEN={SLACK}\n"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=agents, language_id="markdown", version=1, text=text
            )
        )
    )
    diags = await wait_until(
        client, DIAGNOSTICS, lambda: client.diagnostics.get(agents), what="a secret diagnostic"
    )
    (d,) = [x for x in diags if x.code == "secret"]
    line = len(AGENTS.splitlines())  # the line added
    assert d.range.start.line == line and d.severity == types.DiagnosticSeverity.Warning
    assert text.splitlines()[line][d.range.start.character : d.range.end.character] == SLACK
    assert "slack-token" in d.message
    units = await note_units(client)
    assert "The notifier posts with SLACK_BOT_TOKEN=[REDACTED:slack-token]" in units
    assert not any(SLACK in content for content in units)
    # the secret taken out of the note: its diagnostic clears
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=agents, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=AGENTS)],
        )
    )
    await wait_until(
        client,
        DIAGNOSTICS,
        lambda: not [x for x in client.diagnostics.get(agents, []) if x.code == "secret"],
        what="the secret diagnostic cleared",
    )


@pytest.mark.asyncio
async def test_a_restatement_is_merged_into_the_earlier_memory(client):
    await notes_indexed(client)
    first = await call(
        client,
        "memory/store",
        text="The monorepo is managed with pnpm workspaces.",
        type="decision",
    )
    again = await call(
        client,
        "memory/store",
        text="We manage the monorepo with pnpm workspaces.",
        type="decision",
    )
    assert again["created"] and again["id"] != first["id"]  # acknowledged at once

    async def kept():
        listed = await call(client, "memory/list", limit=1000)
        return {m["id"]: m for m in listed["memories"]}

    memories = await wait_until(
        client, CHANGED, kept, lambda m: again["id"] not in m, what="the restatement merged"
    )
    assert memories[first["id"]]["seenAgain"] == 1
    forced = await call(
        client,
        "memory/store",
        text="We manage the monorepo with pnpm workspaces.",
        type="decision",
        force=True,
    )
    assert forced["created"] and forced["id"] != first["id"]
