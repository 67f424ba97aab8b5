"""Progress of long verbs: the engine tells memory/progress, the CLI draws
a bar with rate and time left on a terminal, and stays quiet with --json or off a terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys

import pytest

from memls import protocol
from memls.engine import Engine

ITEMS = [{"text": f"fact number {i} about service s{i}", "type": "fact"} for i in range(40)]


@pytest.fixture
def data(tmp_path):
    directory = tmp_path / "data"
    directory.mkdir(mode=0o700)
    (directory / "config.toml").write_text("[index]\nvectors = false\n")
    lines = tmp_path / "in.jsonl"
    lines.write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    return directory, lines


def memls(directory, *args):
    return [sys.executable, "-m", "memls", "--data-dir", str(directory), *args]


def test_the_engine_tells_ingest_and_reindex_progress(tmp_path, models):
    heard: list[protocol.ProgressNotification] = []
    with Engine.open(tmp_path / "d", models=models) as engine:
        engine.listeners.append(lambda m, p: heard.append(p) if m == "memory/progress" else None)
        items = [protocol.StoreParams(text=i["text"]) for i in ITEMS[:12]]
        r = engine.ingest(protocol.IngestParams(project="alpha", items=items))
        assert (r.stored, r.duplicates, r.indexed) == (12, 0, True)
        engine.reindex(protocol.ReindexParams(project="alpha"))
    for title in ("ingest", "reindex"):
        told = [p for p in heard if p.title == title]
        assert len({p.token for p in told}) == 1, title
        assert told[-1].finished and not any(p.finished for p in told[:-1])
        indexing = [p for p in told if p.phase == "indexing"]
        assert indexing[0].done <= indexing[-1].done == indexing[-1].total == 12
        dones = [p.done for p in indexing]
        assert dones == sorted(dones)  # never goes back
    ingest = [p for p in heard if p.title == "ingest" and p.phase == "writing"]
    assert ingest[0].done == 0 and ingest[-1].done == ingest[-1].total == 12


def test_a_refused_ingest_stores_nothing_and_ends_its_progress(tmp_path):
    heard = []
    with Engine.open(tmp_path / "d", vectors=False) as engine:
        engine.listeners.append(lambda m, p: heard.append(p) if m == "memory/progress" else None)
        items = [protocol.StoreParams(text="fine"), protocol.StoreParams(text="x", project="b")]
        with pytest.raises(Exception, match="item 2"):
            engine.ingest(protocol.IngestParams(project="alpha", items=items))
        stats = engine.stats(protocol.StatsParams(project="alpha"))
        assert stats.memories == 0
    assert not heard or heard[-1].finished


def test_quiet_when_not_a_terminal(data):
    directory, lines = data
    done = subprocess.run(
        memls(directory, "ingest", str(lines), "-p", "alpha"), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout == "stored 40 memories in 'alpha' (0 duplicates)\n"


def _on_a_terminal(argv) -> tuple[int, str]:
    """Run with stdin, stdout and stderr on a pseudo-terminal; (exit code, all it wrote)."""
    main, sub = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    proc = subprocess.Popen(argv, stdin=sub, stdout=sub, stderr=sub, env=env, close_fds=True)
    os.close(sub)
    out = b""
    while True:
        ready, _, _ = select.select([main], [], [], 60)
        if not ready:
            proc.kill()
            break
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    return proc.wait(), out.decode("utf-8", "replace")


def test_a_bar_with_rate_and_time_left_on_a_terminal(data):
    directory, lines = data
    code, out = _on_a_terminal(memls(directory, "ingest", str(lines), "-p", "alpha"))
    assert code == 0, out
    assert "ingest writing" in out
    assert "40/40" in out and "/s" in out and "eta" in out
    assert "━" in out  # the bar itself
    assert "stored 40 memories" in out


def test_json_is_quiet_on_a_terminal_too(data):
    directory, lines = data
    code, out = _on_a_terminal(memls(directory, "ingest", str(lines), "-p", "alpha", "--json"))
    assert code == 0, out
    assert json.loads(out)["stored"] == 40  # one JSON document and nothing else
