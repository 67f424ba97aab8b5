"""One owner per data directory; every other process reaches it through its socket.

    from memls.daemon import open_engine
    engine = open_engine(directory, front="lsp", serve=True)   # Engine or RemoteEngine

See handle.py for takeover (`reconnect`), owner.py for the socket protocol, client.py for
RemoteEngine.
"""

from memls.daemon.client import OwnerExited, OwnerSilent, OwnerUnavailable, RemoteEngine
from memls.daemon.handle import EngineHandle, LocalEngine, open_engine, reconnect
from memls.daemon.owner import OwnerServer
from memls.daemon.sockets import SOCKET_NAME, socket_path

__all__ = [
    "SOCKET_NAME",
    "EngineHandle",
    "LocalEngine",
    "OwnerExited",
    "OwnerServer",
    "OwnerSilent",
    "OwnerUnavailable",
    "RemoteEngine",
    "open_engine",
    "reconnect",
    "socket_path",
]
