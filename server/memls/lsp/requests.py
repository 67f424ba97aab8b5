"""memory/* requests: the project settled, the params decoded once, the engine call run on the
engine pool, errors mapped to JSON-RPC (-32602 naming the field for bad input)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams, JsonRpcServerError

from memls import limits, protocol
from memls.errors import InvalidInput, MemlsError
from memls.lsp.base import ServerBase
from memls.lsp.wire import ERROR_CODES

READS = {
    "query",
    "get",
    "list",
    "forgotten",
    "conflicts",
    "stats",
    "audit",
    "health",
    "doctor",
    "dead_letters",
    "check_pair",
}
"""Engine methods that are safe to retry after a takeover (a write's outcome is unknown)."""
ORIGIN = re.compile(r"[A-Za-z0-9_-]{1,40}")
"""`origin`: who inside the client asks (a language-model tool); audit front lsp:<origin>."""
REFRESHING = ("memory/resolve", "memory/supersede", "memory/forget", "memory/review")


class Requests(ServerBase):
    async def run(self, method: str, params: Any, origin: str | None = None) -> Any:
        """Run one engine method on the engine pool, after the engine is open. With `origin`,
        the audit log names the front `lsp:<origin>` where this process owns the store."""
        await self.ready.wait()
        if self.engine is None:
            raise JsonRpcServerError(
                f"the memls engine could not start: {self.open_error}", ERROR_CODES["store"]
            )
        from memls.daemon.handle import OwnerExited, reconnect  # loaded with the engine

        if self._takeover.locked():  # a takeover is under way: the new owner gets this
            async with self._takeover:  # window's open buffers before anything else
                pass
        loop = asyncio.get_running_loop()
        engine = self.engine
        if self.closed:
            raise JsonRpcServerError("the connection has ended", ERROR_CODES["error"])
        call = getattr(engine, method)
        acting_for = getattr(engine, "acting_for", None)  # a LocalEngine; a RemoteEngine's
        if origin is not None and acting_for is not None:  # front is its connection's

            def call(p: Any) -> Any:
                with acting_for(f"lsp:{origin}"):
                    return getattr(engine, method)(p)

        try:
            return await loop.run_in_executor(self.pool, call, params)
        except OwnerExited:
            # The owning process went away: take over (or join the next owner), then retry
            # reads; a write's outcome is unknown, so it is reported, not repeated.
            async with self._takeover:
                if self.engine is engine:  # not yet replaced by a concurrent call
                    self.engine = await loop.run_in_executor(self.pool, reconnect, engine)
                    await self.open_buffers_again()
            if method in READS:
                return await loop.run_in_executor(self.pool, getattr(self.engine, method), params)
            raise

    async def request(self, name: str, raw: Any) -> Any:
        method = protocol.METHODS[name]
        try:
            data = await self._scoped(name, method, raw)
            origin = data.pop("origin", None)
            if origin is not None and not (isinstance(origin, str) and ORIGIN.fullmatch(origin)):
                raise InvalidInput("must be 1-40 letters, digits, '-' or '_'", field="origin")
            params = protocol.parse(method.params, data)
            result = await self.run(method.engine, params, origin)
        except InvalidInput as exc:
            detail: dict[str, Any] = {"field": exc.field}
            if isinstance(exc, limits.LimitExceeded):
                detail["limit"] = exc.limit
            raise JsonRpcInvalidParams(
                message=f"{exc.field}: {exc.message}" if exc.field else exc.message, data=detail
            ) from None
        except MemlsError as exc:
            raise JsonRpcServerError(
                str(exc),
                ERROR_CODES.get(exc.kind, -32000),
                data={"kind": exc.kind, "field": exc.field},
            ) from None
        if name in REFRESHING:
            self.schedule_refresh(getattr(params, "project", None))
        return protocol.to_wire(result)

    async def _scoped(self, name: str, method: protocol.Method, raw: Any) -> dict[str, Any]:
        """The params with their project settled: a note's folder for syncNote; else the
        explicit project, else the folder of `uri`, else the only folder."""
        if raw is None:
            raw = {}
        if not isinstance(raw, dict):
            raise InvalidInput("params must be an object", field=None)
        data = dict(raw)
        if name in ("memory/syncNote", "memory/citations"):  # its uri is the document itself
            uri = data.get("uri")
            folder = self.projects.containing(uri) if isinstance(uri, str) else None
            if folder is None:
                raise InvalidInput("the document is outside the workspace folders", field="uri")
            data["project"] = folder.project
            return data
        uri = data.pop("uri", None)  # names the document, for the project only
        if "project" in method.params.__struct_fields__:
            data["project"] = self.projects.resolve({"project": data.get("project"), "uri": uri})
            if data["project"] not in self.used_projects:
                self.used_projects.add(data["project"])
                await self.rescope()  # before the request: its notifications reach us
        return data
