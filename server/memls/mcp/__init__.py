"""The agents' front: `memls mcp`, an MCP server (stdio) over the same engine handle as the
editor's LSP front and the CLI. See docs/mcp.md."""

from __future__ import annotations


def serve_stdio(data_dir: str | None = None, project: str | None = None) -> None:
    """Serve MCP on stdin/stdout (imports the SDK only when called)."""
    from memls.mcp.server import serve_stdio as serve

    serve(data_dir, project)
