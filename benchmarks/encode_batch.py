"""Ingest encoding alone: both encoders (bge vector, colbert token vectors) side by side on the
model pool, as the indexer runs them, for 1,536 latency-corpus memories in batches of 128, at
several ONNX batch sizes; rate and peak RSS, each configuration in a fresh process, twice.

    python benchmarks/encode_batch.py ../shared/data/locomo/locomo-dev.json
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "server"))
sys.path.insert(0, str(HERE.parent))

SIZES = ((4, 4), (8, 8), (16, 16))


def worker(path: str, embed_batch: int, late_batch: int) -> dict:
    from corpus import project_items
    from memls.models import ModelRuntime

    sample = json.loads(Path(path).read_text())[0]
    texts = [item.text for item in project_items(sample, 10000)[:1536]]
    runtime = ModelRuntime(embed_batch_size=embed_batch, late_batch_size=late_batch)
    runtime.warm()
    started = time.perf_counter()
    for i in range(0, len(texts), 128):
        tokens = runtime.late.submit(texts[i : i + 128])
        runtime.embedder.embed(texts[i : i + 128])
        tokens.result()
    rate = len(texts) / (time.perf_counter() - started)
    runtime.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"rate": round(rate, 1), "peak_rss_mb": round(peak)}


def main() -> int:
    if sys.argv[1:2] == ["--worker"]:
        print(json.dumps(worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
        return 0
    path = sys.argv[1]
    print(f"# python {' '.join(shlex.quote(a) for a in sys.argv)}")
    print(f"# load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\n| embedder batch | token-encoder batch | run | memories/s | peak RSS MB |")
    print("|---|---|---|---|---|")
    for run in (1, 2):
        for embed_batch, late_batch in SIZES:
            out = subprocess.run(
                [sys.executable, str(HERE), "--worker", path, str(embed_batch), str(late_batch)],
                capture_output=True,
                text=True,
                check=True,
            )
            row = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"| {embed_batch} | {late_batch} | {run} | {row['rate']} | {row['peak_rss_mb']} |"
            )
    print(f"\n# load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
