"""The background indexer (outbox worker): it runs the write-time contradiction check."""

from __future__ import annotations

from memls import protocol
from property_helpers import Fresh

# ================================================================ regressions
# A memory forgotten while the background contradiction check scores it must not break the
# indexer (found by this file; fixed in the engine).


def test_forget_between_contradiction_detection_and_record(monkeypatch) -> None:
    from memls.conflicts.detector import Detector

    real_detect = Detector.findings
    with Fresh() as fx:
        eng = fx.engine
        # Drive the indexer on this thread, deterministically (no background worker).
        eng.worker.stop()
        eng.worker = None
        older = eng.store(protocol.StoreParams(text="deploy database cache", project="p")).id
        eng.indexer.drain()

        def detect_then_forget(detector, row, *rest):
            found = real_detect(detector, row, *rest)
            if any(f.older["id"] == older for f in found):
                # A user forgets the older memory while the check is between read and write.
                eng.forget(protocol.ForgetParams(id=older, reason="user_deleted", project="p"))
            return found

        monkeypatch.setattr(Detector, "findings", detect_then_forget)
        eng.store(protocol.StoreParams(text="deploy database lint", project="p"))  # contradicts
        eng.indexer.drain()  # raises sqlite3.IntegrityError: FOREIGN KEY constraint failed
        assert eng.indexer.last_error is None
        assert eng.indexer.pending() == 0
