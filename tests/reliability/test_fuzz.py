"""Hypothesis fuzzes the real server over stdio and over TCP.

`make test` runs MEMLS_FUZZ_EXAMPLES (default 600) examples per transport (1,200 in all);
`make soak` runs 6,000 per transport. What an example is and what it must hold: fuzz.py.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_helpers import free_port, wait_for_port
from reliability.fuzz import FUZZ_CONFIG, Target, cases, examples, run_case
from reliability.wire import TOKEN, StdioServer, TcpDaemon, data_dir

EXAMPLES = examples(600)
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)


def seed(peer, root, other) -> Target:
    projects = [str(root), str(other)]
    ids = []
    for i, text in enumerate(
        ["We deploy on Tuesdays", "Use tabs, not spaces", "The cache is Redis"]
    ):
        reply = peer.call("memory/store", {"text": text, "project": projects[i % 2]})
        ids.append(reply["result"]["id"])
    return Target(peer=peer, alive=lambda: True, projects=projects, ids=ids)


@pytest.fixture(scope="module")
def stdio_target(tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz-stdio")
    root, other = base / "proj", base / "other"
    root.mkdir()
    other.mkdir()
    server = StdioServer(data_dir(base, FUZZ_CONFIG))
    assert "result" in server.peer.initialize(root)
    target = seed(server.peer, root, other)
    target.alive = server.alive
    yield target
    print(f"\nstdio fuzz: {target.sent} examples, answers {sorted(target.counts.items())}")
    assert server.alive()
    code = server.close()
    assert code == 0, server.log()[-3000:]
    assert "Traceback" not in server.log() or "internal error" not in server.log()


@pytest.fixture(scope="module")
def tcp_target(tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz-tcp")
    root, other = base / "proj", base / "other"
    root.mkdir()
    other.mkdir()
    port = free_port()
    daemon = TcpDaemon(data_dir(base, FUZZ_CONFIG), port)
    assert wait_for_port(port), daemon.log()
    peer = daemon.connect()
    assert "result" in peer.initialize(root, TOKEN)
    target = seed(peer, root, other)
    target.alive = daemon.alive
    yield target
    print(f"\nTCP fuzz: {target.sent} examples, answers {sorted(target.counts.items())}")
    peer.close()
    assert daemon.alive()
    assert daemon.stop() == 0, daemon.log()[-3000:]


@SETTINGS
@given(data=st.data())
def test_fuzz_stdio(stdio_target, data):
    run_case(stdio_target, data.draw(cases(stdio_target)))


@SETTINGS
@given(data=st.data())
def test_fuzz_tcp(tcp_target, data):
    run_case(tcp_target, data.draw(cases(tcp_target)))


def test_the_fuzzers_ran_their_examples(stdio_target, tcp_target):
    """Runs after both (file order): the suite really sent what it promises."""
    assert stdio_target.sent >= EXAMPLES and tcp_target.sent >= EXAMPLES
