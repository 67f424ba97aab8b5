"""`remember` with citations and `recall` showing what happened to the cited code, through
the official SDK's client and a real `memls mcp` process."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mcp_helpers import lexical, mcp_session, ok, refused, text_of

pytestmark = pytest.mark.asyncio

SOURCE = "def deploy(env):\n    run('make release', env)\n    notify(env)\n"


async def test_recall_marks_a_memory_whose_cited_code_changed(tmp_path, workspace):
    data = lexical(tmp_path / "data")
    (workspace / "ops.py").write_text(SOURCE)
    async with mcp_session(data, [workspace]) as s:
        stored = await ok(
            s,
            "remember",
            text="Deploys run make release before notifying",
            citations=[{"path": "ops.py", "symbol": "deploy"}],
            check=False,
        )
        cited = stored["memory"]["cites"]
        assert cited[0] == {"path": "ops.py", "lines": "1-3", "symbol": "deploy", "state": "fresh"}
        (workspace / "ops.py").write_text(SOURCE.replace("make release", "make ship"))
        checked = subprocess.run(
            [
                sys.executable,
                "-m",
                "memls",
                "--data-dir",
                str(data),
                "check",
                "--project",
                str(workspace),
            ],
            capture_output=True,
            text=True,
        )
        # `memls check` exits 1 on a finding: the cited code changed
        assert checked.returncode == 1 and "1 stale" in checked.stdout, checked.stderr
        result = await s.call_tool("recall", {"query": "how do deploys run"})
        assert not result.isError
        hit = result.structuredContent["results"][0]
        assert hit["stale"] is True and hit["cites"][0]["state"] == "changed"
        text = text_of(result)
        assert "STALE" in text and "cites ops.py:1-3 (deploy): changed" in text
        assert "+run('make ship', env)" in text

        message = await refused(
            s, "remember", text="x", citations=[{"path": "../elsewhere.py"}], check=False
        )
        assert "citations[0].path" in message
