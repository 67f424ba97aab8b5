"""Nothing leaves the machine: every front of memls at work (the hook starting the owner, the
command line's store, query and briefing, `memls mcp`'s recall, an editor's `memls serve
--stdio` owning its own store), under strace, with `ORT_DISABLE_TELEMETRY=0` in the user's
environment; no process may connect or send to anything but loopback and local sockets, and
no name may be looked up (DNS to any resolver, a local stub included). The scenario and the
trace's reader: tests/privacy_helpers.py; what each dependency was found to do: docs/privacy.md.

onnxruntime's telemetry speaks 9.1 s after its library is opened and nothing makes it speak
sooner: the scenario keeps every process that opened it running WATCH_S seconds past that
moment (read from the trace itself), and the test checks that the trace saw them that long."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import privacy_helpers
from privacy_helpers import STRACE, WATCH_S, Trace, strace_unavailable

# Each front, as its command line appears in the trace.
FRONTS = {
    "the hook": "hooks/client.py --project",
    "the owner the hook started": "serve --socket",
    "memls store": " store ",
    "memls query": " query ",
    "memls context": " context ",
    "memls mcp": " mcp",
    "the editor's daemon": "serve --stdio",
}

SAMPLE = """\
100 1796400000.000001 connect(3, {sa_family=AF_UNIX, sun_path="/tmp/d/memls.sock"}, 110) = 0
100 1796400000.000002 connect(4, {sa_family=AF_INET, sin_port=htons(7457), sin_addr=inet_addr("127.0.0.1")}, 16) = 0
100 1796400000.000003 connect(5, {sa_family=AF_INET6, sin6_port=htons(7457), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::1", &sin6_addr), sin6_scope_id=0}, 28) = 0
100 1796400000.000004 sendto(6, [{nlmsg_len=20, nlmsg_type=RTM_GETADDR}], 20, 0, {sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}, 12) = 20
101 1796400009.100000 connect(8, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.255.255.53")}, 16) = 0
101 1796400009.100001 sendto(8, "\\330\\326\\1\\0\\0\\1\\0\\0\\0\\0\\0\\0\\6mobile\\6events\\4data"..., 50, MSG_NOSIGNAL, NULL, 0) = 50
102 1796400009.200000 connect(9, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("127.0.0.53")}, 16 <unfinished ...>
103 1796400009.300000 connect(10, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2603:1030::5", &sin6_addr), sin6_scope_id=0}, 28) = -1 ENETUNREACH (Network is unreachable)
104 1796400009.400000 sendmsg(11, {msg_name={sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr("13.107.5.93")}, msg_namelen=16, msg_iov=[{iov_base="x", iov_len=1}], msg_iovlen=1, msg_controllen=0, msg_flags=0}, 0) = 1
105 1796400009.500000 connect(12, {sa_family=AF_UNIX, sun_path="/run/systemd/resolve/io.systemd.Resolve"}, 42) = 0
106 1796400009.600000 connect(13, {sa_family=AF_INET6, sin6_port=htons(80), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "::ffff:127.0.0.1", &sin6_addr), sin6_scope_id=0}, 28) = 0
"""  # noqa: E501 - strace's lines as it writes them


def test_the_reader_finds_each_way_out_and_passes_local_sockets():
    found = Trace(SAMPLE).contacts
    assert [(c.pid, c.why) for c in found] == [
        (101, "a DNS query to 10.255.255.53 port 53"),
        (102, "a DNS query to 127.0.0.53 port 53"),
        (103, "2603:1030::5 port 443"),
        (104, "13.107.5.93 port 443"),
        (105, "a name lookup through /run/systemd/resolve/io.systemd.Resolve"),
    ]
    assert Trace(SAMPLE).asked == {"mobile.events.data"}  # as far as strace showed the bytes


def test_no_memls_process_reaches_beyond_this_machine(tmp_path):
    why = strace_unavailable()
    if why is not None:
        pytest.skip(f"NOT CHECKED, the no-network promise is untested here: {why}")
    work, trace = tmp_path / "work", tmp_path / "strace.txt"
    work.mkdir()
    # the user's environment asks onnxruntime for its telemetry: memls must keep it off anyway
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "0"}
    script = Path(privacy_helpers.__file__)
    done = subprocess.run(
        [*STRACE, "-o", str(trace), sys.executable, str(script), str(work), str(trace)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    traced = Trace(trace.read_text(errors="replace"))
    if traced.contacts:
        pytest.fail(traced.report(), pytrace=False)
    assert done.returncode == 0, f"the scenario failed:\n{done.stderr[-4000:]}"
    seen = json.loads(done.stdout.splitlines()[-1])
    assert set(seen) == {"hook", "cli", "mcp", "lsp", "waited", "stopped"}, seen
    ran = list(traced.ran.values())
    missing = [front for front, mark in FRONTS.items() if not any(mark in c for c in ran)]
    assert not missing, f"not in the trace: {missing}"
    # the owner is a process memls started: the hook started it, with the user's environment
    (owner,) = [pid for pid, c in traced.ran.items() if "serve --socket" in c]
    assert "hooks/client.py" in traced.started_by(owner), traced.started_by(owner)
    # both owners loaded the models, and each was traced WATCH_S seconds after it did
    watched = {traced.command(pid): round(s, 2) for pid, s in traced.watched().items()}
    assert any("serve --socket" in c for c in watched), watched
    assert any("serve --stdio" in c for c in watched), watched
    assert all(s >= WATCH_S for s in watched.values()), watched
