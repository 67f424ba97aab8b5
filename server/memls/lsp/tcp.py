"""The long-lived daemon over loopback TCP: one shared engine, a server per connection."""

from __future__ import annotations

import asyncio
import signal

from memls import limits
from memls.config import apply_limits
from memls.daemon.handle import open_engine
from memls.lsp import transport
from memls.lsp.base import log
from memls.lsp.features import build


def serve_tcp(host: str, port: int, token: str, data_dir: str | None = None) -> None:
    """The long-lived daemon: owns the store from the start (the CLI and other windows go
    through its socket at once), and speaks LSP on loopback TCP. Each connection gets its
    own server (its own replies, workspace and notes) over the one shared engine, and must
    initialize with the token before anything else is answered (`transport`). A client
    leaving (`exit`, with or without `shutdown`) does not stop the daemon: only SIGTERM or
    SIGINT do."""
    apply_limits(data_dir)
    engine = open_engine(data_dir, front="lsp", serve=True)
    writers: dict[asyncio.StreamWriter, asyncio.Task] = {}

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        writers[writer] = task
        server = build(data_dir, token=token)
        server.engine, server.owns_engine = engine, False
        server.connection_only, server.close_connection = True, writer.close
        server.ready.set()
        engine.listeners.append(server._engine_event)
        server.protocol.set_writer(writer)
        try:
            await transport.run_connection(server, reader, gated=token is not None)
        finally:
            engine.listeners.remove(server._engine_event)
            server.closed = True
            for background in list(server._tasks):  # its notes indexing, watchers
                background.cancel()
            server._loop = None
            server.pool.shutdown(wait=False)
            writer.close()
            writers.pop(writer, None)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        listener = await asyncio.start_server(
            connection, host, port, limit=limits.MAX_HEADER_BYTES + 1
        )
        await stop.wait()
        log.info("memls: stopping the daemon (signal)")
        listener.close()
        pending = list(writers.values())
        for writer in list(writers):
            writer.close()  # each connection's reader ends, and its task with it
        if pending:
            await asyncio.wait(pending, timeout=10)

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    finally:
        engine.close()
