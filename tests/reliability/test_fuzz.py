"""Hypothesis fuzzes the real server on every transport: LSP over stdio, LSP over TCP before
and after the token, the owner socket, MCP over stdio.

`make test` runs MEMLS_FUZZ_EXAMPLES (default 200) examples per transport; `make soak` runs
10,000 per transport. What an example is and what it must hold: fuzz.py.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_helpers import free_port, wait_for_port
from reliability.fuzz import (
    FUZZ_CONFIG,
    MCP_TOOLS_MUTATING,
    MUTATING,
    Target,
    cases,
    examples,
    run_case,
)
from reliability.wire import TOKEN, McpServer, OwnerPeer, StdioServer, TcpDaemon, data_dir

EXAMPLES = examples(200)
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
TEXTS = ["We deploy on Tuesdays", "Use tabs, not spaces", "The cache is Redis"]


def seed(peer, root, other, *, mark: str = "", **fields) -> Target:
    """Three memories to aim at; `mark` keeps them apart from another target's on one store
    (that target may have forgotten its own: storing them again would be refused)."""
    projects = [str(root), str(other)]
    ids = []
    for i, text in enumerate(TEXTS):
        reply = peer.call("memory/store", {"text": text + mark, "project": projects[i % 2]})
        ids.append(reply["result"]["id"])
    return Target(peer=peer, alive=lambda: True, projects=projects, ids=ids, **fields)


def folders(base):
    root, other = base / "proj", base / "other"
    root.mkdir()
    other.mkdir()
    return root, other


def report(name: str, target: Target) -> None:
    """At teardown: what the fuzzer sent (it must be all it promises, when it ran here)."""
    assert target.sent == 0 or target.sent >= EXAMPLES, target.sent
    print(
        f"\n{name} fuzz: {target.sent} examples, {target.reopened} reopened after a close, "
        f"answers {sorted(target.counts.items())}, of them {sorted(target.edges.items())}"
    )


def exited_for_a_restart(server) -> None:
    """A stdio server after a frame over the limit: status 1, said on stderr, no traceback."""
    assert server.proc.wait(timeout=30) == 1, server.log()[-2000:]
    server.stderr.close()
    log = server.log()
    said = log[log.rfind("memls: closing the connection") :]
    assert "max_frame_bytes" in said and "Traceback" not in said, log[-2000:]


@pytest.fixture(scope="module")
def stdio_target(tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz-stdio")
    root, other = folders(base)
    data = data_dir(base, FUZZ_CONFIG)
    servers = [StdioServer(data)]
    assert "result" in servers[0].peer.initialize(root)

    def reopen():
        exited_for_a_restart(servers[-1])
        servers.append(StdioServer(data))
        assert "result" in servers[-1].peer.initialize(root)
        return servers[-1].peer

    target = seed(servers[0].peer, root, other, reopen=reopen, mutating=frozenset(MUTATING))
    target.alive = lambda: servers[-1].alive()
    target.status = lambda: servers[-1].status()
    yield target
    report("LSP stdio", target)
    assert servers[-1].alive(), servers[-1].status()
    assert servers[-1].close() == 0, servers[-1].log()[-3000:]


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz-tcp")
    root, other = folders(base)
    port = free_port()
    data = data_dir(base, FUZZ_CONFIG)
    daemon = TcpDaemon(data, port)
    assert wait_for_port(port), daemon.log()
    daemon.data, daemon.root, daemon.other = data, root, other
    yield daemon
    assert daemon.alive()
    assert daemon.stop() == 0, daemon.log()[-3000:]


@pytest.fixture(scope="module")
def tcp_target(daemon):
    def reopen():
        peer = daemon.connect()
        assert "result" in peer.initialize(daemon.root, TOKEN)
        return peer

    target = seed(reopen(), daemon.root, daemon.other, reopen=reopen, mutating=frozenset(MUTATING))
    target.alive = daemon.alive
    yield target
    report("TCP", target)
    target.peer.close()


@pytest.fixture(scope="module")
def stranger_target(daemon):
    """A TCP client that never sends the token."""
    target = Target(
        peer=daemon.connect(),
        alive=daemon.alive,
        projects=[str(daemon.root), str(daemon.other)],
        ids=["m_nope"],
        gated=True,
        reopen=daemon.connect,
    )
    yield target
    report("TCP before the token", target)
    target.peer.close()


@pytest.fixture(scope="module")
def owner_target(daemon):
    def reopen():
        return OwnerPeer(daemon.data)

    target = seed(
        reopen(),
        daemon.root,
        daemon.other,
        mark=" (through the owner socket)",
        framing="owner",
        reopen=reopen,
        mutating=frozenset(MUTATING),
    )
    target.alive = daemon.alive
    yield target
    report("owner socket", target)
    target.peer.close()


@pytest.fixture(scope="module")
def mcp_target(tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz-mcp")
    root, other = folders(base)
    data = data_dir(base, FUZZ_CONFIG)
    servers = [McpServer(data, root)]
    assert "result" in servers[0].initialize()

    def reopen():
        exited_for_a_restart(servers[-1])
        servers.append(McpServer(data, root))
        assert "result" in servers[-1].initialize()
        return servers[-1].peer

    def tool(peer, name, arguments):
        reply = peer.call("tools/call", {"name": name, "arguments": arguments})
        assert not reply["result"]["isError"], reply
        return reply["result"]["structuredContent"]

    ids = [tool(servers[0].peer, "remember", {"text": t, "check": False})["id"] for t in TEXTS]

    def snapshot(target):
        stats = tool(target.peer, "stats", {})
        stats.pop("indexPending", None)
        return stats

    target = Target(
        peer=servers[0].peer,
        alive=lambda: servers[-1].alive(),
        projects=[str(root), str(other)],
        ids=ids,
        framing="mcp",
        reopen=reopen,
        snapshot=snapshot,
        mutating=frozenset(MCP_TOOLS_MUTATING),
        status=lambda: servers[-1].status(),
    )
    yield target
    report("MCP stdio", target)
    assert servers[-1].alive(), servers[-1].status()
    assert servers[-1].close() == 0, servers[-1].log()[-3000:]


@SETTINGS
@given(data=st.data())
def test_fuzz_lsp_stdio(stdio_target, data):
    run_case(stdio_target, data.draw(cases(stdio_target)))


@SETTINGS
@given(data=st.data())
def test_fuzz_tcp(tcp_target, data):
    run_case(tcp_target, data.draw(cases(tcp_target)))


@SETTINGS
@given(data=st.data())
def test_fuzz_tcp_before_the_token(stranger_target, data):
    run_case(stranger_target, data.draw(cases(stranger_target)))


@SETTINGS
@given(data=st.data())
def test_fuzz_owner_socket(owner_target, data):
    run_case(owner_target, data.draw(cases(owner_target)))


@SETTINGS
@given(data=st.data())
def test_fuzz_mcp_stdio(mcp_target, data):
    run_case(mcp_target, data.draw(cases(mcp_target)))
