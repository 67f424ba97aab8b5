"""What the write-time checks add to `memory/store`: the secret detector and the near-duplicate
lookup (one embedding of the new text, a scoped nearest-neighbour search and a BM25 lookup,
the cross-encoder only for a close candidate), timed in-process on the engine.

    python benchmarks/store_checks_cost.py ../shared/data/locomo/locomo-dev.json [--n 300]

Three engines on fresh data directories (vectors on, the real models), each storing the same
LoCoMo turns as memories of one project: "plain" with both checks switched off in this process,
"secrets" with the detector only, "both" as shipped. Stores are interleaved (plain, secrets,
both, plain, ...) so a change of the host's speed hits each alike; the index worker runs as in
the product. Prints p50/p95 per variant, how many stores asked a model, and the load average
(on a loaded host the absolute times are the host's, not the checks': compare the variants).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from memls import protocol, secrets
from memls.config import model_cache_dir
from memls.engine import Engine
from memls.engine import writes as writes_module
from memls.models import ModelRuntime

VARIANTS = ("plain", "secrets", "both")


def turns(path: Path, n: int) -> list[str]:
    out = []
    for sample in json.loads(path.read_text()):
        for key, value in sample["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                out.extend(t["text"] for t in value)
    return out[:n]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("locomo", type=Path)
    ap.add_argument("--n", type=int, default=300)
    args = ap.parse_args()
    print("$ python benchmarks/store_checks_cost.py " + shlex.join(sys.argv[1:]))
    print(f"load average at start: {os.getloadavg()}")
    texts = turns(args.locomo, args.n)
    real_screen = secrets.screen
    times: dict[str, list[float]] = {v: [] for v in VARIANTS}
    models = ModelRuntime(cache_dir=model_cache_dir())
    asked = {"embeddings": 0}  # made by the store path itself (the index worker's not counted)
    embed = models.embedder.embed

    def counted(texts):
        if threading.current_thread() is threading.main_thread():
            asked["embeddings"] += 1
        return embed(texts)

    models.embedder.embed = counted  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as tmp:
        engines = {
            v: Engine.open(Path(tmp) / v, front="bench", cache=False, models=models)
            for v in VARIANTS
        }
        nears = {e: e._cases.writes.near for e in engines.values()}
        try:
            for text in texts:
                for variant in VARIANTS:
                    engine = engines[variant]
                    screen = real_screen if variant != "plain" else lambda t, *a, **k: t
                    writes_module.secrets.screen = screen  # type: ignore[attr-defined]
                    writes = engine._cases.writes  # the use case the facade delegates to
                    writes.near = nears[engine] if variant == "both" else None
                    params = protocol.StoreParams(text=text, project="bench")
                    started = time.perf_counter()
                    engine.store(params)
                    times[variant].append((time.perf_counter() - started) * 1000)
            for engine in engines.values():
                engine.flush(timeout=600)
        finally:
            writes_module.secrets.screen = real_screen  # type: ignore[attr-defined]
            for engine in engines.values():
                engine.close()
    print(f"{len(texts)} stores per variant (LoCoMo turns), one project each, vectors on")
    print(f"{'variant':8} {'p50 ms':>8} {'p95 ms':>8} {'mean ms':>8}")
    for variant, values in times.items():
        values.sort()
        print(
            f"{variant:8} {statistics.median(values):8.2f} "
            f"{values[int(len(values) * 0.95)]:8.2f} {statistics.fmean(values):8.2f}"
        )
    print(
        f"stores of 'both' whose near-duplicate lookup asked the embedder: "
        f"{asked['embeddings']} of {len(texts)}"
    )
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
