"""The MCP front through the SDK's stdio client: `remember` with a secret is a tool error
naming the kind and where (nothing stored); with redact it is stored redacted; a restatement
is answered with the existing memory."""

from __future__ import annotations

import pytest

from mcp_helpers import lexical, mcp_session, ok, refused

pytestmark = pytest.mark.asyncio

STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"  # FAKE, in Stripe's format


async def test_remember_refuses_a_secret_and_redacts_when_asked(tmp_path, workspace):
    data = lexical(tmp_path / "data")
    text = f"Billing service uses Stripe key {STRIPE} in production."
    async with mcp_session(data, [workspace]) as s:
        message = await refused(s, "remember", text=text)
        assert "stripe-access-key" in message and "line 1, column 33" in message
        assert "`text`" in message
        stats = await ok(s, "stats")
        assert stats["memories"] == 0
        stored = await ok(s, "remember", text=text, redact=True, check=False)
        assert stored["memory"]["text"] == (
            "Billing service uses Stripe key [REDACTED:stripe-access-key] in production."
        )


async def test_remember_a_restatement_returns_the_existing_memory(tmp_path, workspace):
    data = tmp_path / "data"  # the full engine: the near-duplicate rule needs the models
    async with mcp_session(data, [workspace]) as s:
        first = await ok(
            s, "remember", text="Static sites are hosted on Cloudflare Pages.", type="decision"
        )
        again = await s.call_tool(
            "remember",
            {"text": "We host the static sites on Cloudflare Pages.", "type": "decision"},
        )
        assert not again.isError
        assert again.structuredContent["id"] == first["id"]
        assert again.structuredContent["duplicate"] == "near"
        assert "the same claim in other words" in again.content[0].text
