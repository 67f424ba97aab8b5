"""The outbox keeps Chroma in step with SQLite: every write, drift found by doctor and repaired
by reindex, and nothing lost when a writer dies before the Chroma write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from engine_helpers import FACTS, query, store
from memls import protocol as p
from memls import timeutil
from memls.engine import Engine


def test_outbox_keeps_chroma_in_step_with_every_write(vengine):
    a = store(vengine, FACTS[0], validFrom="2024-01-01")
    b = store(vengine, "We moved from pnpm to bun for package management", validFrom="2024-06-01")
    c = store(vengine, FACTS[1])
    assert vengine.flush()
    meta = vengine.index.all_ids("alpha")
    assert set(meta) == {a.id, b.id, c.id}
    vengine.supersede(p.SupersedeParams(old=a.id, by=b.id, project="alpha"))
    for _ in range(2):
        vengine.feedback(p.FeedbackParams(id=c.id, signal="outdated", project="alpha"))
    vengine.flush()
    meta = vengine.index.all_ids("alpha")
    assert meta[a.id]["status"] == "superseded"
    assert meta[a.id]["valid_until"] == timeutil.to_micros("2024-06-01T00:00:00.000000Z")
    assert meta[c.id]["trust"] == "flagged"
    vengine.forget(p.ForgetParams(id=b.id, reason="user_deleted", project="alpha"))
    vengine.flush()
    assert set(vengine.index.all_ids("alpha")) == {a.id, c.id}
    d = vengine.doctor(p.DoctorParams(project="alpha"))
    assert d.ok and d.missing == d.extra == d.stale == [] and d.indexed == 2


def test_doctor_reports_drift_and_reindex_repairs_it(vengine):
    ids = [store(vengine, t).id for t in FACTS]
    vengine.flush()
    vengine.index.delete("alpha", ids[:2])  # drift behind the engine's back
    vengine.index.update_meta("alpha", [ids[2]], [{"trust": "rejected"}])
    d = vengine.doctor(p.DoctorParams(project="alpha"))
    assert not d.ok and sorted(d.missing) == sorted(ids[:2]) and d.stale == [ids[2]]
    r = vengine.reindex(p.ReindexParams(project="alpha"))
    assert r.queued == len(FACTS) and r.indexed
    assert vengine.doctor(p.DoctorParams(project="alpha")).ok


def test_a_writer_killed_before_the_chroma_write_loses_nothing(tmp_path):
    """SIGKILL right after acknowledged stores, before they reach Chroma: restart converges."""
    data = tmp_path / "data"
    code = textwrap.dedent(f"""
        import sys, time
        from memls import protocol as p
        from memls.engine import Engine
        engine = Engine.open({str(data)!r})
        engine.worker.stop()          # the indexer never runs: acknowledged, not yet in Chroma
        for i in range(40):
            r = engine.store(p.StoreParams(text=f"acknowledged memory {{i}} about caching",
                                           project="crash"))
            print(r.id, flush=True)
        time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    acknowledged = [proc.stdout.readline().strip() for _ in range(40)]
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    with Engine.open(data) as engine:  # start-up drains the outbox
        assert engine.flush(timeout=300)
        assert set(engine.index.all_ids("crash")) == set(acknowledged)
        assert engine.doctor(p.DoctorParams(project="crash")).ok
        hits = query(engine, "acknowledged memory about caching", project="crash", k=40)
        assert {h.id for h in hits.results} == set(acknowledged)
