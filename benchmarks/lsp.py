"""What an editor user feels: the memls language server driven over stdio by a real LSP client.

Builds a workspace of N note files (`.memls/notes-NNN.md`, a handful of list items each about
one made-up component) with exactly ONE contradicting pair of items in two different files, then
starts `python -m memls serve --stdio` with VS Code's client capabilities and measures:

- the `initialize` response (from spawning the server),
- the first request answered after `initialized` (it waits for the engine to open),
- time-to-first-diagnostic: from `initialized` to the first `memls` diagnostic published for the
  contradicting pair (the headline),
- the end of the indexing `$/progress`, and when every note unit is embedded (index_pending 0),
- `memory/store` and `memory/query` round trips over stdio, sequential, p50/p95/mean; queries with
  the default settings (hybrid + cross-encoder re-rank), `mode: interactive` and `rerank: false`.
  "first" is one extra request before the measured ones (models load lazily on first use).

    python benchmarks/lsp.py [--notes 200] [--requests 200] [--out benchmarks/results/lsp.txt]

The report goes to stdout and to --out.
    python benchmarks/lsp.py --check   # score every pair offline with the scorer, no server

Plain asyncio with pytest-lsp's client classes (no pytest).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import platform
import random
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, client_capabilities
from pytest_lsp.client import LanguageClient, make_test_lsp_client

ROOT = Path(__file__).resolve().parents[1]
SEED = 20240611
TIMEOUT = 900.0  # seconds, for any one wait

# ---------------------------------------------------------------- the workspace

OWNERS = [
    "Maria",
    "Priya",
    "Kenji",
    "Dana",
    "Tomasz",
    "Amara",
    "Lucas",
    "Fatima",
    "Joao",
    "Ingrid",
    "Wei",
    "Sofia",
    "Omar",
    "Hannah",
    "Ravi",
    "Elena",
]
DATABASES = [
    ("Postgres", ["14", "15", "16"]),
    ("MySQL", ["8.0", "8.4"]),
    ("Redis", ["7.2"]),
    ("MongoDB", ["6.0", "7.0"]),
    ("ClickHouse", ["24.3"]),
    ("Cassandra", ["4.1"]),
    ("SQLite", ["3.45"]),
]
PIPELINES = ["GitHub Actions", "Buildkite", "Jenkins", "CircleCI", "GitLab CI", "Argo Workflows"]
LOG_SINKS = ["Loki", "Elasticsearch", "Datadog", "Splunk", "CloudWatch"]
DASHBOARDS = ["Grafana", "Datadog", "Kibana"]

# Every template is one clause holding the component's name and a number: two items of one
# template differ in the component (so they are about different subjects) and both carry a
# value, which rules out the scorer's one-slot "choice change". Ports are unique per file and
# stay clear of 8080 / 9090, the contradicting pair's.
TEMPLATES = {
    "port": "The {C} service listens on port {port}",
    "owner": "{owner} owns {C} with a {page}-minute paging target",
    "store": "{C} keeps its data in {db} {dbv}",
    "deploy": "Deploys of {C} go through {ci} with {approvals}",
    "logs": "{C} logs ship to {logs} with {days}-day retention",
    "budget": "The {C} p99 latency budget is {budget} ms",
    "tests": "The {C} test suite runs with make test-{c} in about {minutes} minutes",
    "dashboard": "The {C} dashboard in {dash} refreshes every {refresh} seconds",
}
CONTRADICTION = ("The API gateway listens on port 8080", "The API gateway listens on port 9090")

STORE_TEMPLATE = (
    "Incident INC-{ticket} on {C} lasted {minutes} minutes until {owner} rolled it back"
)
QUERY_TEMPLATES = [
    "which port does the {C} service listen on",
    "who owns {C}",
    "what database does {C} use",
    "how are {C} deploys approved",
    "how long are {C} logs kept",
    "what is the p99 latency budget of {C}",
    "how do I run the {C} tests",
    "where is the {C} dashboard",
    "what happened in the last {C} incident",
    "which port does the API gateway use",
]


def component_names(n: int, rng: random.Random) -> list[str]:
    """n made-up, distinct, pronounceable component names ("Kavoren", "Tressil")."""
    onsets = [
        "b",
        "d",
        "f",
        "g",
        "k",
        "l",
        "m",
        "n",
        "p",
        "r",
        "s",
        "t",
        "v",
        "z",
        "br",
        "dr",
        "kr",
        "tr",
        "st",
        "gl",
    ]
    vowels = ["a", "e", "i", "o", "u"]
    # a closing consonant the contradiction scorer's stemmer leaves alone ("Gete" would stem
    # to the generic "get" and make every sentence about it share a subject with all others)
    codas = ["n", "r", "l", "x", "m", "k", "t"]
    names: set[str] = set()
    while len(names) < n:
        syllables = rng.choice([2, 3])
        word = "".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(syllables))
        names.add((word + rng.choice(codas)).capitalize())
    return sorted(names, key=lambda _: rng.random())


def make_notes(n: int) -> tuple[dict[str, str], tuple[str, str], list[str]]:
    """{relative path: text}, the two paths holding the contradicting pair, component names."""
    rng = random.Random(SEED)
    names = component_names(n, rng)
    files: dict[str, str] = {}
    first, second = n // 4, (3 * n) // 4
    for i, name in enumerate(names):
        db, versions = rng.choice(DATABASES)
        values = {
            "C": name,
            "c": name.lower(),
            "port": 8100 + i,
            "owner": rng.choice(OWNERS),
            "page": rng.choice([5, 10, 15, 30]),
            "db": db,
            "dbv": rng.choice(versions),
            "ci": rng.choice(PIPELINES),
            "approvals": rng.choice(
                ["1 required approval", "2 required approvals", "3 required approvals"]
            ),
            "logs": rng.choice(LOG_SINKS),
            "days": rng.choice([7, 14, 30, 90]),
            "budget": rng.choice([50, 100, 150, 200, 250, 400]),
            "dash": rng.choice(DASHBOARDS),
            "minutes": rng.choice([2, 4, 6, 8, 12]),
            "refresh": rng.choice([10, 30, 60]),
        }
        chosen = ["port", "owner"] + rng.sample(
            sorted(set(TEMPLATES) - {"port", "owner"}), rng.choice([2, 3, 4])
        )
        items = [TEMPLATES[t].format(**values) for t in chosen]
        if i == first:
            items.insert(1, CONTRADICTION[0])
        elif i == second:
            items.insert(2, CONTRADICTION[1])
        text = (
            f"# {name}\n\nThe {name} service was started in sprint {rng.randint(3, 80)}."
            f"\n\n## Facts\n\n" + "".join(f"- {item}\n" for item in items)
        )
        files[f".memls/notes-{i:03d}.md"] = text
    return files, (f".memls/notes-{first:03d}.md", f".memls/notes-{second:03d}.md"), names


def store_texts(names: list[str], count: int) -> list[str]:
    rng = random.Random(SEED + 1)
    return [
        STORE_TEMPLATE.format(
            ticket=1000 + k,
            C=names[k % len(names)],
            minutes=rng.choice([12, 25, 40, 55, 90]),
            owner=rng.choice(OWNERS),
        )
        for k in range(count)
    ]


def queries(names: list[str], count: int) -> list[str]:
    rng = random.Random(SEED + 2)
    return [
        QUERY_TEMPLATES[k % len(QUERY_TEMPLATES)].format(C=rng.choice(names)) for k in range(count)
    ]


def check(n: int, requests: int) -> int:
    """Offline: score every pair of note items, of stored texts, and every stored text against
    every note item, both ways, with the engine's scorer at cosine 1.0 (the most permissive
    gate: the engine only scores its 10 nearest neighbours, at their real cosine). Only the
    planted pair may contradict."""
    sys.path.insert(0, str(ROOT / "server"))
    from memls.conflicts.scorer import score_pair
    from memls.notes.parse import parse

    files, _, names = make_notes(n)
    items = [unit.text for text in files.values() for unit in parse(text)]
    stores = store_texts(names, requests + 1)
    pairs = itertools.chain(
        itertools.combinations(items, 2),
        itertools.combinations(stores, 2),
        itertools.product(stores, items),
    )
    hits, scored = [], 0
    for a, b in pairs:
        scored += 1
        for new, old in ((a, b), (b, a)):
            verdict = score_pair(new, old, similarity=1.0, similarity_kind="cosine")
            if verdict.contradiction:
                hits.append((new, old, [s.kind for s in verdict.signals]))
                break
    print(
        f"{len(items)} note units, {len(stores)} stored texts, {scored} pairs scored, "
        f"{len(hits)} contradict"
    )
    for new, old, kinds in hits:
        print(f"  {kinds}: {new!r} / {old!r}")
    planted = [h for h in hits if {h[0], h[1]} == set(CONTRADICTION)]
    return 0 if len(hits) == 1 and planted else 1


# ---------------------------------------------------------------- measuring


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def plain(value):
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class Recorder:
    """Timestamps (perf_counter) of what the server sends, next to pytest-lsp's own records."""

    def __init__(self) -> None:
        self.diagnostics: list[tuple[float, str, list[types.Diagnostic]]] = []
        self.first_diagnostic = asyncio.Event()
        self.first_diagnostic_at: float | None = None
        self.first_diagnostic_uri: str | None = None
        self.progress: list[tuple[float, object, str]] = []
        self.progress_end = asyncio.Event()
        self.notifications: dict[str, int] = {}
        self.expected: set[str] = set()


def make_client(rec: Recorder):
    def factory() -> LanguageClient:
        client = make_test_lsp_client()
        # pytest-lsp's own handlers keep client.diagnostics / progress_reports; wrap them
        default_diag = client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]
        default_progress = client.protocol.fm.features[types.PROGRESS]
        client.protocol.fm.features.pop(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        client.protocol.fm.features.pop(types.PROGRESS)

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(ls: LanguageClient, params: types.PublishDiagnosticsParams):
            now = time.perf_counter()
            mine = [d for d in params.diagnostics if d.source == "memls"]
            rec.diagnostics.append((now, params.uri, mine))
            if mine and params.uri in rec.expected and not rec.first_diagnostic.is_set():
                rec.first_diagnostic_at, rec.first_diagnostic_uri = now, params.uri
                rec.first_diagnostic.set()
            return default_diag(params)  # a partial with the client bound

        @client.feature(types.PROGRESS)
        def progress(ls: LanguageClient, params: types.ProgressParams):
            value = params.value or {}
            kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", "")
            rec.progress.append((time.perf_counter(), params.token, kind))
            if kind == "end":
                rec.progress_end.set()
            return default_progress(params)

        @client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(ls: LanguageClient, params: types.RegistrationParams):
            return None

        for method in ("memory/changed", "memory/conflicts"):

            @client.feature(method)
            def note(ls, params, method=method):
                rec.notifications[method] = rec.notifications.get(method, 0) + 1

        return client

    return factory


async def call(client: LanguageClient, method: str, **params):
    return plain(await client.protocol.send_request_async(method, params))


async def timed(client: LanguageClient, method: str, **params) -> tuple[float, dict]:
    t0 = time.perf_counter()
    result = await call(client, method, **params)
    return (time.perf_counter() - t0) * 1000, result


async def drained(client: LanguageClient, poll: float = 0.25) -> float:
    """Wait until the index worker has nothing pending; returns perf_counter at that moment."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        stats = await call(client, "memory/stats")
        if stats["indexPending"] == 0:
            return time.perf_counter()
        await asyncio.sleep(poll)
    raise TimeoutError("the index never drained")


def diagnostic_state(client: LanguageClient) -> dict[str, list[types.Diagnostic]]:
    return {
        uri: [d for d in diags if d.source == "memls"]
        for uri, diags in client.diagnostics.items()
        if any(d.source == "memls" for d in diags)
    }


def peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


async def run(args) -> dict:
    files, planted, names = make_notes(args.notes)
    out: dict = {"notes": len(files), "items": sum(t.count("\n- ") for t in files.values())}
    with tempfile.TemporaryDirectory(prefix="memls-lsp-bench-") as tmp:
        root = Path(tmp) / "proj"
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        rec = Recorder()
        rec.expected = {uris.from_fs_path(str(root / p)) for p in planted}
        env = {**os.environ, "MEMLS_DATA_DIR": str(Path(tmp) / "data")}
        config = ClientServerConfig(
            server_command=[sys.executable, "-m", "memls", "serve", "--stdio"],
            server_env=env,
            client_factory=make_client(rec),
        )
        spawned = time.perf_counter()
        client = await config.start()
        try:
            caps = client_capabilities("visual-studio-code")
            params = types.InitializeParams(
                capabilities=caps,
                process_id=os.getpid(),
                workspace_folders=[
                    types.WorkspaceFolder(uri=uris.from_fs_path(str(root)), name="proj")
                ],
            )
            client.capabilities = caps
            await client.initialize_async(params)
            out["initialize_ms"] = (time.perf_counter() - spawned) * 1000
            client.initialized(types.InitializedParams())
            initialized = time.perf_counter()

            async def first_request() -> float:
                await call(client, "memory/stats")
                return (time.perf_counter() - initialized) * 1000

            async def all_embedded() -> float:
                await rec.progress_end.wait()  # polling starts once every note is synced
                return await drained(client)

            first_req = asyncio.ensure_future(first_request())
            embedded = asyncio.ensure_future(all_embedded())
            out["drained_ms"] = (await asyncio.wait_for(embedded, TIMEOUT) - initialized) * 1000
            out["engine_open_ms"] = await first_req
            out["load_startup"] = os.getloadavg()[0]
            try:
                await asyncio.wait_for(rec.first_diagnostic.wait(), 30)
                out["ttfd_ms"] = (rec.first_diagnostic_at - initialized) * 1000
            except TimeoutError:
                out["ttfd_ms"] = None  # reported as missing
            begin = next((t for t, _, k in rec.progress if k == "begin"), None)
            end = next(t for t, _, k in rec.progress if k == "end")
            out["progress_begin_ms"] = (begin - initialized) * 1000 if begin else None
            out["progress_end_ms"] = (end - initialized) * 1000
            await asyncio.sleep(2.0)  # let the last diagnostics refresh (debounced) arrive
            state = diagnostic_state(client)
            conflicts = await call(client, "memory/conflicts", limit=1000)
            stats = await call(client, "memory/stats")
            out["memories"] = stats["memories"]
            out["diag_uris"] = len(state)
            out["diag_items"] = sum(len(v) for v in state.values())
            out["open_conflicts"] = len(conflicts["conflicts"])
            out["diag_ok"] = (
                set(state) == rec.expected and out["diag_items"] == 2 and out["open_conflicts"] == 1
            )
            out["diag_detail"] = [
                f"{Path(uris.to_fs_path(u) or u).name}:{d.range.start.line}: {d.message}"
                for u, ds in sorted(state.items())
                for d in ds
            ]
            out["conflict_detail"] = [
                f"{c['newer']['content']!r} / {c['older']['content']!r}"
                for c in conflicts["conflicts"]
            ]
            out["messages"] = [m.message for m in client.messages]

            # ------------------------------------------------ round trips
            rounds: dict[str, dict] = {}
            texts = store_texts(names, args.requests + 1)
            lat = []
            for text in texts:
                ms, result = await timed(client, "memory/store", text=text, type="note")
                assert result["created"], result
                lat.append(ms)
            rounds["memory/store"] = {"first": lat[0], "lat": lat[1:], "load": os.getloadavg()[0]}
            t0 = time.perf_counter()
            await drained(client)
            out["store_drain_ms"] = (time.perf_counter() - t0) * 1000
            qs = queries(names, args.requests + 1)
            for label, extra in (
                ("memory/query (default: hybrid + re-rank)", {}),
                ("memory/query mode=interactive", {"mode": "interactive"}),
                ("memory/query rerank=false", {"rerank": False}),
            ):
                lat, took = [], []
                for q in qs:
                    ms, result = await timed(client, "memory/query", query=q, **extra)
                    lat.append(ms)
                    took.append(result.get("tookMs"))
                    if result.get("degraded"):
                        out.setdefault("degraded", set()).update(result["degraded"])
                rounds[label] = {
                    "first": lat[0],
                    "lat": lat[1:],
                    "took": [t for t in took[1:] if t is not None],
                    "load": os.getloadavg()[0],
                }
            out["rounds"] = rounds
            out["server_rss_mb"] = peak_rss_mb(client._server.pid) if client._server else None
            out["notifications"] = dict(rec.notifications)
            await asyncio.sleep(2.0)
            after = diagnostic_state(client)
            out["diag_after"] = (len(after), sum(len(v) for v in after.values()))
            out["conflicts_after"] = len(
                (await call(client, "memory/conflicts", limit=1000))["conflicts"]
            )
        finally:
            await asyncio.wait_for(client.shutdown_session(), 60)
            await client.stop()
    return out


# ---------------------------------------------------------------- report


def machine() -> list[str]:
    cpu = ""
    try:
        cpu = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    return [
        f"machine: {os.cpu_count()} cores{f' ({cpu})' if cpu else ''}, "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}"
    ]


def report(args, out: dict, load_before, load_after, wall: float) -> str:
    fmt = "{:.1f}".format
    lines = [f"# python {' '.join(shlex.quote(a) for a in sys.argv)}", ""]
    lines += machine()
    lines.append(
        "load average (1/5/15 min): before "
        + " / ".join(f"{x:.2f}" for x in load_before)
        + ", after "
        + " / ".join(f"{x:.2f}" for x in load_after)
    )
    lines.append(
        f"workspace: {out['notes']} note files, {out['items']} list items and "
        f"{out['notes']} one-line paragraphs ({out['memories']} memories after "
        "indexing); one planted contradiction; "
        f"client capabilities: visual-studio-code; wall time {wall:.0f} s"
    )
    if out.get("server_rss_mb"):
        lines.append(f"server peak RSS: {out['server_rss_mb']} MB")
    lines += [
        "",
        "## Start-up (ms; after `initialized` unless said otherwise)",
        "",
        "| event | ms |",
        "|---|---:|",
        f"| `initialize` response (from spawning the server) | {fmt(out['initialize_ms'])} |",
        f"| first request answered (waits for the engine to open) | {fmt(out['engine_open_ms'])} |",
    ]
    if out.get("progress_begin_ms") is not None:
        lines.append(f"| indexing `$/progress` begin | {fmt(out['progress_begin_ms'])} |")
    lines += [
        f"| indexing `$/progress` end (all notes synced) | {fmt(out['progress_end_ms'])} |",
        f"| **first `memls` diagnostic (time-to-first-diagnostic)** "
        f"| **{fmt(out['ttfd_ms']) if out['ttfd_ms'] is not None else 'none'}** |",
        f"| every note unit embedded (index_pending 0, polled every 250 ms) "
        f"| {fmt(out['drained_ms'])} |",
        "",
        f"(1-minute load average once indexed: {out['load_startup']:.2f})",
        f"diagnostics after indexing: {out['diag_items']} on {out['diag_uris']} files, "
        f"{out['open_conflicts']} open conflict(s) -> "
        + ("OK (only the planted pair)" if out["diag_ok"] else "UNEXPECTED"),
    ]
    if not out["diag_ok"]:
        lines += [f"  - {d}" for d in out["diag_detail"]]
        lines += [f"  - conflict {c}" for c in out["conflict_detail"]]
    lines += [
        "",
        f"## Round trips over stdio ({args.requests} sequential requests each; "
        'ms; "first" is one extra request before them)',
        "",
        "| request | first | p50 | p95 | mean | max | server took p50 | load 1m after |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, r in out["rounds"].items():
        lat = r["lat"]
        took = fmt(statistics.median(r["took"])) if r.get("took") else "-"
        lines.append(
            f"| {label} | {fmt(r['first'])} | {fmt(pct(lat, 50))} | "
            f"{fmt(pct(lat, 95))} | {fmt(statistics.fmean(lat))} | {fmt(max(lat))} | "
            f"{took} | {r['load']:.2f} |"
        )
    lines += [
        "",
        f"stored memories fully indexed {out['store_drain_ms'] / 1000:.1f} s after the "
        f"last store was acknowledged; at the end: {out['diag_after'][1]} diagnostics on "
        f"{out['diag_after'][0]} files, {out['conflicts_after']} open conflict(s); "
        "notifications received: "
        + ", ".join(f"{k} x{v}" for k, v in sorted(out["notifications"].items())),
    ]
    if out.get("degraded"):
        lines.append("degraded: " + ", ".join(sorted(out["degraded"])))
    if out.get("messages"):
        lines += ["server messages:"] + [f"  - {m}" for m in out["messages"]]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=200, help="note files (default 200)")
    parser.add_argument(
        "--requests", type=int, default=200, help="measured requests per kind (default 200)"
    )
    parser.add_argument("--out", help="also write the report to this file")
    parser.add_argument(
        "--check", action="store_true", help="only score the generated items offline and exit"
    )
    args = parser.parse_args()
    if args.notes < 4:
        parser.error("--notes must be at least 4")
    if args.check:
        return check(args.notes, args.requests)
    load_before = os.getloadavg()
    started = time.perf_counter()
    out = asyncio.run(run(args))
    text = report(args, out, load_before, os.getloadavg(), time.perf_counter() - started)
    print(text, end="")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 0 if out["diag_ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
