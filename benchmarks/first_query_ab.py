"""The first query of a fresh process (as the daemon opens a store: owner, serving, models
loading in the background), for two or more code checkouts on one kept store, alternating,
so that the host's drift hits each alike.

    python benchmarks/first_query_ab.py /path/to/store conv-26 /path/to/checkout-a \
        /path/to/checkout-b [--reps 3]

The models' optimised graphs come from the user's cache (MEMLS_MODEL_CACHE as set, else
~/.cache/memls/onnx), already built: this is the warm first query, not the first start.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("project")
    parser.add_argument("roots", nargs="+")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    print(f"# python {' '.join(shlex.quote(a) for a in sys.argv)}")
    code = (
        "import time; t=time.perf_counter();"
        "from memls.daemon import open_engine; from memls import protocol as p;"
        f"e=open_engine({args.store!r}, front='bench', serve=True);"
        "e.query(p.QueryParams(query='when did she go to the support group',"
        f" project={args.project!r}));"
        "print((time.perf_counter()-t)*1000, flush=True); e.close()"
    )
    cache = os.environ.get("MEMLS_MODEL_CACHE", os.path.expanduser("~/.cache/memls/onnx"))
    for _ in range(args.reps):
        for root in args.roots:
            env = {"PYTHONPATH": f"{root}/server", "PATH": "/usr/bin:/bin"}
            env["MEMLS_MODEL_CACHE"] = cache
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
            )
            lines = out.stdout.strip().splitlines()
            print(f"{root}: {float(lines[-1]):.0f} ms" if lines else f"{root}: failed", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
