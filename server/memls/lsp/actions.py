"""Code actions on contradiction diagnostics and the commands they run."""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from memls.lsp import diagnostics as diag
from memls.lsp.server import MemlsServer

MAX_URI = 4096  # as the URIs of memory/* requests


def _argument(args: tuple[Any, ...]) -> Any:
    """The one argument of a command, as clients send it (a list of one, or the object)."""
    arg = args[0] if args else {}
    if isinstance(arg, list):
        arg = arg[0] if arg else {}
    return arg


def code_action(ls: MemlsServer, params: types.CodeActionParams) -> Any:
    return diag.actions(list(params.context.diagnostics)) or None


async def resolve(ls: MemlsServer, *args: Any) -> Any:
    """memls.resolve {project, a, b, action}: supersede / dismiss / resolve a pair."""
    arg = _argument(args)
    data = (
        dict(arg)
        if isinstance(arg, dict)
        else {k: getattr(arg, k) for k in ("project", "a", "b", "action") if hasattr(arg, k)}
    )
    return await ls.request("memory/resolve", data)


async def open_other(ls: MemlsServer, *args: Any) -> Any:
    """memls.open {uri, range}: show the other statement of a pair."""
    arg = _argument(args)

    def get(key: str) -> Any:
        return arg.get(key) if isinstance(arg, dict) else getattr(arg, key, None)

    uri, where = get("uri"), get("range")
    if not isinstance(uri, str) or not uri.strip() or len(uri) > MAX_URI:
        raise JsonRpcInvalidParams(
            message=f"memls.open: uri: must be a document URI (a string of 1-{MAX_URI} characters)",
            data={"field": "uri"},
        )
    if where is not None and not isinstance(where, str):
        raise JsonRpcInvalidParams(
            message="memls.open: range: must be a range such as '3:0-4:12'",
            data={"field": "range"},
        )
    try:
        shown = types.ShowDocumentParams(
            uri=uri, take_focus=True, selection=diag.parse_range(where)
        )
    except (ValueError, TypeError):  # a line or column out of LSP's range
        raise JsonRpcInvalidParams(
            message="memls.open: range: line or column out of range", data={"field": "range"}
        ) from None
    try:
        result = await ls.window_show_document_async(shown)
    except JsonRpcException:  # the client could not show it: say so, it is not our fault
        return {"success": False}
    return {"success": bool(getattr(result, "success", False))}
