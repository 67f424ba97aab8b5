"""What a Claude Code hook costs: the wall time of one `memls-hook` call, process start
included, as Claude Code runs it (a new process, the hook's JSON on stdin, its output read).

One project of N memories (LoCoMo's first dev conversation's distractor generator from
`corpus.py`: a project's decisions, conventions, facts and lessons and chat-like notes), all
embedded first. Then `memls serve --socket` (the full engine: Chroma, both ONNX models) and,
after a few warm-up calls, sequential calls of:

- SessionStart: a new session each call (so each gets the whole standing briefing);
- UserPromptSubmit: the conversation's dev questions as prompts, a new session each call;
- for scale, interleaved with them (so the host's load drifts over all alike): `python -S -c
  pass`, the same interpreter as the installed hook command (the floor of any Python hook),
  and the same `memory/context` request sent on the socket from this process (the daemon's
  share: no process start).

Then with no daemon: a fresh data directory each time, a project holding one CLAUDE.md line;
the SessionStart call starts the daemon, waits for it and must brief the session with that
line (the daemon is stopped afterwards).

    python benchmarks/hooks.py [--memories 1000] [--calls 60] [--out benchmarks/results/hooks.txt]

`--idle N` measures instead what watched projects cost the daemon: N projects (each a git
repository with AGENTS.md, CLAUDE.md, three decision records and a node_modules of 200
folders), named with `memory/watch`; then the daemon's RSS, threads, inotify watches and CPU
over 30 idle seconds, and, restarted with all N watched, its time to the first answer and to
the first briefing of one of them:

    python benchmarks/hooks.py --idle 50 [--out benchmarks/results/hooks-idle.txt]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import distractors, questions
from memls import protocol, reach
from memls.daemon import open_engine
from memls.hooks import client
from memls.models.tokens import TokenCounter
from memls.ownership import OwnerLock

LOCOMO = Path("/work/shared/data/locomo/locomo-dev.json")
HOOK = [sys.executable, "-S", client.__file__]  # as `memls hooks install` writes it


def kind_of(text: str) -> str:
    for prefix, kind in (
        ("Decision", "decision"),
        ("Convention", "convention"),
        ("Lesson", "lesson"),
    ):
        if text.startswith(prefix):
            return kind
    if " prefers " in text:
        return "preference"
    return "fact" if any(w in text for w in (" owns ", " port ", "Rate limit")) else "note"


def seed(data_dir: Path, project: str, sample: dict, count: int) -> dict[str, int]:
    items = [
        protocol.StoreParams(
            text=i.text,
            type=kind_of(i.text),
            project=project,  # type: ignore[arg-type]
            valid_from=i.valid_from,
        )
        for i in distractors(sample, count)
    ]
    with open_engine(data_dir, front="benchmark") as engine:
        engine.ingest(protocol.IngestParams(items=items, project=project))
        return dict(engine.stats(protocol.StatsParams(project=project)).by_type)


CPU: dict[str, list[float]] = {}  # the calling process's CPU time (user + sys), by label


def timed(
    args: list[str], stdin: str, label: str = ""
) -> tuple[float, subprocess.CompletedProcess]:
    """Wall time of one call (ms); with a label, its CPU time is kept in CPU[label]."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=60)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if label:
        used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        CPU.setdefault(label, []).append(used * 1000)
    return wall, result


def event(name: str, project: str, session: str, **extra: str) -> str:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": "/dev/null",
            "cwd": project,
            "permission_mode": "default",
            "hook_event_name": name,
            **extra,
        }
    )


def summary(label: str, times: list[float]) -> str:
    # inclusive: a percentile never lies past the largest time seen (a few cold starts)
    q = statistics.quantiles(times, n=20, method="inclusive") if len(times) > 1 else times * 19
    return (
        f"{label:<34} n={len(times):<4} p50 {statistics.median(times):7.1f} ms   "
        f"p95 {q[18]:7.1f} ms   max {max(times):7.1f} ms"
    )


def stop(data_dir: Path) -> None:
    """SIGTERM to the data directory's owner, and wait for its exit."""
    import select

    owner = OwnerLock(data_dir).holder() if data_dir.exists() else None
    if not owner:
        return
    try:
        fd = os.pidfd_open(owner)
        os.kill(owner, signal.SIGTERM)
        select.select([fd], [], [], 120)
        os.close(fd)
    except ProcessLookupError:
        pass


def proc_figures(pid: int) -> dict[str, float]:
    """RSS (MiB), threads, inotify watches and CPU seconds of a process, from /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    rss = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
    threads = next(
        int(line.split()[1]) for line in status.splitlines() if line.startswith("Threads")
    )
    watches = 0
    for info in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            watches += info.read_text().count("inotify wd:")
        except OSError:
            continue
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return {"rss": rss / 1024, "threads": threads, "watches": watches, "cpu": cpu}


def idle(args) -> int:
    """--idle N: see the module doc."""
    lines = ["$ " + shlex.join(["python", "benchmarks/hooks.py", *sys.argv[1:]])]
    lines.append(
        f"host: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start"
    )
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        projects = []
        for n in range(args.idle):
            root = Path(tmp) / f"p{n:03d}"
            (root / ".git").mkdir(parents=True)
            (root / "AGENTS.md").write_text(f"- Service {n} deploys through Jenkins.\n")
            (root / "CLAUDE.md").write_text(f"- Service {n} switched to GitHub Actions.\n")
            (root / "docs" / "adr").mkdir(parents=True)
            for k in range(3):
                (root / "docs" / "adr" / f"{k:04d}-choice.md").write_text(
                    f"# ADR {k}\n\n## Decision\n\nService {n} uses option {k}.\n"
                )
            for k in range(200):
                (root / "node_modules" / f"pkg{k}").mkdir(parents=True)
            projects.append(str(root))

        def start() -> tuple[subprocess.Popen, float]:
            began = time.perf_counter()
            daemon = subprocess.Popen(
                [sys.executable, "-m", "memls", "--data-dir", str(data_dir), "serve", "--socket"],
                stderr=subprocess.PIPE,
                text=True,
            )
            assert "serving" in daemon.stderr.readline()
            return daemon, (time.perf_counter() - began) * 1000

        daemon, _ = start()
        conn = reach.Connection(str(data_dir), "bench", 120.0)
        conn.request("memory/watch", {"project": projects[0], "wait": 60})
        conn.request("$/flush", {"timeout": 600})  # the models and Chroma loaded: not a project's
        time.sleep(5)
        before = proc_figures(daemon.pid)
        began = time.perf_counter()
        for project in projects[1:]:
            conn.request("memory/watch", {"project": project, "wait": 60})
        scanned = time.perf_counter() - began
        conn.request("$/flush", {"timeout": 600})
        conn.close()
        time.sleep(5)  # the watch set settles (watchfiles is restarted once per new folder set)
        settled = proc_figures(daemon.pid)
        time.sleep(30)
        after = proc_figures(daemon.pid)
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=120)
        daemon, served_ms = start()
        conn = reach.Connection(str(data_dir), "bench", 120.0)
        began = time.perf_counter()
        conn.request("$/hello", {"front": "bench"})
        hello_ms = served_ms + (time.perf_counter() - began) * 1000
        began = time.perf_counter()
        conn.request("memory/watch", {"project": projects[-1], "wait": 30})
        brief = conn.request("memory/context", {"project": projects[-1]})
        briefed_ms = hello_ms + (time.perf_counter() - began) * 1000
        assert "GitHub Actions" in brief["markdown"], brief
        conn.close()
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=120)
    n = args.idle - 1
    lines += [
        "",
        f"{args.idle} watched projects (5 notes and 200 node_modules folders each); the first one "
        "loads the models and Chroma, the other {n} are measured".replace("{n}", str(n)),
        "",
        "| | 1 project | {m} projects | each project more |".replace("{m}", str(args.idle)),
        "|---|---:|---:|---:|",
        f"| daemon RSS, MiB | {before['rss']:.0f} | {settled['rss']:.0f} | "
        f"{(settled['rss'] - before['rss']) / n:.2f} |",
        f"| threads | {before['threads']:.0f} | {settled['threads']:.0f} | "
        f"{(settled['threads'] - before['threads']) / n:.2f} |",
        f"| inotify watches | {before['watches']:.0f} | {settled['watches']:.0f} | "
        f"{(settled['watches'] - before['watches']) / n:.2f} |",
        f"| CPU over 30 idle s, ms | - | {(after['cpu'] - settled['cpu']) * 1000:.0f} | "
        f"{(after['cpu'] - settled['cpu']) * 1000 / n:.1f} |",
        "",
        f"first reading of {n} projects' notes: {scanned:.1f} s ({scanned / n * 1000:.0f} ms a "
        "project, embedding after)",
        f"restart with {args.idle} watched: serving the socket {served_ms:.0f} ms after the "
        f"spawn, the first answer {hello_ms:.0f} ms, the first briefing of one of them "
        f"{briefed_ms:.0f} ms",
        f"host: load average {os.getloadavg()[0]:.1f} at the end",
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--idle", type=int, default=0, help="measure N idle watched projects")
    ap.add_argument("--memories", type=int, default=1000)
    ap.add_argument("--calls", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--cold", type=int, default=5, help="calls with no daemon")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "hooks.txt")
    args = ap.parse_args()
    if args.idle:
        if args.out == ap.get_default("out"):
            args.out = ROOT / "benchmarks" / "results" / "hooks-idle.txt"
        return idle(args)
    lines = ["$ " + shlex.join(["python", "benchmarks/hooks.py", *sys.argv[1:]])]

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    say(f"host: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    sample = json.loads(LOCOMO.read_text())[0]
    prompts = [q["question"] for q in questions(sample)]
    counter = TokenCounter()
    with tempfile.TemporaryDirectory() as tmp:
        data_dir, project = Path(tmp) / "data", str(Path(tmp) / "shop")
        Path(project).mkdir()
        by_type = seed(data_dir, project, sample, args.memories)
        say(f"project: {sum(by_type.values())} memories {json.dumps(by_type, sort_keys=True)}")
        daemon = subprocess.Popen(
            [sys.executable, "-m", "memls", "--data-dir", str(data_dir), "serve", "--socket"],
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert "serving" in daemon.stderr.readline()
            hook = [*HOOK, "--project", project, "--data-dir", str(data_dir)]
            for n in range(args.warmup):
                timed(hook, event("UserPromptSubmit", project, f"warm-{n}", prompt=prompts[n]))
                timed(hook, event("SessionStart", project, f"warm-s{n}", source="startup"))
            floor, direct_start, direct_ask = [], [], []
            starts, asks, start_tokens, ask_tokens = [], [], [], []
            for n in range(args.calls):
                floor.append(timed([sys.executable, "-S", "-c", "pass"], "", "floor")[0])
                for kind, params in (
                    (direct_start, {"project": project, "session": f"d-{n}"}),
                    (
                        direct_ask,
                        {
                            "project": project,
                            "session": f"dp-{n}",
                            "standing": False,
                            "budget": 400,
                            "prompt": prompts[(n + 31) % len(prompts)],
                        },
                    ),
                ):
                    began = time.perf_counter()
                    conn = reach.Connection(str(data_dir), "bench", 30.0)
                    conn.request("memory/context", params)
                    conn.close()
                    kind.append((time.perf_counter() - began) * 1000)
                ms, r = timed(
                    hook, event("SessionStart", project, f"s-{n}", source="startup"), "start"
                )
                assert r.returncode == 0 and r.stdout, r.stderr
                starts.append(ms)
                text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
                start_tokens.append(counter.count(text))
                prompt = prompts[(n + 7) % len(prompts)]
                ms, r = timed(
                    hook, event("UserPromptSubmit", project, f"p-{n}", prompt=prompt), "ask"
                )
                assert r.returncode == 0, r.stderr
                asks.append(ms)
                if r.stdout:
                    text = json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
                    ask_tokens.append(counter.count(text))
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=120)
    say()
    say("wall time of one call, process start included (daemon running, full engine):")
    say(summary("python -S -c pass (the floor)", floor))
    say(summary("memls-hook SessionStart", starts))
    say(summary("memls-hook UserPromptSubmit", asks))
    say("CPU time of the hook's own process (user + sys; what the host's load multiplies):")
    for label, name in (
        ("floor", "python -S -c pass"),
        ("start", "SessionStart"),
        ("ask", "UserPromptSubmit"),
    ):
        say(f"  {name:<32} p50 {statistics.median(CPU[label]):6.1f} ms")
    say("the daemon's share (the same request on the socket, no process start):")
    say(summary("memory/context, SessionStart's", direct_start))
    say(summary("memory/context, a prompt's", direct_ask))
    say(
        f"briefing tokens ({counter.name}): SessionStart p50 {statistics.median(start_tokens):.0f}"
        f" (budget 800), UserPromptSubmit p50 "
        f"{statistics.median(ask_tokens) if ask_tokens else 0:.0f} (budget 400)"
    )
    cold = []
    for _ in range(args.cold):
        with tempfile.TemporaryDirectory() as tmp:
            data_dir = Path(tmp) / "data"
            (Path(tmp) / "CLAUDE.md").write_text("- Card numbers are never logged.\n")
            ms, r = timed(
                [*HOOK, "--project", tmp, "--data-dir", str(data_dir)],
                event("SessionStart", tmp, "cold", source="startup"),
            )
            assert r.returncode == 0 and "Card numbers" in r.stdout, (r.stdout, r.stderr)
            cold.append(ms)
            stop(data_dir)
    say()
    say("no daemon (the hook starts one, waits for it, and briefs the session with its notes):")
    say(summary("memls-hook SessionStart, no daemon", cold))
    say(f"\nhost: load average {os.getloadavg()[0]:.1f} at the end")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
