"""What an agent feels: `memls mcp` over stdio (the official SDK's client), against the same
calls through the LSP front (`memls serve --stdio`, pytest-lsp's client) and the direct engine
call in this process.

One project of N memories (the list items of `benchmarks/lsp.py`'s generated notes, stored as
memories and embedded before anything is measured). Then, in each round, three owners of the
data directory one after the other (the order rotates between rounds), each alone so each is
the owner with the full engine (Chroma, both ONNX models):

- engine: `open_engine(serve=True)` in this process; the call is exactly the work the MCP tool
  hands to the engine (`memls.agent.work.recall` = `query` + the open contradictions of its hits,
  `work.remember` = `store` [+ wait for its contradiction check], `stats`);
- mcp: `python -m memls mcp`, roots = the project folder; `call_tool` round trips;
- lsp: `python -m memls serve --stdio`; `memory/query`, `memory/store`, `memory/stats`.

Sequential requests; a few warm-up requests per kind are not counted. The MCP front's overhead
is its p50 minus the engine's p50 for the same kind (the target: <= 5 ms).

    python benchmarks/mcp.py [--notes 200] [--requests 200] [--rounds 2]
                             [--out benchmarks/results/mcp.txt]

`--startup N` measures instead what an agent that starts `memls mcp` without waiting for it
sees: the time from spawning the `memls mcp` command (the console script, in a git
repository holding AGENTS.md and CLAUDE.md) to its answers to `initialize` and `tools/list`,
N times with the daemon up and N times with none running (the relay then starts the daemon:
also timed, to the answer of the first `recall`, which waits for it and for the notes):

    python benchmarks/mcp.py --startup 30 [--out benchmarks/results/mcp-startup.txt]

The report goes to stdout and to --out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# this file is named like the SDK's package: take its folder off the path, so `import mcp`
# finds the SDK, and load benchmarks/lsp.py (the note generator and helpers) by its path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]
sys.path.insert(0, str(ROOT / "server"))


def _load_lsp_bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location("lsp_bench", ROOT / "benchmarks" / "lsp.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lsp_bench = _load_lsp_bench()

WARMUP = 5
KINDS = ["recall", "remember (check: false)", "remember (check: true)", "stats"]
CLIENT_SIDE = {"recall, SDK call_tool": "recall", "stats, SDK call_tool": "stats"}


def seed(data: Path, project: str, items: list[str]) -> int:
    from memls import protocol
    from memls.daemon.handle import open_engine

    with open_engine(data, front="bench-seed") as engine:
        for text in items:
            engine.store(protocol.StoreParams(text=text, project=project, type="fact"))
        if not engine.flush(1800):
            raise SystemExit("the index never drained")
        return engine.stats(protocol.StatsParams(project=project)).memories


class Texts:
    """Fresh texts to remember (never a duplicate of an earlier one)."""

    def __init__(self, names: list[str], count: int) -> None:
        self.texts = iter(lsp_bench.store_texts(names, count))

    def __call__(self) -> str:
        return next(self.texts)


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


async def measure(
    call, arguments: list, warmup: int = WARMUP, front_ms: list[float] | None = None
) -> list[float]:
    """Round trips (ms). With front_ms: `call` returns the server's engine time of the call
    (its result's _meta), and front_ms gets each round trip minus it: the front's own share,
    measured in the same call under the same load."""
    for a in arguments[:warmup]:
        await call(a)
    out = []
    for a in arguments[warmup:]:
        t0 = time.perf_counter()
        inner = await call(a)
        out.append(_ms(t0))
        if front_ms is not None:
            front_ms.append(out[-1] - inner)
    return out


async def engine_phase(
    data: Path, project: str, qs: list[str], texts: Texts, n: int, checks: int
) -> dict[str, list[float]]:
    from memls import protocol
    from memls.agent import work
    from memls.agent.wire import RememberParams
    from memls.daemon.handle import open_engine

    engine = await asyncio.to_thread(open_engine, data, front="bench-engine", serve=True)
    try:

        async def run(fn):  # the engine call, synchronous, as a front's worker thread runs it
            return fn()

        out = {
            "recall": await measure(
                lambda q: run(
                    lambda: work.recall(engine, protocol.QueryParams(query=q, project=project))
                ),
                qs,
            ),
            "remember (check: false)": await measure(
                lambda t: run(
                    lambda: work.remember(
                        engine, RememberParams(text=t, project=project, type="lesson", check=False)
                    )
                ),
                [texts() for _ in range(n + WARMUP)],
            ),
            "remember (check: true)": await measure(
                lambda t: run(
                    lambda: work.remember(
                        engine, RememberParams(text=t, project=project, type="lesson")
                    )
                ),
                [texts() for _ in range(checks + WARMUP)],
            ),
            "stats": await measure(
                lambda _: run(lambda: engine.stats(protocol.StatsParams(project=project))),
                list(range(n + WARMUP)),
            ),
        }
    finally:
        await asyncio.to_thread(engine.close)
    return out


async def mcp_phase(
    data: Path, root: Path, qs: list[str], texts: Texts, n: int, checks: int
) -> dict[str, list[float]]:
    from mcp.client.stdio import stdio_client

    from mcp import ClientSession, StdioServerParameters, types

    async def roots(_ctx):
        return types.ListRootsResult(roots=[types.Root(uri=root.as_uri(), name=root.name)])

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memls", "--data-dir", str(data), "mcp"],
        env={**os.environ},
    )
    async with stdio_client(params) as (read, write):
        async with (
            ClientSession(
                read,
                write,
                list_roots_callback=roots,
                client_info=types.Implementation(name="bench", version="1"),
            ) as s,
            _daemon_stopped(data),
        ):  # the relay starts the daemon; the next phase owns
            await s.initialize()
            await s.list_tools()

            async def tool(name, arguments):
                # the request on the wire, as the LSP rows send theirs: ClientSession.call_tool
                # would also validate the structured result against the output schema on the
                # client side (measured apart below)
                result = await s.send_request(
                    types.ClientRequest(
                        types.CallToolRequest(
                            params=types.CallToolRequestParams(name=name, arguments=arguments)
                        )
                    ),
                    types.CallToolResult,
                )
                if result.isError:
                    raise RuntimeError(f"{name}: {result.content[0].text}")
                return (result.meta or {})["memls/engineMs"]

            async def validated(name, arguments):
                result = await s.call_tool(name, arguments)
                if result.isError:
                    raise RuntimeError(f"{name}: {result.content[0].text}")
                return result

            own = {k: [] for k in KINDS}
            return {
                "recall": await measure(
                    lambda q: tool("recall", {"query": q}), qs, front_ms=own["recall"]
                ),
                "remember (check: false)": await measure(
                    lambda t: tool("remember", {"text": t, "type": "lesson", "check": False}),
                    [texts() for _ in range(n + WARMUP)],
                    front_ms=own["remember (check: false)"],
                ),
                "remember (check: true)": await measure(
                    lambda t: tool("remember", {"text": t, "type": "lesson"}),
                    [texts() for _ in range(checks + WARMUP)],
                    front_ms=own["remember (check: true)"],
                ),
                "stats": await measure(
                    lambda _: tool("stats", {}), list(range(n + WARMUP)), front_ms=own["stats"]
                ),
                **{f"{k}, front's own": v for k, v in own.items()},
                "recall, SDK call_tool": await measure(
                    lambda q: validated("recall", {"query": q}), qs
                ),
                "stats, SDK call_tool": await measure(
                    lambda _: validated("stats", {}), list(range(n + WARMUP))
                ),
                "ping": await measure(lambda _: s.send_ping(), list(range(n + WARMUP))),
            }


@contextlib.asynccontextmanager
async def _daemon_stopped(data: Path):
    """Stop the daemon `memls mcp` started, once the phase is over (it outlives the relay)."""
    import select
    import signal

    try:
        yield
    finally:
        lock = data / "owner.lock"
        text = lock.read_text().strip() if lock.exists() else ""
        if text.isdigit() and int(text) != os.getpid():
            try:
                fd = os.pidfd_open(int(text))
                os.kill(int(text), signal.SIGTERM)
                select.select([fd], [], [], 120)
                os.close(fd)
            except ProcessLookupError:
                pass


async def lsp_phase(
    data: Path, root: Path, qs: list[str], texts: Texts, n: int, checks: int
) -> dict[str, list[float]]:
    from lsprotocol import types
    from pygls import uris
    from pytest_lsp import ClientServerConfig, client_capabilities

    env = {**os.environ, "MEMLS_DATA_DIR": str(data)}
    client = await ClientServerConfig(
        server_command=[sys.executable, "-m", "memls", "serve", "--stdio"], server_env=env
    ).start()

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(ls, params):
        return None

    for method in ("memory/changed", "memory/conflicts"):

        @client.feature(method)
        def note(ls, params):
            return None

    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            workspace_folders=[
                types.WorkspaceFolder(uri=uris.from_fs_path(str(root)), name=root.name)
            ],
        )
    )
    try:

        async def request(method, **params):
            return await client.protocol.send_request_async(method, params)

        return {
            "recall": await measure(lambda q: request("memory/query", query=q), qs),
            "remember (check: false)": await measure(
                lambda t: request("memory/store", text=t, type="lesson"),
                [texts() for _ in range(n + WARMUP)],
            ),
            "stats": await measure(lambda _: request("memory/stats"), list(range(n + WARMUP))),
        }
    finally:
        await client.shutdown_session()


async def run(args) -> dict:
    files, _, names = lsp_bench.make_notes(args.notes)
    items = [
        line[2:] for text in files.values() for line in text.splitlines() if line.startswith("- ")
    ]
    per_round = max(1, args.requests // args.rounds)
    checks = max(1, args.checks // args.rounds)
    texts = Texts(names, 3 * args.rounds * (2 * per_round + checks + 3 * WARMUP))
    qs = lsp_bench.queries(names, per_round + WARMUP)
    lat: dict[str, dict[str, list[float]]] = {f: {} for f in ("engine", "mcp", "lsp")}
    loads: list[float] = []
    with tempfile.TemporaryDirectory(prefix="memls-mcp-bench-") as tmp:
        root = Path(tmp) / "proj"
        root.mkdir()
        data = Path(tmp) / "data"
        project = str(root.resolve())
        t0 = time.perf_counter()
        memories = seed(data, project, items)
        seeded_s = _ms(t0) / 1000
        order = ["engine", "mcp", "lsp"]
        for r in range(args.rounds):
            for front in order[r % 3 :] + order[: r % 3]:
                phase = {
                    "engine": lambda: engine_phase(data, project, qs, texts, per_round, checks),
                    "mcp": lambda: mcp_phase(data, root, qs, texts, per_round, checks),
                    "lsp": lambda: lsp_phase(data, root, qs, texts, per_round, checks),
                }[front]
                got = await phase()
                for kind, values in got.items():
                    lat[front].setdefault(kind, []).extend(values)
                loads.append(os.getloadavg()[0])
                print(f"round {r + 1}: {front} done", file=sys.stderr)
    return {
        "lat": lat,
        "memories": memories,
        "seeded_s": seeded_s,
        "loads": loads,
        "per_round": per_round,
        "checks": checks,
    }


def report(args, out: dict, load_before, wall: float) -> tuple[str, bool]:
    fmt = "{:.1f}".format
    pct = lsp_bench.pct
    lines = [f"# python {' '.join(shlex.quote(a) for a in sys.argv)}", ""]
    lines += lsp_bench.machine()
    lines.append(
        "load average (1/5/15 min) before: "
        + " / ".join(f"{x:.2f}" for x in load_before)
        + "; 1 min after each phase: "
        + ", ".join(f"{x:.2f}" for x in out["loads"])
    )
    lines.append(
        f"project: {out['memories']} memories (the list items of {args.notes} "
        f"generated note files, stored and embedded in {out['seeded_s']:.0f} s); "
        f"{args.rounds} rounds of engine / mcp / lsp (order rotated), each a fresh "
        f"owner of the data directory; {out['per_round']} requests per kind per round "
        f"({out['checks']} for remember with check), {WARMUP} warm-up requests per "
        f"kind not counted; wall time {wall:.0f} s"
    )
    lines += [
        "",
        "## Round trips (ms, sequential)",
        "",
        "| call | front | n | p50 | p95 | mean | MCP p50 minus the engine's p50 |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    ok = True
    what = {
        "engine": "engine call (in process)",
        "mcp": "MCP `tools/call` (stdio)",
        "lsp": "LSP `memory/*` (stdio)",
    }
    for kind in KINDS:
        base = out["lat"]["engine"].get(kind)
        for front in ("engine", "mcp", "lsp"):
            values = out["lat"][front].get(kind)
            if not values:
                continue
            extra = "-"
            if front == "mcp" and base:
                over = pct(values, 50) - pct(base, 50)
                extra = f"**{over:+.1f}**"
                ok = ok and over <= 5.0
            lines.append(
                f"| {kind} | {what[front]} | {len(values)} | {fmt(pct(values, 50))} | "
                f"{fmt(pct(values, 95))} | {fmt(statistics.fmean(values))} | {extra} |"
            )
    lines += [
        "",
        "## The MCP front's own share of each call, measured in the call itself (ms)",
        "",
        "Each MCP result carries the engine's time of the call in its `_meta` "
        "(`memls/engineMs`, timed on the server's worker thread around exactly the work "
        "of the engine row); the round trip minus it is what the front adds: the stdio "
        "transport both ways, the SDK's message handling, argument checks, the project "
        "from the roots, the hop to the worker thread and back, rendering and encoding. "
        "Same call, same moment, same load: this is the number for the target.",
        "",
        "| call | n | p50 | p95 | mean |",
        "|---|---:|---:|---:|---:|",
    ]
    own_ok = True
    for kind in KINDS:
        values = out["lat"]["mcp"].get(f"{kind}, front's own")
        if values:
            own_ok = own_ok and pct(values, 50) <= 5.0
            lines.append(
                f"| {kind} | {len(values)} | **{fmt(pct(values, 50))}** | "
                f"{fmt(pct(values, 95))} | {fmt(statistics.fmean(values))} |"
            )
    ping = out["lat"]["mcp"].get("ping")
    if ping:
        lines += [
            f"| (`ping`: the SDK's request/response both ways, no memls code) | {len(ping)} | "
            f"{fmt(pct(ping, 50))} | {fmt(pct(ping, 95))} | {fmt(statistics.fmean(ping))} |"
        ]
    lines += [
        "",
        "## The SDK's own client (ms): `ClientSession.call_tool` also validates the "
        "structured result against the tool's output schema (jsonschema, on the client)",
        "",
        "| call | n | p50 | p95 | mean | over the wire request (p50) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, kind in CLIENT_SIDE.items():
        values, wire = out["lat"]["mcp"].get(label), out["lat"]["mcp"].get(kind)
        if values and wire:
            lines.append(
                f"| {label} | {len(values)} | {fmt(pct(values, 50))} | "
                f"{fmt(pct(values, 95))} | {fmt(statistics.fmean(values))} | "
                f"{pct(values, 50) - pct(wire, 50):+.1f} |"
            )
    lines += [
        "",
        "The MCP rows of the first table are the `tools/call` request on the wire "
        "(`ClientSession.send_request`), like the LSP rows (`send_request_async`): what "
        "the server and the transport cost, whatever the client does with the result.",
        "",
        "recall through MCP = `memory/query` + the other statement of each open "
        "contradiction its hits carry (`contradictions`), rendered as cited text beside the "
        "structured result; the LSP row is `memory/query` alone. remember with check "
        "waits for the statement's contradiction check (embedding + nearest neighbours + "
        "scorer); the LSP front has no such call. stats is the lightest call: its MCP "
        "row is mostly the front's own cost.",
        "",
        "target: the MCP front adds <= 5 ms p50 over the engine call -> "
        + ("MET for every call" if own_ok else "NOT MET for every call")
        + " (its own share, above; per call: "
        + ", ".join(
            f"{kind} {pct(v, 50):.1f}"
            for kind in KINDS
            if (v := out["lat"]["mcp"].get(f"{kind}, front's own"))
        )
        + "); across separate processes and moments (the first "
        "table's last column): "
        + ("within 5 ms" if ok else "not within 5 ms")
        + ", which on this shared machine includes the load of the moment",
    ]
    return "\n".join(lines) + "\n", own_ok


def _spawn_session(memls: str, data: Path, project: Path, recall: bool) -> dict[str, float]:
    """One `memls mcp` from spawn: ms to initialize's answer, to tools/list's, to recall's."""
    import json
    import subprocess

    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    if recall:
        call = {"name": "recall", "arguments": {"query": "how do we deploy?"}}
        lines.append({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call})
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [memls, "--data-dir", str(data), "mcp"],
        cwd=project,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    proc.stdin.flush()
    seen: dict[str, float] = {}
    names = {1: "initialize", 2: "tools/list", 3: "recall"}
    while len(seen) < (3 if recall else 2):
        line = proc.stdout.readline()
        if not line:
            break
        reply = json.loads(line)
        if reply.get("id") in names:
            seen[names[reply["id"]]] = _ms(t0)
            if reply["id"] == 3:
                seen["recall found the note"] = float(
                    "Jenkins" in json.dumps(reply.get("result", {}))
                )
    proc.stdin.close()
    proc.wait(timeout=60)
    return seen


def startup(args) -> str:
    """--startup: see the module doc."""
    import shutil
    import signal
    import subprocess

    memls = shutil.which("memls", path=str(Path(sys.executable).parent)) or "memls"
    root = Path(tempfile.mkdtemp(prefix="memls-mcp-startup-"))
    project = root / "demo"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "AGENTS.md").write_text("- Deploys go through Jenkins.\n")
    (project / "CLAUDE.md").write_text(
        "- We switched from Jenkins to GitHub Actions for deploys.\n"
    )
    data = root / "data"

    def stop_daemon() -> None:
        lock = data / "owner.lock"
        text = lock.read_text().strip() if lock.exists() else ""
        if text.isdigit():
            try:
                os.kill(int(text), signal.SIGTERM)
                fd = os.pidfd_open(int(text))
                import select

                select.select([fd], [], [], 60)
                os.close(fd)
            except ProcessLookupError:
                pass

    cold: list[dict[str, float]] = []
    warm: list[dict[str, float]] = []
    load = os.getloadavg()
    for n in range(args.startup):
        stop_daemon()
        cold.append(_spawn_session(memls, data, project, recall=True))
        warm.append(_spawn_session(memls, data, project, recall=n == 0))
    stop_daemon()
    shutil.rmtree(root, ignore_errors=True)

    def row(name: str, runs: list[dict[str, float]], key: str) -> str:
        values = sorted(r[key] for r in runs if key in r)
        if not values:
            return f"| {name} | {key} | - | - | - |"
        p50 = statistics.median(values)
        return f"| {name} | {key} | {p50:.0f} | {max(values):.0f} | {len(values)} |"

    found = sum(r.get("recall found the note", 0) for r in cold)
    lines = [
        f"$ python benchmarks/mcp.py --startup {args.startup}",
        f"load before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; after: "
        + " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "",
        "ms from spawning `memls mcp` to its answer",
        "",
        "| daemon | answer | p50 ms | max ms | runs |",
        "|---|---|---|---|---|",
        row("up", warm, "initialize"),
        row("up", warm, "tools/list"),
        row("none (the relay starts it)", cold, "initialize"),
        row("none (the relay starts it)", cold, "tools/list"),
        row("none (the relay starts it)", cold, "recall"),
        "",
        f"the first recall of a cold start held AGENTS.md's line: {found:.0f} of {len(cold)}",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--startup", type=int, default=0, help="measure start-up instead, N times each way"
    )
    parser.add_argument("--notes", type=int, default=200, help="note files (default 200)")
    parser.add_argument(
        "--requests",
        type=int,
        default=200,
        help="measured requests per kind and front, over all rounds",
    )
    parser.add_argument(
        "--checks",
        type=int,
        default=60,
        help="measured remember-with-check requests per front (default 60)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds (default 2)")
    parser.add_argument("--out", help="also write the report to this file")
    args = parser.parse_args()
    if args.startup:
        text = startup(args)
        print(text, end="")
        if args.out:
            Path(args.out).write_text(text)
        return 0
    load_before = os.getloadavg()
    started = time.perf_counter()
    out = asyncio.run(run(args))
    text, ok = report(args, out, load_before, time.perf_counter() - started)
    print(text, end="")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
