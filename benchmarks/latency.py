"""Speed, memory and recall of the real engine as a project grows: the latency corpus
(`corpus.py`), one store grown through memory/ingest and measured at each size (1k, 10k, 100k).

At each size: acknowledged store p50/p95; query p50/p95 and R@5 / R@10 / R@25 per depth
(lexical, none, interactive, default) on the conversation's own questions (categories 1-4);
500 memories ingested and timed with every check on (rate, CPU a memory, the near-duplicate
and contradiction checks' time a memory on the index worker); RSS; disk; then fresh daemon
processes timed from their start to their first answer and first query (the first after an
install also optimises the models' graphs: reported apart). With --server the vectors live
in a Chroma server (`chroma run`, started and stopped by the run, memls pointed at it by
`[index] chroma_url`). A JSON line a size as it finishes (--json keeps the finished sizes),
then the tables; the report starts with the command, `uptime` and a host-speed reference.

    python benchmarks/latency.py ../shared/data/locomo/locomo-dev.json \
        --sizes 1000,10000,100000 --json benchmarks/results/scale-embedded.json \
        > benchmarks/results/scale-embedded.txt

Three more runs, each its own subcommand (further down): `parts` (where a query's time goes),
`cache` (a repeated query against a computed one) and `models` (the packaged models alone);
`plot OUT.png RUN.json...` draws cost against size from finished runs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "server"))
sys.path.insert(0, str(HERE.parent))

from corpus import project_items, questions
from locomo import turns
from memls import protocol as p
from memls.engine import Engine
from memls.retrieval.pipeline import Retriever

KS = (5, 10, 25)
EXIT_FAILURES: list[int] = []  # exit codes of first-query processes that answered, then failed
DEPTHS = ("lexical", "none", "interactive", "default")


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def params_for(p, depth: str, **kw):
    """QueryParams at a depth: the wire field when the protocol has it, else the same field
    on a subclass (the pipeline reads it with getattr)."""
    if depth == "lexical":
        return p.QueryParams(mode="lexical", **kw)
    if "depth" in p.QueryParams.__struct_fields__:
        return p.QueryParams(depth=depth, **kw)

    class DepthParams(p.QueryParams, kw_only=True):
        depth: str | None = None

    return DepthParams(depth=depth, **kw)


def depth_p50s(engine, p, sample: dict, depths, warm: int = 1) -> dict[str, float]:
    """Each depth's query p50 (ms) over the sample's questions (categories 1-4), after `warm`
    warm-up queries; `p` is the protocol module (the checkout's own)."""
    project = sample["sample_id"]
    out = {}
    for depth in depths:
        for _ in range(warm):
            engine.query(params_for(p, depth, query="warm up", project=project))
        lat = []
        for qa in questions(sample):
            params = params_for(p, depth, query=qa["question"], project=project, k=25)
            started = time.perf_counter()
            engine.query(params)
            lat.append((time.perf_counter() - started) * 1000)
        out[depth] = round(statistics.median(lat), 2)
    return out


def disk_bytes(directory: str) -> int:
    return sum(f.stat().st_size for f in Path(directory).rglob("*") if f.is_file())


PROBES = 200  # acknowledged stores timed at each size
PROBE_INGEST = 500  # memories ingested, timed, into the store at each size (then kept)
FILL_BATCH = 500  # memories per memory/ingest while the store is filled


def growing_items(sample: dict, sizes: list[int]) -> list:
    """The store at each size: `project_items` at the first size (the conversation's turns
    among its distractors), then the same generator's next distractors. So the set of
    memories at every size is `project_items`' set at that size; only the order differs (the
    conversation first, as a project's early history)."""
    from corpus import distractors

    first = project_items(sample, sizes[0])
    real = {i.text for i in first if i.dia_id is not None}
    made = len(first) - len(real)  # the distractors project_items drew
    extra = max(sizes) + len(sizes) * PROBE_INGEST - sizes[0]
    fill = list(distractors(sample, made + max(0, extra), taken=real))[made:]
    return first + fill


def timed_checks(engine) -> dict:
    """Wrap the indexer's write-time checks to time them: the near-duplicate check (one
    nearest-neighbour query a batch, the cross-encoder past the gates) and the contradiction
    check, in ms over the memories they saw."""
    cases = engine._cases
    spent = {"near_ms": 0.0, "contradiction_ms": 0.0, "memories": 0}

    def after(project, rows, vectors):
        spent["memories"] += len(rows)
        t0 = time.perf_counter()
        rows, vectors = cases.writes.merge_restated(project, rows, vectors)
        t1 = time.perf_counter()
        if rows:
            cases.conflicts.after_index(project, rows, vectors)
        spent["near_ms"] += (t1 - t0) * 1000
        spent["contradiction_ms"] += (time.perf_counter() - t1) * 1000

    return spent, after


def rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def measure(
    engine,
    size: int,
    project: str,
    asked: list,
    owner: dict,
    data_dir: str,
    items: list,
    fill_s: float,
    server_dir: str | None,
) -> dict:
    row: dict = {"size": size, "project": project, "questions": len(asked)}
    lat = []
    for i in range(PROBES):
        t0 = time.perf_counter()
        engine.store(
            p.StoreParams(
                text=f"latency probe {size}-{i}: deploys run on tuesdays", project=project
            )
        )
        lat.append((time.perf_counter() - t0) * 1000)
        engine.flush()
    row["store_p50_ms"], row["store_p95_ms"] = round(pct(lat, 50), 2), round(pct(lat, 95), 2)
    row["depths"] = {}
    for depth in DEPTHS:
        engine.query(params_for(p, depth, query="warm up", project=project))
        lat, recalls = [], []
        for qa in asked:
            params = params_for(p, depth, query=qa["question"], project=project, k=25)
            t0 = time.perf_counter()
            hits = engine.query(params).results
            lat.append((time.perf_counter() - t0) * 1000)
            evidence = {e.strip() for e in qa["evidence"] if e.strip()}
            got = [owner.get(h.id) for h in hits]
            recalls.append(
                [len(evidence & set(got[:k])) / len(evidence) if evidence else 0.0 for k in KS]
            )
        row["depths"][depth] = {
            "p50_ms": round(pct(lat, 50), 2),
            "p95_ms": round(pct(lat, 95), 2),
            **{
                f"recall@{k}": round(statistics.fmean(r[j] for r in recalls), 4)
                for j, k in enumerate(KS)
            },
        }
    row["rss_mb"] = round(rss_kib("VmRSS") / 1024, 1)
    row["peak_rss_mb"] = round(rss_kib("VmHWM") / 1024, 1)
    disk = disk_bytes(data_dir) + (disk_bytes(server_dir) if server_dir else 0)
    row["disk_mb"] = round(disk / 2**20, 1)
    row["disk_kb_per_memory"] = round(disk / size / 1024, 1)
    # ingest into the store at this size, every check on, timed (the memories are kept)
    spent, after = timed_checks(engine)
    kept, engine.indexer.after_index = engine.indexer.after_index, after
    c0, t0 = time.process_time(), time.perf_counter()
    r = engine.ingest(p.IngestParams(project=project, items=[i.params(project) for i in items]))
    took = time.perf_counter() - t0
    engine.indexer.after_index = kept
    row["ingest_per_s"] = round(len(items) / took, 1)
    row["ingest_cpu_ms_per_memory"] = round((time.process_time() - c0) / len(items) * 1000, 1)
    row["ingest_duplicates"] = r.duplicates
    n = max(1, spent["memories"])
    row["near_check_ms_per_memory"] = round(spent["near_ms"] / n, 2)
    row["contradiction_check_ms_per_memory"] = round(spent["contradiction_ms"] / n, 2)
    return row


def worker(
    path: str,
    sizes: list[int],
    data_dir: str,
    conversation: int,
    checks: bool,
    server_dir: str | None,
) -> None:
    """One growing store, measured at each size; prints a JSON line per size."""
    sample = json.loads(Path(path).read_text())[conversation]
    project = sample["sample_id"]
    items = growing_items(sample, sizes)
    asked = questions(sample)
    owner: dict[str, str] = {}
    at = 0
    for size in sizes:
        with Engine.open(data_dir, front="bench", cache=False) as engine:
            if not checks:  # the fill without the write-time checks (said in the output)
                kept, engine.indexer.after_index = engine.indexer.after_index, None
            started, filled = time.perf_counter(), size - at
            while at < size:
                chunk = items[at : min(size, at + FILL_BATCH)]
                r = engine.ingest(
                    p.IngestParams(project=project, items=[i.params(project) for i in chunk])
                )
                for item, memory_id in zip(chunk, r.ids):
                    if item.dia_id is not None:
                        owner[memory_id] = item.dia_id
                at += len(chunk)
            fill_s = time.perf_counter() - started
            if not checks:
                engine.indexer.after_index = kept
            probe = items[at : at + PROBE_INGEST]
            at += len(probe)
            row = measure(engine, size, project, asked, owner, data_dir, probe, fill_s, server_dir)
            row["filled"] = filled
            row["fill_per_s"] = round(filled / fill_s, 1) if filled > 0 else None
        print(json.dumps(row), flush=True)
        sys.stdin.readline()  # the parent has timed fresh daemons on the store: go on


STARTUP = r"""
import json, time
t = time.perf_counter()
from memls.daemon import open_engine
from memls import protocol as p
e = open_engine(DATA, front="bench", serve=True)
e.health()
answer = (time.perf_counter() - t) * 1000
e.query(p.QueryParams(query="when did she go to the support group", project=PROJECT))
query = (time.perf_counter() - t) * 1000
rss = {l.split(":")[0]: int(l.split()[1]) for l in open("/proc/self/status") if l[:2] == "Vm"}
print(json.dumps({"answer_ms": answer, "query_ms": query, "rss_mb": rss["VmRSS"] / 1024,
                  "peak_rss_mb": rss["VmHWM"] / 1024}), flush=True)
e.close()
"""


def startup(data_dir: str, project: str, model_cache: str) -> dict:
    """A fresh daemon process on the store (owner, serving its socket, Chroma and the models
    loading in the background): time from its start to its first answer (health) and to
    its first query, and its RSS then. The models' optimised graphs are kept in
    `model_cache` (the first process after an install builds them: reported apart)."""
    code = STARTUP.replace("DATA", repr(data_dir)).replace("PROJECT", repr(project))
    out = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env={
            "PYTHONPATH": str(HERE.parents[1] / "server"),
            "PATH": "/usr/bin:/bin",
            "MEMLS_MODEL_CACHE": model_cache,
        },
    )
    lines = out.stdout.strip().splitlines()
    if not lines:
        kept = shutil.copytree(
            data_dir, tempfile.mkdtemp(prefix="latency-failed-"), dirs_exist_ok=True
        )
        raise RuntimeError(
            f"the start-up process exited {out.returncode} before answering "
            f"(store kept in {kept}):\n" + out.stderr[-4000:]
        )
    if out.returncode != 0:
        # answered and closed, then the interpreter's teardown failed (a native library's
        # exit): the times stand, the exit is counted
        EXIT_FAILURES.append(out.returncode)
    return json.loads(lines[-1])


class ChromaServer:
    """`chroma run` from the installed chromadb, on 127.0.0.1, for the length of a run; memls
    is pointed at it as a user would: `[index] chroma_url` in the data directory's
    config.toml."""

    def __init__(self, directory: str, port: int) -> None:
        self.directory, self.port = directory, port
        chroma = Path(sys.executable).with_name("chroma")
        self.proc = subprocess.Popen(
            [str(chroma), "run", "--path", directory, "--host", "127.0.0.1", "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import socket

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError("chroma run exited at start") from None
                time.sleep(0.2)
        raise RuntimeError("chroma run did not listen within 120 s")

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
        return 0.0

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cost_plot(rows: list[dict], target: str) -> None:
    """Log-log: what each measure costs against the store's size (embedded and server)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measures = [
        ("query p50, default", lambda r: r["depths"]["default"]["p50_ms"]),
        ("query p50, interactive", lambda r: r["depths"]["interactive"]["p50_ms"]),
        ("query p50, none", lambda r: r["depths"]["none"]["p50_ms"]),
        ("store ack p50", lambda r: r["store_p50_ms"]),
        ("ingest, ms a memory", lambda r: 1000 / r["ingest_per_s"]),
        ("near-duplicate check, ms a memory", lambda r: r["near_check_ms_per_memory"]),
        ("contradiction check, ms a memory", lambda r: r["contradiction_check_ms_per_memory"]),
    ]
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for (name, get), color in zip(measures, plt.rcParams["axes.prop_cycle"].by_key()["color"]):
        for store, style in (("embedded", "-o"), ("server", "--s")):
            mine = sorted((r for r in rows if r["store"] == store), key=lambda r: r["size"])
            if mine:
                ax.plot(
                    [r["size"] for r in mine],
                    [max(get(r), 1e-3) for r in mine],
                    style,
                    color=color,
                    label=name if store == "embedded" else None,
                )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("memories in the project (log)")
    ax.set_ylabel("ms (log)")
    ax.set_title("memls: cost against size (solid: embedded Chroma; dashed: Chroma server)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(target, dpi=120)


def plot(rows: list[dict], target: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for row in rows:
        xs = [row["depths"][d]["p50_ms"] for d in DEPTHS]
        for k, marker in zip(KS, "osD"):
            ys = [row["depths"][d][f"recall@{k}"] for d in DEPTHS]
            ax.plot(xs, ys, marker=marker, label=f"R@{k}, {row['size']:,} memories")
            if k == 5:
                for x, y, d in zip(xs, ys, DEPTHS):
                    ax.annotate(d, (x, y), textcoords="offset points", xytext=(4, -12), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("query p50 (ms, log scale)")
    ax.set_ylabel("recall (LoCoMo questions, categories 1-4)")
    ax.set_title("memls: latency against recall per depth")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(target, dpi=120)


def host_speed() -> str:
    """A fixed CPU workload's time (3M pure-Python additions; 40 float32 512^3 products), so
    runs on a host whose speed drifts can be compared: the same code's lexical depth took 5
    and 13 ms in runs hours apart on this VM, with nothing else running."""
    import numpy as np

    started = time.perf_counter()
    total = 0
    for i in range(3_000_000):
        total += i
    python_s = time.perf_counter() - started
    a = np.random.default_rng(0).random((512, 512), dtype=np.float32)
    started = time.perf_counter()
    for _ in range(40):
        a @ a
    return f"python loop {python_s:.3f} s, numpy {time.perf_counter() - started:.3f} s"


def plot_main(argv: list[str]) -> int:
    """`latency.py plot OUT.png RUN.json...`: the log-log plot of cost against size from the
    rows of finished runs (each size's row is written to --json as soon as it is measured)."""
    rows = [r for f in argv[1:] for r in json.loads(Path(f).read_text())]
    cost_plot(rows, argv[0])
    return 0


SUBCOMMANDS = {
    "parts": "parts_main",
    "cache": "cache_main",
    "models": "models_main",
    "plot": "plot_main",
}


def main() -> int:
    if sys.argv[1:2] and sys.argv[1] in SUBCOMMANDS:
        return globals()[SUBCOMMANDS[sys.argv[1]]](sys.argv[2:]) or 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--conversation", type=int, default=0, help="which dev conversation")
    parser.add_argument("--server", action="store_true", help="a Chroma server (chroma run)")
    parser.add_argument(
        "--fill-checks",
        choices=("on", "off"),
        default="on",
        help="the write-time checks while the store is filled (the timed "
        "ingest at each size always has them)",
    )
    parser.add_argument("--json", dest="out")
    parser.add_argument("--plot", help="the latency-recall plot (PNG)")
    parser.add_argument(
        "--cost-plot",
        help="the log-log plot of cost against size (PNG), "
        "from this run's rows and those of the --with JSON files",
    )
    parser.add_argument("--with", dest="others", action="append", default=[])
    parser.add_argument("--starts", type=int, default=2)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", help=argparse.SUPPRESS)
    parser.add_argument("--server-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.worker:
        worker(
            args.path,
            sizes,
            args.data_dir,
            args.conversation,
            args.fill_checks == "on",
            args.server_dir,
        )
        return 0
    print(f"# python {' '.join(shlex.quote(a) for a in sys.argv)}")
    print(f"# uptime at start: {uptime()}")
    print(f"# host speed at start: {host_speed()}", flush=True)
    store = "server" if args.server else "embedded"
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as cache:
        data = Path(tmp) / "data"
        data.mkdir(mode=0o700)
        server = None
        if args.server:
            port = free_port()
            server = ChromaServer(str(Path(tmp) / "chroma-server"), port)
            (data / "config.toml").write_text(f'[index]\nchroma_url = "http://127.0.0.1:{port}"\n')
        try:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    str(HERE),
                    args.path,
                    "--worker",
                    "--sizes",
                    args.sizes,
                    "--data-dir",
                    str(data),
                    "--conversation",
                    str(args.conversation),
                    "--fill-checks",
                    args.fill_checks,
                ]
                + (["--server-dir", server.directory] if server else []),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert proc.stdout is not None and proc.stdin is not None
            for line in proc.stdout:
                row = json.loads(line)
                row["store"] = store
                row["fill_checks"] = args.fill_checks
                starts = [startup(str(data), row["project"], cache) for _ in range(args.starts + 1)]
                row["first_start"] = starts[0]
                row["start_answer_ms"] = round(
                    statistics.median(s["answer_ms"] for s in starts[1:]), 1
                )
                row["start_query_ms"] = round(
                    statistics.median(s["query_ms"] for s in starts[1:]), 1
                )
                row["start_rss_mb"] = round(
                    statistics.median(s["peak_rss_mb"] for s in starts[1:]), 1
                )
                row["start_exit_failures"] = list(EXIT_FAILURES)
                EXIT_FAILURES.clear()
                if server:
                    row["server_rss_mb"] = server.rss_mb()
                row["uptime"] = uptime()
                rows.append(row)
                print(json.dumps(row), flush=True)
                if args.out:  # after each size: what finished is kept
                    Path(args.out).write_text(json.dumps(rows, indent=2) + "\n")
                proc.stdin.write("go\n")
                proc.stdin.flush()
            if proc.wait() != 0:
                raise RuntimeError(f"the worker exited {proc.returncode}")
        finally:
            if server:
                server.stop()
    table(rows)
    print(f"\n# uptime at the end: {uptime()}")
    print(f"# host speed at the end: {host_speed()}")
    if args.plot:
        plot(rows, args.plot)
    if args.cost_plot:
        others = [r for f in args.others for r in json.loads(Path(f).read_text())]
        cost_plot(rows + others, args.cost_plot)
    return 0


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def table(rows: list[dict]) -> None:
    cols = [
        ("size", "memories"),
        ("store_p50_ms", "store p50 ms"),
        ("store_p95_ms", "store p95 ms"),
        ("ingest_per_s", "ingest /s"),
        ("ingest_cpu_ms_per_memory", "ingest CPU ms a memory"),
        ("near_check_ms_per_memory", "near-dup check ms"),
        ("contradiction_check_ms_per_memory", "contradiction check ms"),
        ("start_answer_ms", "start to first answer ms"),
        ("start_query_ms", "start to first query ms"),
        ("start_rss_mb", "daemon RSS after first query MB"),
        ("peak_rss_mb", "peak RSS (filling) MB"),
        ("disk_mb", "disk MB"),
    ]
    print("\n| store | " + " | ".join(c[1] for c in cols) + " |")
    print("|---|" + "---|" * len(cols))
    for row in rows:
        print(f"| {row['store']} | " + " | ".join(_cell(row.get(c[0])) for c in cols) + " |")
    print("\n| store | memories | depth | p50 ms | p95 ms | R@5 | R@10 | R@25 |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        for depth in DEPTHS:
            d = row["depths"][depth]
            print(
                f"| {row['store']} | {row['size']:,} | {depth} | {d['p50_ms']:.1f} | "
                f"{d['p95_ms']:.1f} | {d['recall@5']:.3f} | {d['recall@10']:.3f} | "
                f"{d['recall@25']:.3f} |"
            )


def _cell(value) -> str:
    return f"{value:.1f}" if isinstance(value, float) else str(value)


# ---------------------------------------------------------------- parts

"""Where a query's time goes at N memories: BM25, the query embedding, the vector source
(Chroma + the SQL filters), the final fetch through the filters, the whole query at each
depth. The latency corpus of latency.py (the first dev conversation and generated project
memories, `corpus.project_items`).

    python benchmarks/latency.py parts ../shared/data/locomo/locomo-dev.json --size 10000 \
        [--store DIR]

With --store, an existing store of the same corpus is reused (else one is built in a temp dir).
Run it on an idle machine. The table goes to stdout (benchmarks/results/query-parts.txt)."""


def _retriever(engine):
    """The engine's own retrieval collaborators, as a query gets them."""
    return Retriever(engine.storage.search, engine.index, engine.models, engine.retrieval)


def parts_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="latency.py parts")
    parser.add_argument("path")
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--store")
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args(argv)
    sample = json.loads(Path(args.path).read_text())[0]
    project = sample["sample_id"]
    asked = [qa["question"] for qa in questions(sample)][: args.queries]
    times: dict[str, list[float]] = {}

    def timed(label, fn):
        start = time.perf_counter()
        out = fn()
        times.setdefault(label, []).append((time.perf_counter() - start) * 1000)
        return out

    with (
        tempfile.TemporaryDirectory() as tmp,
        Engine.open(args.store or tmp, front="bench", cache=False) as engine,
    ):
        have = engine.db.read("SELECT count(*) FROM memories WHERE project = ?", (project,))[0][0]
        if have == 0:
            for item in project_items(sample, args.size):
                engine.store(item.params(project))
            assert engine.flush(timeout=7200)
            have = args.size
        for depth in DEPTHS:
            engine.query(params_for(p, depth, query="warm up", project=project))
        for q in asked:
            seen = engine.visibility(project, valid_at=None, as_of=None, include_user=False)
            lex = timed(
                "BM25 (FTS5, filters in SQL)", lambda: _retriever(engine).lexical(seen, q, 50)
            )
            qv = timed("query embedding", lambda: engine.models.embedder.embed([q])[0])
            vec = timed(
                "vector source (Chroma + SQL filters)",
                lambda: _retriever(engine).nearest(seen, qv, 50),
            )
            ids = list(set(lex) | set(vec))
            timed(
                "final gate (records through the filters)",
                lambda: engine.storage.search.visible(seen, ids, relations=False),
            )
            for depth in DEPTHS:
                timed(
                    f"query, depth {depth}",
                    lambda: engine.query(params_for(p, depth, query=q, project=project, k=25)),
                )
    print(f"# python {' '.join(shlex.quote(a) for a in sys.argv)}")
    print(f"# {have} memories, {len(asked)} questions; ms; load average {os.getloadavg()}\n")
    print("| part | p50 | p95 |")
    print("|---|---|---|")
    for label, values in times.items():
        values.sort()
        print(
            f"| {label} | {statistics.median(values):.2f} | "
            f"{values[int(0.95 * (len(values) - 1))]:.2f} |"
        )
    return 0


# ---------------------------------------------------------------- cache

"""Repeated queries: the same LoCoMo questions asked twice on one store,
the first time computed, the second from the query cache; plus the bulk ingest that built the
store (memory/ingest: all stored in one transaction, then waited for until indexed).

    python benchmarks/latency.py cache ../shared/data/locomo/locomo-dev.json \
        > benchmarks/results/query-cache.txt

Every other benchmark measures uncached queries (`Engine.open(..., cache=False)`). Output:
ingest rate, then p50/p95 of the first and the repeated ask (default depth), and the cache's
hits/misses from `stats`. Run it on an idle machine; the load average is printed."""

CACHE_PROJECT = "bench"


def cache_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="latency.py cache")
    parser.add_argument("path")
    parser.add_argument("--conversations", type=int, default=1)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args(argv)
    print(f"# python {' '.join(shlex.quote(a) for a in sys.argv)}")
    print(f"# load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    samples = json.loads(Path(args.path).read_text())[: args.conversations]
    items = [
        p.StoreParams(text=text, **({"valid_from": when} if when else {}))
        for s in samples
        for _, text, when in turns(s)
    ]
    questions = [qa["question"] for s in samples for qa in s["qa"]][: args.queries]
    with tempfile.TemporaryDirectory(prefix="memls-cache-bench-") as tmp:
        with Engine.open(tmp, front="bench") as engine:
            engine.query(p.QueryParams(query="warm up the models", project=CACHE_PROJECT))
            t0 = time.perf_counter()
            r = engine.ingest(p.IngestParams(project=CACHE_PROJECT, items=items))
            took = time.perf_counter() - t0
            print(
                f"ingest: {r.stored} memories fully indexed in {took:.1f} s "
                f"({r.stored / took:.1f} memories/s; indexed={r.indexed})"
            )
            first, again = [], []
            for question in questions:
                params = p.QueryParams(query=question, project=CACHE_PROJECT)
                a = engine.query(params)
                b = engine.query(params)
                assert not a.cached and b.cached
                first.append(a.took_ms or 0.0)
                again.append(b.took_ms or 0.0)
            stats = engine.stats(p.StatsParams(project=CACHE_PROJECT)).query_cache
    print(f"{len(questions)} questions, each asked twice (default depth):")
    print("| ask | p50 ms | p95 ms |")
    print("|---|---|---|")
    print(f"| first (computed) | {pct(first, 50):.2f} | {pct(first, 95):.2f} |")
    print(f"| repeated (cache) | {pct(again, 50):.3f} | {pct(again, 95):.3f} |")
    print(f"cache: {stats}")
    print(f"# load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


# ---------------------------------------------------------------- models

"""How fast are the packaged models here? Load time, embed throughput, cross-encoder latency.

    python benchmarks/latency.py models [--threads 2] [--texts 500] [--repeat 7] \
        [--rerank-batch 8] > benchmarks/results/models-speed.txt

Texts are LoCoMo dialog turns ("speaker: text") from shared/data when present, else made up.
Cross-encoder pairs are a LoCoMo question with turns (or two joined turns) chosen so each pair
is 55-65 tokens. Wall-clock numbers on a shared machine: run it idle, read the best column."""

LOCOMO = Path("/work/shared/data/locomo/locomo-dev.json")


def locomo_turns(path: Path, limit: int) -> tuple[list[str], list[str]]:
    """(turns, questions) from the LoCoMo dev file, or synthetic ones when it is absent."""
    if not path.exists():
        places = ["park", "museum", "lake", "concert", "library"] * (limit // 5 + 1)
        turns = [
            f"Speaker {i % 2}: I went to the {w} on day {i} and told my friend about the {w} trip."
            for i, w in enumerate(places)
        ]
        return turns[:limit], [f"When did the speaker go to the {w}?" for w in places[:5]]
    turns: list[str] = []
    questions: list[str] = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        for key, value in sample["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                turns.extend(f"{t['speaker']}: {t['text']}" for t in value)
        questions.extend(q["question"] for q in sample["qa"] if q.get("category") != 5)
    return turns[:limit], questions


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall-clock ms of each run."""
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000.0)
    return out


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def busy_ticks() -> tuple[int, int] | None:
    """(busy, total) CPU ticks of the whole machine from /proc/stat (Linux), else None."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split()[1:9]]
    except (OSError, ValueError):
        return None
    return sum(fields) - fields[3] - fields[4], sum(fields)


def others_share(start: tuple[int, int] | None, own_cpu_s: float) -> str:
    """How much of the machine other processes used during the run (noise warning)."""
    end = busy_ticks()
    if start is None or end is None:
        return "unknown"
    tick = os.sysconf("SC_CLK_TCK")
    busy, total = end[0] - start[0], end[1] - start[1]
    others = max(0.0, busy - own_cpu_s * tick) / max(total, 1)
    return f"{others:.0%} of all cores"


PAIR_SET = Path(__file__).resolve().parents[1] / "tests" / "data" / "conflict_pairs.jsonl"


def pair_rows(rt, repeat: int, rss_start: float) -> list[tuple[str, str]]:
    """The pair model: each labelled pair read in both orders, one call a pair (as the
    detector does for one candidate) and in one batch of ten candidates."""
    rows: list[tuple[str, str]] = []
    status = rt.pair.warm()
    rows.append(("pair model load", f"{status.load_ms or 0:.0f} ms ({status.state})"))
    rows.append(("peak RSS after loading it", f"{rss_mb():.0f} MB (+{rss_mb() - rss_start:.0f})"))
    size = Path(status.path or "") / "model.onnx"
    rows.append(("pair model file", f"{size.stat().st_size / 1e6:.1f} MB (int8 ONNX)"))
    pairs = [
        (d["new"], d["existing"])
        for d in map(json.loads, PAIR_SET.read_text(encoding="utf-8").splitlines()[:100])
    ]
    each = sorted(
        t for a, b in pairs for t in timed(lambda a=a, b=b: rt.pair.classify([(a, b), (b, a)]), 1)
    )
    rows.append(
        (
            f"one pair, both orders ({len(pairs)} pairs)",
            f"{statistics.median(each):.1f} ms median, p90 {each[int(0.9 * len(each))]:.1f} ms",
        )
    )
    ten = pairs[:10]
    both = [*ten, *((b, a) for a, b in ten)]
    runs = timed(lambda: rt.pair.classify(both), repeat)
    rows.append(
        (
            "ten candidates, both orders, one call",
            f"{statistics.median(runs):.0f} ms median "
            f"({statistics.median(runs) / 10:.1f} ms a pair)",
        )
    )
    rows.append(("peak RSS at the end", f"{rss_mb():.0f} MB"))
    return rows


def models_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="latency.py models")
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    parser.add_argument("--texts", type=int, default=500, help="texts to embed")
    parser.add_argument("--repeat", type=int, default=7, help="runs per measurement")
    parser.add_argument("--rerank-batch", type=int, default=8, help="cross-encoder batch size")
    parser.add_argument("--locomo", type=Path, default=LOCOMO)
    parser.add_argument(
        "--only", choices=("all", "pair"), default="all", help="pair: the pair model"
    )
    args = parser.parse_args(argv)

    from memls.models import ModelRuntime

    turns, questions = locomo_turns(args.locomo, args.texts)
    query = questions[0]
    rows: list[tuple[str, str]] = []
    rss_start = rss_mb()
    ticks_start, cpu_start = busy_ticks(), time.process_time()

    with ModelRuntime(intra_op_threads=args.threads, rerank_batch_size=args.rerank_batch) as rt:
        if args.only == "pair":
            _print_rows(args, pair_rows(rt, args.repeat, rss_start), ticks_start, cpu_start)
            return
        for s in (rt.embedder.warm(), rt.reranker.warm()):  # one after the other: own times
            rows.append((f"{s.name} load", f"{s.load_ms or 0:.0f} ms ({s.state})"))
        rows.append(
            ("peak RSS after loading both", f"{rss_mb():.0f} MB (+{rss_mb() - rss_start:.0f})")
        )

        runs = timed(lambda: rt.embedder.embed(turns), args.repeat)
        rows.append(
            (
                f"embed {len(turns)} turns (batch {rt.embedder.batch_size})",
                (
                    f"{len(turns) / min(runs) * 1000:.0f} texts/s "
                    f"(best {min(runs):.0f} ms, median {statistics.median(runs):.0f} ms)"
                ),
            )
        )
        if args.locomo.exists():  # what ingest embeds: the session date and speaker in front
            from locomo import turns as memory_texts

            samples = json.loads(args.locomo.read_text())
            stored = [t for s in samples for _, t, _ in memory_texts(s)][: args.texts]
            runs = timed(lambda: rt.embedder.embed(stored), args.repeat)
            rows.append(
                (
                    f"embed {len(stored)} memories as ingested ([date] speaker: text)",
                    f"{len(stored) / min(runs) * 1000:.0f} texts/s (best {min(runs):.0f} ms): "
                    "the ceiling of fully indexed ingest",
                )
            )
            # the int8 model quantizes activations per batch: a vector depends on its batch-mates
            alone = ModelRuntime(intra_op_threads=args.threads, embed_batch_size=1)
            with alone:
                single = alone.embedder.embed(stored[:64])
            together = (rt.embedder.embed(stored[:64]) * single).sum(axis=1)
            rows.append(
                (
                    f"64 memories in batches of {rt.embedder.batch_size} against one at a time",
                    f"cosine min {together.min():.4f}, mean {together.mean():.4f}",
                )
            )
        runs = timed(lambda: rt.embedder.embed_query(query), args.repeat * 10)
        rows.append(("embed one query", f"{statistics.median(runs):.1f} ms median"))

        tokenizer = rt.reranker._lazy.get().pairs
        candidates = turns + [f"{a} {b}" for a, b in itertools.pairwise(turns)]
        lengths = [len(e.ids) for e in tokenizer.encode_batch([(query, c) for c in candidates])]
        chosen = [c for c, n in zip(candidates, lengths, strict=True) if 55 <= n <= 65][:50]
        mean_tokens = statistics.mean(n for n in lengths if 55 <= n <= 65)
        for n in (6, 20, 50):
            pairs = chosen[:n]
            runs = timed(lambda pairs=pairs: rt.reranker.rerank(query, pairs), args.repeat)
            rows.append(
                (
                    f"cross-encoder {len(pairs)} pairs (~{mean_tokens:.0f} tokens)",
                    (
                        f"{statistics.median(runs):.0f} ms median, {min(runs):.0f} best, "
                        f"{min(runs) / len(pairs):.1f} ms a pair (best)"
                    ),
                )
            )
        rows.append(("peak RSS at the end", f"{rss_mb():.0f} MB"))
    _print_rows(args, rows, ticks_start, cpu_start)


def _print_rows(args, rows: list[tuple[str, str]], ticks_start, cpu_start: float) -> None:
    others = others_share(ticks_start, time.process_time() - cpu_start)
    rows.append(("CPU used by other processes meanwhile", others))
    print(f"$ {shlex.join([Path(sys.executable).name, *sys.argv])}")
    print(
        f"cores {os.cpu_count()}, intra-op threads {args.threads}, "
        f"cross-encoder batch {args.rerank_batch}, "
        f"texts from {args.locomo if args.locomo.exists() else 'synthetic'}"
    )
    width = max(len(k) for k, _ in rows)
    print(f"| {'measure':<{width}} | result |")
    print(f"|{'-' * (width + 2)}|--------|")
    for key, value in rows:
        print(f"| {key:<{width}} | {value} |")


if __name__ == "__main__":
    raise SystemExit(main())
