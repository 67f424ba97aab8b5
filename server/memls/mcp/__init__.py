"""The agents' front: `memls mcp`, an MCP server on stdio that starts light (the standard
library only) and relays to the process that owns the store (`relay`, `lines`). What the
calls do, and what the model reads, is `memls.agent`'s. See docs/mcp.md."""

from __future__ import annotations


def serve_stdio(data_dir: str | None = None, project: str | None = None) -> int:
    """Serve MCP on stdin/stdout until the client closes it."""
    from memls.mcp.relay import main

    return main(data_dir, project)
