"""What citations cost the owner: the re-check after a save of a file cited 1,000 times, the
catch-up at start over 10,000 citations in 1,000 files, and the memory it takes.

    python benchmarks/citations_cost.py ../shared/data/history/click.bundle [--rounds 20]

The files are real (click's newest .py and .rst files, copied into 1,000 paths of a project
folder); each of 1,000 memories cites 10 random spans of one file (ingested through the
engine, lexical-only). The catch-up is the engine's `recheck_citations` after a "branch
switch" that inserts a line at the top of a tenth of the files (so a tenth of the citations
move) and edits one line in another tenth; it reads every file once, locates every citation
and records the changes in one transaction. RSS is the process's resident set (/proc).
Prints the load average: run it on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from memls import protocol
from memls.citations import FileView, anchor_span, locate
from memls.citations.tree import Workspace
from memls.engine import Engine


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def spans(view: FileView, rng: random.Random, n: int) -> list[tuple[int, int]]:
    out = []
    while len(out) < n:
        i = rng.randrange(len(view.norm))
        j = min(len(view.norm) - 1, i + rng.randrange(0, 8))
        out.append((view.line_of[i], view.line_of[j]))
    return out


def recheck_one_file(repo: Path, rng: random.Random, rounds: int) -> str:
    files = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "*.py"], capture_output=True, text=True, check=True
    ).stdout.split()
    path = max(files, key=lambda p: (repo / p).stat().st_size)
    text = (repo / path).read_text()
    view = FileView(text)
    anchors = [anchor_span(path, view, a, b) for a, b in spans(view, rng, 1000)]
    (repo / path).write_text("# a line added at the top\n" + text)
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        found = Workspace(repo, use_git=False).text(path)
        assert found is not None and found.view is not None
        states = Counter(locate(a, found.view).state for a in anchors)
        times.append((time.perf_counter() - started) * 1000)
    (repo / path).write_text(text)
    assert states["moved"] + states["fresh"] == 1000, states
    return (
        f"re-check after a save of {path} ({view.line_count} lines) cited 1,000 times: "
        f"median {statistics.median(times):.2f} ms, min {min(times):.2f} ms ({rounds} rounds)"
    )


def catch_up(repo: Path, tmp: Path, rng: random.Random) -> list[str]:
    sources = subprocess.run(
        ["git", "-C", str(repo), "ls-files", "*.py", "*.rst"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    sources = [s for s in sources if len(FileView((repo / s).read_text()).norm) >= 20]
    project = tmp / "project"
    texts: dict[str, str] = {}
    for k in range(1000):
        source = sources[k % len(sources)]
        rel = f"pkg{k // 50:02d}/m{k:04d}_{Path(source).name}"
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        texts[rel] = (repo / source).read_text()
        (project / rel).write_text(texts[rel])
    before = rss_mb()
    lines = []
    with Engine.open(tmp / "data", front="bench", vectors=False) as engine:
        items = []
        for k, (rel, text) in enumerate(texts.items()):
            view = FileView(text)
            cites = [
                protocol.CitationSpec(path=rel, start_line=a, end_line=b)
                for a, b in spans(view, rng, 10)
            ]
            items.append(
                protocol.StoreParams(
                    text=f"memory {k} about {rel}", citations=cites, infer_citations=False
                )
            )
        started = time.perf_counter()
        engine.ingest(protocol.IngestParams(project=str(project), items=items))
        stored = time.perf_counter() - started
        engine.flush()  # the indexer's drain of the ingest is not the catch-up's work
        stored_rss = rss_mb()
        names = list(texts)
        for rel in names[::10]:
            (project / rel).write_text("# switched\n" + texts[rel])
        for rel in names[5::10]:
            view = FileView(texts[rel])
            middle = view.line_of[len(view.norm) // 2]
            lines_now = view.lines
            lines_now[middle - 1] = lines_now[middle - 1] + "  # edited"
            lines_now[middle - 1] = "edited_" + lines_now[middle - 1].lstrip()
            (project / rel).write_text("\n".join(lines_now) + "\n")
        started = time.perf_counter()
        caught = engine.recheck_citations(str(project))  # what the owner runs at start
        seconds = time.perf_counter() - started
        started = time.perf_counter()
        result = engine.check_citations(protocol.CheckParams(project=str(project)))
        again = time.perf_counter() - started
        states = Counter(c.state for c in result.citations)
        after = rss_mb()
    lines.append(
        f"catch-up at start over {len(result.citations):,} citations in {len(texts):,} files: "
        f"{seconds:.2f} s ({len(caught.changed)} memories changed); then `memls check` of all "
        f"of them with nothing changed: {again:.2f} s ({dict(states)})"
    )
    lines.append(f"(storing the 1,000 memories with their citations: {stored:.1f} s)")
    lines.append(
        f"RSS: {before:.0f} MB before the engine, {stored_rss:.0f} MB after storing 10k "
        f"citations, {after:.0f} MB after the two checks"
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print("$ python benchmarks/citations_cost.py " + shlex.join(sys.argv[1:]))
    print(f"load average at the start {os.getloadavg()}; {os.cpu_count()} CPUs")
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        subprocess.run(
            ["git", "-c", "advice.detachedHead=false", "clone", "-q", str(args.bundle), str(repo)],
            check=True,
        )
        print(recheck_one_file(repo, rng, args.rounds))
        for line in catch_up(repo, Path(tmp), rng):
            print(line)
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
