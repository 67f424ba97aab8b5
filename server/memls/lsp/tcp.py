"""The long-lived daemon over loopback TCP: one shared engine, a server per connection."""

from __future__ import annotations

import asyncio
import threading

from pygls.io_ import run_async

from memls.daemon.handle import open_engine
from memls.lsp.base import log
from memls.lsp.features import build


def serve_tcp(host: str, port: int, token: str, data_dir: str | None = None) -> None:
    """The long-lived daemon: owns the store from the start (the CLI and other windows go
    through its socket at once), and speaks LSP on loopback TCP. Each connection gets its
    own server (its own replies, workspace and notes) over the one shared engine, and must
    initialize with the token before anything else is answered. A client leaving does not
    stop the daemon."""
    engine = open_engine(data_dir, front="lsp", serve=True)

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server = build(data_dir, token=token)
        server.engine, server.owns_engine = engine, False
        server.ready.set()
        engine.listeners.append(server._engine_event)
        server.protocol.set_writer(writer)
        try:
            await run_async(stop_event=threading.Event(), reader=reader,
                            protocol=server.protocol, logger=log,
                            error_handler=server.report_server_error)
        finally:
            engine.listeners.remove(server._engine_event)
            server._loop = None
            server.pool.shutdown(wait=False)
            writer.close()

    async def main() -> None:
        listener = await asyncio.start_server(connection, host, port)
        async with listener:
            await listener.serve_forever()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    finally:
        engine.close()
