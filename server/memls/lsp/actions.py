"""Code actions on contradiction diagnostics and the commands they run."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from memls.lsp import diagnostics as diag
from memls.lsp.server import MemlsServer


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

    result = await ls.window_show_document_async(
        types.ShowDocumentParams(
            uri=get("uri"), take_focus=True, selection=diag.parse_range(get("range"))
        )
    )
    return {"success": bool(getattr(result, "success", False))}
