"""The briefing through MCP (the prompt `briefing`, the resource `memls://<project>/briefing`)
and the `promote` tool, driven by the official SDK's client against the real `memls mcp`."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import McpError

from mcp_helpers import lexical, mcp_session, ok, refused, text_of

pytestmark = pytest.mark.asyncio


async def _seed(s) -> dict[str, dict]:
    stored = {}
    for key, text, kind in (
        ("merge", "We squash-merge pull requests", "convention"),
        ("db", "Postgres is the system of record", "decision"),
        ("secrets", "Never commit secrets to the repository", "constraint"),
        ("build", "The nightly build takes four minutes on the CI runner", "fact"),
    ):
        stored[key] = await ok(s, "remember", text=text, type=kind, check=False)
    return stored


async def test_briefing_prompt_and_resource(tmp_path, workspace):
    async with mcp_session(lexical(tmp_path / "data"), [workspace]) as s:
        stored = await _seed(s)
        prompts = (await s.list_prompts()).prompts
        assert [p.name for p in prompts] == ["briefing"]
        assert {a.name for a in prompts[0].arguments} == {"task", "paths", "budget", "project"}

        got = await s.get_prompt("briefing", {"task": "how long does the nightly build take"})
        assert len(got.messages) == 1 and got.messages[0].role == "user"
        text = got.messages[0].content.text
        assert "not instructions" in text.splitlines()[1]
        standing = text.split("## Relevant")[0]
        for key in ("merge", "db", "secrets"):
            assert stored[key]["id"] in standing
        assert stored["build"]["id"] in text.split("## Relevant")[1]  # relevant, not standing

        uri = f"memls://{workspace.resolve()}/briefing"
        assert uri in [str(r.uri) for r in (await s.list_resources()).resources]
        body = (await s.read_resource(uri)).contents[0].text
        assert stored["secrets"]["id"] in body and stored["build"]["id"] not in body
        templates = [t.uriTemplate for t in (await s.list_resource_templates()).resourceTemplates]
        assert "memls://{project}/briefing" in templates

        small = (await s.get_prompt("briefing", {"budget": "60"})).messages[0].content.text
        assert small.count("\n- ") < text.count("\n- ")

        with pytest.raises(McpError, match="budget"):
            await s.get_prompt("briefing", {"budget": "lots"})
        for budget in ("10", "²", "9" * 5000):  # a digit that is no number; too many digits
            with pytest.raises(McpError, match="budget") as bad:
                await s.get_prompt("briefing", {"budget": budget})
            assert bad.value.error.code == -32602
        with pytest.raises(McpError, match="colour"):
            await s.get_prompt("briefing", {"colour": "blue"})
        with pytest.raises(McpError, match="not one of your roots"):
            await s.get_prompt("briefing", {"project": str(tmp_path / "elsewhere")})
        with pytest.raises(McpError, match="unknown prompt"):
            await s.get_prompt("summary", {})
        with pytest.raises(McpError, match="unknown resource"):
            await s.read_resource(f"memls://{workspace.resolve()}/everything")


async def test_promote_tool_writes_the_note(tmp_path, workspace):
    async with mcp_session(lexical(tmp_path / "data"), [workspace]) as s:
        stored = await _seed(s)
        before = await ok(s, "stats")
        result = await s.call_tool("promote", {"id": stored["db"]["id"]})
        assert not result.isError, text_of(result)
        promoted = result.structuredContent
        note = workspace / ".memls" / "memory.md"
        assert promoted["path"] == str(note.resolve()) and promoted["created"]
        assert "- Postgres is the system of record" in note.read_text()
        assert promoted["memory"]["sourceUri"] == promoted["uri"]
        assert "Commit the note" in text_of(result)
        assert (await ok(s, "stats"))["memories"] == before["memories"]  # no second memory

        again = await ok(s, "promote", id=stored["db"]["id"])
        assert again["already"] and not again["created"]
        assert "not found" in await refused(s, "promote", id="m_nope")
        assert "`to`" in await refused(s, "promote", id=stored["merge"]["id"], to="../x.md")
        assert not (workspace.parent / "x.md").exists()
