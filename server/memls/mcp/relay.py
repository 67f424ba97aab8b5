"""`memls mcp`: the agents' front, an MCP server on stdio that starts light and relays.

An agent starts its MCP servers without waiting for them and sends its first model request
when it is ready itself, so a server slow to list its tools is missing from that request.
This front imports the standard library only (the engine, msgspec, pydantic and the MCP SDK
stay out of it): it answers `initialize`, `ping`, `tools/list`, `prompts/list` and
`resources/templates/list` at once from `listing.json` (`memls.agent.listing`), and relays
`tools/call`, `resources/list`, `resources/read` and `prompts/get` to the process that owns
the store (`$/mcp` on the owner socket, run there by `memls.agent.calls`). When nobody serves
the data directory it starts the daemon (`memls serve --socket`), which goes on watching the
project's notes after the session ends; it never owns the store itself. Lines are checked
first (`memls.mcp.lines`).

The project of each call (`memls.agent.project`): `--project`, else the client's roots (MCP
`roots/list`, asked once the client says it is initialized, again on `list_changed`), else,
for a client that sends no roots (Codex), the project that holds this process's working
directory: the nearest folder at or above it that is a git repository or holds AGENTS.md,
CLAUDE.md or `.memls/`. Every result names its project.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from urllib.parse import unquote, urlsplit

from memls import reach
from memls.mcp import lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

PROTOCOLS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first
DEFAULT_MAX_FRAME_BYTES = 8 * 1024 * 1024  # as memls.limits
START_WAIT = 30.0  # s a call waits for a daemon this process started
CALL_TIMEOUT = 300.0  # s a relayed call may take
ROOTS_TIMEOUT = 10.0
MARKERS = (".git", "AGENTS.md", "CLAUDE.md", ".memls")
CAPABILITIES = {
    "tools": {"listChanged": False},
    "resources": {"subscribe": False, "listChanged": False},
    "prompts": {"listChanged": False},
}


def load_listing() -> dict[str, Any]:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "listing.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def default_data_dir() -> str:
    """$MEMLS_DATA_DIR, else the user's data directory for memls (as `memls.config`)."""
    chosen = os.environ.get("MEMLS_DATA_DIR", "").strip()
    if chosen:
        return os.path.realpath(os.path.expanduser(chosen))
    import platformdirs

    return os.path.realpath(platformdirs.user_data_dir("memls"))


def frame_limit(data_dir: str) -> int:
    """[limits] max_frame_bytes of the data directory's config.toml (the LSP front's limit)."""
    try:
        import tomllib

        with open(os.path.join(data_dir, "config.toml"), "rb") as f:
            value = tomllib.load(f).get("limits", {}).get("max_frame_bytes")
    except (OSError, ValueError):
        return DEFAULT_MAX_FRAME_BYTES
    return value if isinstance(value, int) and value > 0 else DEFAULT_MAX_FRAME_BYTES


def workdir_project(start: str) -> str | None:
    """The project that holds `start`: the nearest folder at or above it that is a git
    repository or holds a project's notes; None when there is none."""
    here = os.path.realpath(start)
    while True:
        if any(os.path.exists(os.path.join(here, marker)) for marker in MARKERS):
            return here
        above = os.path.dirname(here)
        if above == here:
            return None
        here = above


def pinned_project(value: str) -> str:
    """`--project`: an existing folder (relative to the working directory too) is keyed by
    its resolved absolute path, anything else as given."""
    path = os.path.expanduser(value)
    return os.path.realpath(path) if os.path.isdir(path) else value.strip()


def root_path(uri: Any) -> str | None:
    """A root's folder (its resolved absolute path), from its `file://` URI."""
    if not isinstance(uri, str):
        return None
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return os.path.realpath(unquote(parts.path))


class Relay:
    """One MCP session on stdio: its lines, the client's roots, the calls relayed."""

    def __init__(self, data_dir: str, pinned: str | None, out: BinaryIO) -> None:
        self.data_dir = data_dir
        self.pinned = pinned
        self.workdir = None if pinned is not None else workdir_project(os.getcwd())
        self.out = out
        self.listing = load_listing()
        self.client = "unknown"
        self.roots: list[str] | None = None  # None: not asked (or no roots capability)
        self.roots_ready = threading.Event()
        self.roots_ready.set()
        self.asks_roots = False
        self._out_lock = threading.Lock()
        self._state = threading.Lock()
        self._waiting: dict[str, tuple[threading.Event, list[Any]]] = {}
        self._asked = 0
        self._daemon: threading.Thread | None = None
        self._conn: reach.Connection | None = None  # kept between calls, one call at a time
        self._conn_lock = threading.Lock()

    # ------------------------------------------------------------ output

    def send(self, message: dict[str, Any]) -> None:
        data = lines.encode(message)
        with self._out_lock:
            self.out.write(data)
            self.out.flush()

    def result(self, msg_id: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    # ------------------------------------------------------------ the owner

    def ensure_daemon(self) -> None:
        """Start the daemon in the background now, so that it serves by the first call."""

        def up() -> None:
            try:
                reach.connect(self.data_dir, self.front, 5.0, START_WAIT).close()
            except (reach.Unavailable, OSError):
                pass  # the call that needs it says so

        self._daemon = threading.Thread(target=up, name="memls-mcp-daemon", daemon=True)
        self._daemon.start()

    @property
    def front(self) -> str:
        return f"mcp:{self.client}"

    def scope(self) -> dict[str, Any]:
        self.roots_ready.wait(ROOTS_TIMEOUT)
        return {"pinned": self.pinned, "roots": self.roots, "workdir": self.workdir}

    def owner(self, method: str, params: dict[str, Any]) -> Any:
        """One request to the owner on the session's connection (made again, and the daemon
        started and waited for, when the owner went away)."""
        if self._daemon is not None:
            self._daemon.join(START_WAIT)
        with self._conn_lock:
            if self._conn is not None and not self._conn.alive():
                self._conn.close()
                self._conn = None
            for attempt in range(2):
                if self._conn is None:
                    self._conn = reach.connect(self.data_dir, self.front, CALL_TIMEOUT, START_WAIT)
                try:
                    return self._conn.request(method, params)
                except reach.Unavailable:
                    self._conn.close()
                    self._conn = None
                    if attempt or method == "$/mcp" and params.get("method") == "tools/call":
                        raise  # a tool's outcome is unknown once sent: reported, not repeated
            raise reach.Unavailable("unreachable")

    def relay(self, msg_id: Any, method: str, params: dict[str, Any]) -> None:
        try:
            self.result(
                msg_id,
                self.owner("$/mcp", {"method": method, "params": params, "scope": self.scope()}),
            )
        except reach.Failed as exc:
            body = exc.body
            invalid = body.get("kind") in ("invalid_params", "not_found")
            code = lines.INVALID_PARAMS if invalid else lines.INTERNAL_ERROR
            field = body.get("field")
            text = str(body.get("message", "error"))
            if invalid:  # as a tool's refusal says it (memls.agent.calls.describe)
                text = f"invalid input: {f'argument `{field}`: ' if field else ''}{text}"
                text += "; nothing was changed"
            self.send(lines.error(msg_id, code, text, {"field": field} if field else None))
        except (reach.Unavailable, OSError) as exc:
            text = f"the memls daemon does not answer ({exc}); see {self.data_dir}/daemon.log"
            if method == "tools/call":
                self.result(msg_id, {"content": [{"type": "text", "text": text}], "isError": True})
            else:
                self.send(lines.error(msg_id, lines.INTERNAL_ERROR, text))

    def watch_known(self) -> None:
        """Name the session's projects to the owner, so their notes are read before the
        first call needs them."""
        known = (
            [self.pinned]
            if self.pinned
            else (self.roots or ([self.workdir] if self.workdir else []))
        )
        for project in known:
            if project and os.path.isdir(project):
                try:
                    self.owner("memory/watch", {"project": project, "wait": 0})
                except (reach.Unavailable, reach.Failed, OSError):
                    return

    # ------------------------------------------------------------ roots

    def ask_roots(self) -> None:
        """roots/list to the client; the answer arrives on stdin (`answered`)."""
        with self._state:
            self._asked += 1
            ask_id = f"memls-roots-{self._asked}"
            self._waiting[ask_id] = (threading.Event(), [])
            self.roots_ready.clear()
        self.send({"jsonrpc": "2.0", "id": ask_id, "method": "roots/list"})
        threading.Thread(target=self._await_roots, args=(ask_id,), daemon=True).start()

    def _await_roots(self, ask_id: str) -> None:
        event, box = self._waiting[ask_id]
        event.wait(ROOTS_TIMEOUT)
        with self._state:
            self._waiting.pop(ask_id, None)
        answer = box[0] if box else {}
        listed = (answer.get("result") or {}).get("roots") if isinstance(answer, dict) else None
        found: list[str] = []
        for root in listed if isinstance(listed, list) else []:
            path = root_path(root.get("uri") if isinstance(root, dict) else None)
            if path is not None and path not in found:
                found.append(path)
        self.roots = found
        self.roots_ready.set()
        self.watch_known()

    def answered(self, message: dict[str, Any]) -> None:
        with self._state:
            waiting = self._waiting.get(str(message.get("id")))
        if waiting is not None:
            waiting[1].append(message)
            waiting[0].set()

    # ------------------------------------------------------------ messages

    def handle(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            self.answered(message)
            return
        method = message["method"]
        params = message.get("params") or {}
        if "id" not in message:
            if method == "notifications/initialized":
                if self.asks_roots and self.pinned is None:
                    self.ask_roots()
                else:
                    threading.Thread(target=self.watch_known, daemon=True).start()
            elif method == "notifications/roots/list_changed" and self.asks_roots:
                self.ask_roots()
            return
        msg_id = message["id"]
        if method == "initialize":
            self.initialize(msg_id, params)
        elif method == "ping":
            self.result(msg_id, {})
        elif method == "tools/list":
            self.result(msg_id, {"tools": self.listing["tools"]})
        elif method == "prompts/list":
            self.result(msg_id, {"prompts": self.listing["prompts"]})
        elif method == "resources/templates/list":
            self.result(msg_id, {"resourceTemplates": self.listing["resourceTemplates"]})
        else:  # relayed: on a thread of its own, so a slow call holds up nothing else
            threading.Thread(
                target=self.relay, args=(msg_id, method, params), name="memls-mcp-call", daemon=True
            ).start()

    def initialize(self, msg_id: Any, params: dict[str, Any]) -> None:
        info = params.get("clientInfo") or {}
        self.client = (str(info.get("name") or "unknown").strip() or "unknown")[:100]
        self.asks_roots = isinstance((params.get("capabilities") or {}).get("roots"), dict)
        if self.asks_roots and self.pinned is None:
            self.roots_ready.clear()  # calls wait for the roots, asked once initialized
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOLS else PROTOCOLS[0]
        self.result(
            msg_id,
            {
                "protocolVersion": version,
                "capabilities": CAPABILITIES,
                "serverInfo": {"name": "memls", "version": self.listing["version"]},
                "instructions": self.listing["instructions"],
            },
        )
        self.ensure_daemon()

    def run(self, stdin: BinaryIO) -> int:
        limit = frame_limit(self.data_dir)
        while True:
            line = stdin.readline(limit + 1)
            if not line:
                return 0
            if len(line) > limit and not line.endswith(b"\n"):
                why = (
                    f"a line over the limit max_frame_bytes = {limit} bytes; it was not read, "
                    "and the input is closed"
                )
                self.send(
                    lines.error(
                        None, lines.INVALID_REQUEST, why, {"limit": "max_frame_bytes", "max": limit}
                    )
                )
                sys.stderr.write(
                    f"memls: closing the connection: {why}; exiting: the client must start "
                    "the server again\n"
                )
                return 1
            if not line.strip():
                continue
            message, refusal = lines.check(line)
            if refusal is not None:
                self.send(refusal)
            if message is not None:
                self.handle(message)


def main(data_dir: str | None, project: str | None) -> int:
    """Serve MCP on stdin/stdout until the client closes stdin."""
    directory = os.path.realpath(os.path.expanduser(data_dir)) if data_dir else default_data_dir()
    pinned = pinned_project(project) if project is not None else None
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # nothing else can write to the stream
    relay = Relay(directory, pinned, out)
    try:
        return relay.run(sys.stdin.buffer)
    except KeyboardInterrupt:
        return 0
