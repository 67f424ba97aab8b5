"""SIGKILL the daemon while a client ingests as fast as it can, with every check on (real
models, real Chroma: secrets, near duplicates, contradictions after indexing).

A client process (`open_engine`, as `memls ingest` is) sends `memory/ingest` batches of
BATCH memories and, between them, single `memory/store`s; it writes every id it got an
answer for to a log, one write(2) a line (a SIGKILL of the daemon does not lose it). The
daemon is killed at a random moment of an ingest (while it writes the batch, indexes it or
runs the checks), then started again, KILLS times. At the end every acknowledged memory is
there, once, and once the outbox has drained it is in the vector index (`doctor` agrees).
MEMLS_INGEST_KILLS sets the number of kills (default 2).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading

from lsp_helpers import free_port, wait_for_port
from memls import protocol as p
from memls.daemon.handle import open_engine
from reliability.wire import TcpDaemon, data_dir

BATCH = 100
KILLS = int(os.environ.get("MEMLS_INGEST_KILLS", 2))

CLIENT = r"""
import json, os, sys, time
from memls import protocol as p
from memls.daemon.handle import open_engine

data, project, log_path, round_ = sys.argv[1:5]
log = open(log_path, "a", buffering=1)
engine = open_engine(data, front="cli")
started, n = time.monotonic(), 0
try:
    for k in range(1000):
        items = [
            p.StoreParams(text=f"round {round_} batch {k} item {j}: the {j % 7} queue drains "
                               f"into bucket {k * 1000 + j} every {j % 5 + 1} minutes")
            for j in range(BATCH_SIZE)
        ]
        r = engine.ingest(p.IngestParams(project=project, items=items))
        n += len(r.ids)
        log.write(json.dumps({"op": "ingest", "ids": r.ids, "at": time.monotonic() - started,
                              "acked": n}) + "\n")
        print(time.monotonic() - started, flush=True)  # the test waits on this line
        for j in range(5):
            text = f"round {round_} single {k}.{j}: service {k * 10 + j} deploys after review"
            s = engine.store(p.StoreParams(text=text, project=project))
            log.write(json.dumps({"op": "store", "id": s.id}) + "\n")
except Exception as exc:  # the daemon was killed: stop
    log.write(json.dumps({"op": "stopped", "error": type(exc).__name__}) + "\n")
""".replace("BATCH_SIZE", str(BATCH))


def acked(log_path) -> tuple[list[str], list[dict]]:
    ids, ingests = [], []
    if not log_path.exists():
        return ids, ingests
    for line in log_path.read_text().splitlines():
        entry = json.loads(line)
        if entry["op"] == "ingest":
            ids += entry["ids"]
            ingests.append(entry)
        elif entry["op"] == "store":
            ids.append(entry["id"])
    return ids, ingests


def test_acknowledged_ingests_survive_a_sigkill_of_the_daemon_mid_batch(tmp_path, root):
    data = data_dir(tmp_path, "")  # vectors on: every check a single store gets
    project = str(root)
    log_path = tmp_path / "acked.jsonl"
    rng = random.Random(20261203)
    rates = []
    for round_ in range(KILLS):
        port = free_port()
        daemon = TcpDaemon(data, port)
        assert wait_for_port(port, timeout=120, proc=daemon.proc), daemon.log()
        client = subprocess.Popen(
            [sys.executable, "-c", CLIENT, str(data), project, str(log_path), str(round_)],
            stdout=subprocess.PIPE,
            text=True,
        )
        before = len(acked(log_path)[0])
        # kill once two ingests of this round are acknowledged, at a random moment of the next
        times = [float(client.stdout.readline()) for _ in range(2)]
        rates.append((BATCH + 5) / max(1e-9, times[1] - times[0]))
        threading.Event().wait(rng.uniform(0.0, BATCH / max(rates[-1], 1.0)))
        os.kill(daemon.proc.pid, signal.SIGKILL)
        daemon.proc.wait(timeout=30)
        daemon.stderr.close()
        client.wait(timeout=120)
        assert len(acked(log_path)[0]) > before
    ids, _ = acked(log_path)
    port = free_port()
    daemon = TcpDaemon(data, port)  # started again: it drains what the kill left
    try:
        assert wait_for_port(port, timeout=120), daemon.log()
        engine = open_engine(data, front="cli")
        try:
            listed = engine.list(p.ListParams(project=project, limit=1000)).memories
            present = {m.id for m in listed}
            missing = [i for i in ids if i not in present]
            for i in list(missing):
                try:
                    engine.get(p.GetParams(id=i, project=project))
                    missing.remove(i)
                except Exception:  # noqa: BLE001 - not found: lost
                    pass
            assert missing == [], f"{len(missing)} acknowledged memories lost: {missing[:5]}"
            assert len(set(ids)) == len(ids), "an acknowledged id was answered twice"
            assert engine.flush(timeout=300)  # the outbox drained into the index
            doctor = engine.doctor(p.DoctorParams(project=project))
            assert doctor.pending == 0 and not doctor.missing and not doctor.extra, doctor
            assert doctor.memories == doctor.indexed >= len(ids)
        finally:
            engine.close()
    finally:
        daemon.stop()
    print(
        f"\ningest under SIGKILL: {KILLS} kills, {len(ids)} acknowledged memories, "
        f"0 lost; acknowledged before each kill (ingest {BATCH} + 5 single stores) "
        f"{', '.join(f'{r:.0f}' for r in rates)} memories/s"
    )
