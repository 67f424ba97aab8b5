"""The agents' calls as the owner runs them.

`memls mcp` is a light relay (`memls.mcp.relay`): it answers `initialize`, `tools/list` and
the other lists itself, at once, and hands every MCP request that needs the store to the
process that owns it, as `$/mcp` on the owner socket: the MCP method, its params, the scope
the relay knows (its `--project`, the client's roots, the project of its working directory)
and the client's name. This module answers it with the MCP result, as plain JSON data:

- `tools/call`: the tool's arguments checked against its params Struct (naming the bad
  field), the project chosen (`agent.project`) and watched (its notes indexed before the
  first answer), the work done, and the result as MCP wants it: the rendered text, the lean
  structured result (`agent.wire`) and the engine's share of the time in `_meta`. A refusal is
  a tool result with `isError`, as MCP asks of tool errors.
- `resources/list`, `resources/read`, `prompts/get`: the briefing and the conventions
  (`agent.documents`); a bad request raises InvalidInput, which the relay answers as -32602.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from memls import protocol
from memls.agent import documents
from memls.agent import project as scope
from memls.agent.tools import BY_NAME, TOOLS
from memls.errors import InvalidInput, MemlsError

log = logging.getLogger("memls.agent")

ENGINE_MS = "memls/engineMs"  # _meta of a tool result: the engine's share of the call (ms)
WATCH_WAIT = 10.0  # s a first call waits for its project's notes to be read


def describe(exc: MemlsError) -> str:
    if isinstance(exc, InvalidInput):
        where = f"argument `{exc.field}`: " if exc.field else ""
        return f"invalid input: {where}{exc.message}; nothing was changed"
    where = f" (`{exc.field}`)" if exc.field else ""
    return f"{exc.kind.replace('_', ' ')}{where}: {exc.message}"


def _error(message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}], "isError": True}


def _project(engine: Any, call: protocol.McpCallParams, argument: object) -> str:
    given = call.scope
    project = scope.choose(
        pinned=given.pinned, roots=given.roots, argument=argument, workdir=given.workdir
    )
    if Path(project).is_absolute() and Path(project).is_dir():
        engine.watch(protocol.WatchParams(project=project, wait=WATCH_WAIT))
    return project


def allowed(call: protocol.McpCallParams) -> list[str]:
    given = call.scope
    if given.pinned is not None:
        return [given.pinned]
    if given.roots:
        return list(given.roots)
    return [given.workdir] if given.workdir else []


def tool_call(engine: Any, call: protocol.McpCallParams) -> dict[str, Any]:
    params = call.params or {}
    name = params.get("name")
    tool = BY_NAME.get(name) if isinstance(name, str) else None
    if tool is None:
        return _error(f"unknown tool `{name}`; the tools are: " + ", ".join(t.name for t in TOOLS))
    try:
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise InvalidInput("the arguments must be an object", field=None)
        data = dict(arguments)
        wanted = set(tool.input_schema["properties"])
        for unknown in data:
            if unknown not in wanted:
                raise InvalidInput(
                    f"`{tool.name}` takes no such argument; it takes: {', '.join(sorted(wanted))}",
                    field=unknown,
                )
        data["project"] = _project(engine, call, data.get("project"))
        data.update(tool.fixed)
        parsed: Any = protocol.parse(tool.params, data)
        started = time.perf_counter()
        result = (tool.work or (lambda e, p: getattr(e, tool.method)(p)))(engine, parsed)
        engine_ms = (time.perf_counter() - started) * 1000
    except MemlsError as exc:
        return _error(describe(exc))
    except Exception as exc:
        log.exception("memls: tool %s failed", tool.name)
        return _error(f"internal error in `{tool.name}`: {type(exc).__name__}: {exc}")
    return {
        "content": [{"type": "text", "text": tool.render(result)}],
        "structuredContent": protocol.to_wire(result),
        "isError": False,
        "_meta": {ENGINE_MS: round(engine_ms, 3)},
    }


def _arguments(params: dict[str, Any], key: str) -> dict[str, str]:
    raw = params.get(key)
    if raw is None:
        return {}
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise InvalidInput("the prompt's arguments must be an object of strings", field=key)
    return dict(raw)


def handle(engine: Any, call: protocol.McpCallParams) -> Any:
    """The MCP result of one relayed request (InvalidInput for a request MCP would refuse)."""
    params = call.params or {}
    if call.method == "tools/call":
        return tool_call(engine, call)
    if call.method == "resources/list":
        return {"resources": documents.resources(allowed(call))}
    if call.method == "resources/read":
        address = params.get("uri")
        if not isinstance(address, str):
            raise InvalidInput("a resource's uri is required", field="uri")
        named, name = documents.parse_address(address)
        return documents.read(engine, _project(engine, call, named), name, address)
    if call.method == "prompts/get":
        if params.get("name") != documents.PROMPT["name"]:
            raise InvalidInput(
                f"unknown prompt {params.get('name')!r}; memls offers: {documents.PROMPT['name']}",
                field="name",
            )
        arguments = _arguments(params, "arguments")
        project = _project(engine, call, arguments.get("project"))
        return documents.get_prompt(engine, project, arguments)
    raise InvalidInput(f"memls does not relay {call.method!r}", field="method")
