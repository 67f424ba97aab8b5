"""Citations followed through real history: states against the truth from git, and their cost.
Three runs: the history walk (below), `cost` and `query-cost` (further down).

    python benchmarks/citations.py ../shared/data/history/click.bundle \
        [--base 700 --step 5 --checkpoints 25 --spans 600 --symbols 300 --seed 7]

Clones the bundle into a temporary folder, checks out the BASE-th commit of the first-parent
history, cites random spans (1-12 lines starting and ending on a non-blank line, in .py, .rst,
.txt, .md, .cfg, .ini, .toml files) and random definitions (Python, by tree-sitter), then
checks out each of CHECKPOINTS later commits (every STEP-th) and compares the tracker's state
of every citation (memls.citations.tree.Workspace: what the daemon and `memls check` run)
with the truth from `git diff -M -w -U0 BASE COMMIT` (the truth: further down). It
runs the tracker twice: with git's rename detection, and without git (renames followed by
content only). Then it times the re-check of one file cited 1,000 times.

The truth, from git alone:
A cited span (its non-blank lines, normalised as memls normalises them) is
- missing when git says its file was deleted (no rename);
- changed when a hunk removes one of its non-blank lines, or inserts non-blank lines between
  two of them, and the removed text was not re-added as one block (a move) elsewhere in the
  file, and the hunk is not a white-space-only change;
- otherwise at the lines the hunks shift it to (in the file git names as renamed, if so):
  fresh when that is where it was, moved when not.
A symbol is a span over its definition; a definition whose extent (by its parser at COMMIT)
grew or shrank is changed, and one whose name is gone is missing.

`cost`: what citations cost the owner: the re-check after a save of a file cited 1,000
times, the catch-up at start over 10,000 citations in 1,000 files, and the memory it takes.

    python benchmarks/citations.py cost ../shared/data/history/click.bundle [--rounds 20]

The files are real (click's newest .py and .rst files, copied into 1,000 paths of a project
folder); each of 1,000 memories cites 10 random spans of one file (ingested through the
engine, lexical-only). The catch-up is the engine's `recheck_citations` after a "branch
switch" that inserts a line at the top of a tenth of the files (so a tenth of the citations
move) and edits one line in another tenth; it reads every file once, locates every citation
and records the changes in one transaction. RSS is the process's resident set (/proc).
Prints the load average: run it on an idle machine.

`query-cost`: what reading citations adds to a query, measured in one process: the same store
of cited memories queried with the citations read (as shipped) and with the read replaced by
nothing,
alternating (A B, B A, ...) so the host's load hits both alike. Lexical-only (BM25, k=10, no
cache): the cheapest query, where an added read weighs most.

    python benchmarks/citations.py query-cost ../shared/data/locomo/locomo-dev.json \
        [--size 10000] [--rounds 6]

Each memory cites two lines of one of 100 small files of a project folder made for the run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
import memls.store.memories as records
from memls import protocol
from memls.citations import (
    FileView,
    anchor_span,
    anchor_symbol,
    find_symbol,
    locate,
    symbols,
)
from memls.citations.fingerprint import normalise
from memls.citations.tree import Workspace
from memls.engine import Engine

# ---------------------------------------------------------------- the truth, from git

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class Hunk:
    a: int
    b: int
    c: int
    d: int
    removed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)


@dataclass
class FileDiff:
    old: str
    new: str
    deleted: bool = False
    hunks: list[Hunk] = field(default_factory=list)


def _git(repo: str, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", repo, "-c", "core.quotepath=off", *args], capture_output=True, check=True
    )
    return done.stdout.decode("utf-8", "replace")


def diff(repo: str, base: str, commit: str) -> dict[str, FileDiff]:
    """Changed files at BASE (old path) -> what git says became of them at COMMIT."""
    files: dict[str, FileDiff] = {}
    fields = _git(repo, "diff", "-M", "--name-status", "-z", base, commit).split("\0")
    i = 0
    while i < len(fields) - 1:
        status = fields[i]
        if status[:1] in ("R", "C"):
            if status[0] == "R":
                files[fields[i + 1]] = FileDiff(old=fields[i + 1], new=fields[i + 2])
            i += 3
            continue
        if status[:1] in ("M", "D", "T"):
            files[fields[i + 1]] = FileDiff(fields[i + 1], fields[i + 1], deleted=status == "D")
        i += 2
    patch = _git(repo, "diff", "-M", "-w", "-U0", "--no-color", "--no-ext-diff", base, commit)
    current: FileDiff | None = None
    hunk: Hunk | None = None
    for line in patch.split("\n"):
        if line.startswith("diff --git "):
            current, hunk = None, None
        elif line.startswith("--- ") and hunk is None:
            old = line[4:]
            current = files.get(old[2:]) if old.startswith("a/") else None
        elif line.startswith("+++ ") and hunk is None:
            pass
        elif (match := _HUNK.match(line)) and current is not None:
            a, b, c, d = match.groups()
            hunk = Hunk(int(a), int(b or 1), int(c), int(d or 1))
            current.hunks.append(hunk)
        elif hunk is not None and line[:1] == "-":
            hunk.removed.append(line[1:])
        elif hunk is not None and line[:1] == "+":
            hunk.added.append(line[1:])
    return files


@dataclass
class Truth:
    state: str
    path: str
    start: int
    end: int


def _shift(hunks: list[Hunk], line: int) -> int:
    delta = 0
    for h in hunks:
        last = h.a + h.b - 1 if h.b else h.a
        if last < line:
            delta += h.d - h.b
    return line + delta


def span_truth(
    entry: FileDiff | None, path: str, old_lines: list[str], start: int, end: int
) -> Truth:
    """The truth for lines start..end of `path` at BASE (start and end non-blank)."""
    if entry is None:
        return Truth("fresh", path, start, end)
    if entry.deleted:
        return Truth("missing", path, start, end)
    new_path = entry.new or path
    cited = [n for n in range(start, end + 1) if normalise(old_lines[n - 1])]
    block = [normalise(old_lines[n - 1]) for n in cited]
    touched = False
    for h in entry.hunks:
        if h.b and any(h.a <= n <= h.a + h.b - 1 for n in cited):
            if [normalise(x) for x in h.removed if normalise(x)] != [
                normalise(x) for x in h.added if normalise(x)
            ]:
                touched = True
        elif not h.b and start <= h.a < end and any(normalise(x) for x in h.added):
            touched = True
    if touched:
        for h in entry.hunks:
            numbered = [(h.c + i, normalise(x)) for i, x in enumerate(h.added) if normalise(x)]
            values = [v for _, v in numbered]
            for i in range(len(values) - len(block) + 1):
                if values[i : i + len(block)] == block:
                    first, last = numbered[i][0], numbered[i + len(block) - 1][0]
                    return Truth("moved", new_path, first, last)
        return Truth("changed", new_path, start, end)
    first, last = _shift(entry.hunks, cited[0]), _shift(entry.hunks, cited[-1])
    same = new_path == path and first == start and last == end
    return Truth("fresh" if same else "moved", new_path, first, last)


# ---------------------------------------------------------------- the history walk

TEXT_SUFFIXES = (".py", ".rst", ".txt", ".md", ".cfg", ".ini", ".toml")


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    return done.stdout.decode("utf-8", "replace")


def cite(repo: Path, rng: random.Random, n_spans: int, n_symbols: int) -> list[dict]:
    files = [p for p in git(repo, "ls-files").splitlines() if p.endswith(TEXT_SUFFIXES)]
    texts = {p: (repo / p).read_text("utf-8", "replace") for p in files}
    views = {p: FileView(t) for p, t in texts.items()}
    weighted = [p for p in files if len(views[p].norm) >= 3]
    out: list[dict] = []
    while len(out) < n_spans:
        path = rng.choice(weighted)
        view = views[path]
        i = rng.randrange(len(view.norm))
        j = min(len(view.norm) - 1, i + rng.randrange(0, 8))
        start, end = view.line_of[i], view.line_of[j]
        if end - start + 1 > 12:
            continue
        out.append({"anchor": anchor_span(path, view, start, end), "lines": view.lines})
    defs = [(p, s) for p in files if p.endswith(".py") for s in symbols(p, texts[p])]
    for path, symbol in rng.sample(defs, min(n_symbols, len(defs))):
        view = views[path]
        anchor = anchor_symbol(path, view, symbol.name, symbol.start_line, symbol.end_line)
        out.append({"anchor": anchor, "lines": view.lines})
    return out


def symbol_truth(repo: Path, commit: str, truth: Truth, name: str, cache: dict) -> Truth:
    """A definition whose name is gone is missing; one whose extent changed is changed."""
    if truth.state == "missing":
        return truth
    key = (commit, truth.path)
    if key not in cache:
        try:
            text = git(repo, "show", f"{commit}:{truth.path}")
        except subprocess.CalledProcessError:
            text = ""
        cache[key] = symbols(truth.path, text)
    found = find_symbol(cache[key], name)
    if found is None:
        return Truth("missing", truth.path, truth.start, truth.end)
    if truth.state == "changed":
        return truth
    if (found.start_line, found.end_line) != (truth.start, truth.end):
        return Truth("changed", truth.path, found.start_line, found.end_line)
    return truth


def walk(repo: Path, base: str, commits: list[str], cited: list[dict], use_git: bool) -> dict:
    pairs = Counter()
    moved_ok = moved_all = renamed_ok = renamed_all = 0
    false_stale: list[str] = []
    missed_stale: list[str] = []
    truth_states: Counter = Counter()
    symbol_cache: dict = {}
    for commit in commits:
        git(repo, "checkout", "-q", "-f", commit)
        changes = diff(str(repo), base, commit)
        if use_git:
            space = Workspace(repo)
        else:  # the files a watcher would have seen appear since BASE
            before = set(git(repo, "ls-tree", "-r", "--name-only", base).splitlines())
            now = git(repo, "ls-tree", "-r", "--name-only", commit).splitlines()
            new = [p for p in now if p not in before]
            space = Workspace(repo, use_git=False, appeared=lambda new=new: new)
        for item in cited:
            anchor = item["anchor"]
            first = next(
                n
                for n in range(anchor.start_line, anchor.end_line + 1)
                if normalise(item["lines"][n - 1])
            )
            truth = span_truth(
                changes.get(anchor.path), anchor.path, item["lines"], first, anchor.end_line
            )
            if anchor.kind == "symbol":
                truth = symbol_truth(repo, commit, truth, anchor.symbol or "", symbol_cache)
            located, _ = space.check(anchor, since=base if use_git else None)
            truth_states[truth.state] += 1
            t_stale = truth.state in ("changed", "missing")
            p_stale = located.stale
            pairs[(t_stale, p_stale)] += 1
            where = (
                f"{commit[:8]} {anchor.kind} {anchor.path}:{anchor.start_line}-{anchor.end_line}"
            )
            if p_stale and not t_stale:
                false_stale.append(f"{where} truth={truth.state} got={located.state}")
            if t_stale and not p_stale:
                missed_stale.append(f"{where} truth={truth.state} got={located.state}")
            if truth.state == "moved":
                moved_all += 1
                moved_ok += (located.path, located.start_line, located.end_line) == (
                    truth.path,
                    truth.start,
                    truth.end,
                )
            if truth.path != anchor.path and not t_stale:
                renamed_all += 1
                renamed_ok += located.path == truth.path and not p_stale
    tp, fp, fn = pairs[(True, True)], pairs[(False, True)], pairs[(True, False)]
    return {
        "pairs": sum(pairs.values()),
        "truth": dict(truth_states),
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "moved": (moved_ok, moved_all),
        "renamed": (renamed_ok, renamed_all),
        "false_stale": false_stale,
        "missed_stale": missed_stale,
    }


def recheck_cost(repo: Path, rng: random.Random, rounds: int = 20) -> tuple[str, float, int]:
    """Milliseconds to re-check one file cited 1,000 times after a save (read, split,
    locate every citation), the median of `rounds`; the file is the biggest .py file."""
    files = [p for p in git(repo, "ls-files").splitlines() if p.endswith(".py")]
    path = max(files, key=lambda p: (repo / p).stat().st_size)
    text = (repo / path).read_text()
    view = FileView(text)
    anchors = []
    while len(anchors) < 1000:
        i = rng.randrange(len(view.norm))
        j = min(len(view.norm) - 1, i + rng.randrange(0, 8))
        anchors.append(anchor_span(path, view, view.line_of[i], view.line_of[j]))
    edited = "# a line added at the top\n" + text
    (repo / path).write_text(edited)
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        space = Workspace(repo, use_git=False)
        found = space.text(path)
        assert found is not None and found.view is not None
        states = Counter(locate(a, found.view).state for a in anchors)
        times.append((time.perf_counter() - started) * 1000)
    assert states["moved"] + states["fresh"] == 1000, states
    return path, statistics.median(times), view.line_count


def main() -> None:
    if sys.argv[1:2] == ["cost"]:
        return cost_main(sys.argv[2:])
    if sys.argv[1:2] == ["query-cost"]:
        return query_cost_main(sys.argv[2:])
    parser = argparse.ArgumentParser()
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--base", type=int, default=700)
    parser.add_argument("--step", type=int, default=5)
    parser.add_argument("--checkpoints", type=int, default=25)
    parser.add_argument("--spans", type=int, default=600)
    parser.add_argument("--symbols", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show", type=int, default=10, help="disagreements listed")
    args = parser.parse_args()
    print("$ python benchmarks/citations.py " + shlex.join(sys.argv[1:]))
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        subprocess.run(
            ["git", "-c", "advice.detachedHead=false", "clone", "-q", str(args.bundle), str(repo)],
            check=True,
        )
        history = git(repo, "rev-list", "--first-parent", "--reverse", "HEAD").split()
        base = history[args.base]
        commits = [history[args.base + args.step * k] for k in range(1, args.checkpoints + 1)]
        git(repo, "checkout", "-q", "-f", base)
        rng = random.Random(args.seed)
        cited = cite(repo, rng, args.spans, args.symbols)
        kinds = Counter(item["anchor"].kind for item in cited)
        print(
            f"base {base[:10]} (first-parent #{args.base} of {len(history)}); "
            f"{len(commits)} later commits, every {args.step}th, to {commits[-1][:10]}"
        )
        print(
            f"citations: {kinds['span']} spans, {kinds['symbol']} symbols "
            f"({len({i['anchor'].path for i in cited})} files)"
        )
        for use_git in (True, False):
            git(repo, "checkout", "-q", "-f", base)
            started = time.perf_counter()
            result = walk(repo, base, commits, cited, use_git)
            seconds = time.perf_counter() - started
            label = "with git's rename detection" if use_git else "without git (content only)"
            moved_ok, moved_all = result["moved"]
            renamed_ok, renamed_all = result["renamed"]
            print(f"\n## {label}: {result['pairs']} (citation, commit) pairs, {seconds:.1f} s")
            print(f"truth: {result['truth']}")
            print(
                f"stale precision {result['precision']:.4f}  recall {result['recall']:.4f}  "
                f"(tp {result['tp']}, fp {result['fp']}, fn {result['fn']})"
            )
            print(
                f"moved followed to the right lines {moved_ok}/{moved_all} = "
                f"{moved_ok / max(1, moved_all):.4f}"
            )
            print(
                f"renamed files followed {renamed_ok}/{renamed_all} = "
                f"{renamed_ok / max(1, renamed_all):.4f}"
            )
            for title, rows in (
                ("false stale", result["false_stale"]),
                ("missed stale", result["missed_stale"]),
            ):
                if rows:
                    print(f"{title} ({len(rows)}), first {min(args.show, len(rows))}:")
                    for row in rows[: args.show]:
                        print("  " + row)
        git(repo, "checkout", "-q", "-f", commits[-1])
        path, ms, lines = recheck_cost(repo, rng)
        print(
            f"\n## cost\nre-check after a save of {path} ({lines} lines) cited 1,000 times: "
            f"{ms:.2f} ms (median of 20)"
        )


# ---------------------------------------------------------------- cost


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


def cost_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="citations.py cost")
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    print("$ python benchmarks/citations.py " + shlex.join(sys.argv[1:]))
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


# ---------------------------------------------------------------- query-cost


def query_cost_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="citations.py query-cost")
    parser.add_argument("data")
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args(argv)
    print("$ python benchmarks/citations.py " + shlex.join(sys.argv[1:]))
    print(f"load average at the start {os.getloadavg()}")
    sample = json.load(open(args.data))[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "project"
        folder.mkdir()
        for k in range(100):
            (folder / f"f{k:03d}.txt").write_text("".join(f"line {k} {i}\n" for i in range(50)))
        items = corpus.project_items(sample, args.size)
        with Engine.open(Path(tmp) / "data", front="bench", vectors=False, cache=False) as engine:
            params = [
                protocol.StoreParams(
                    text=item.text,
                    valid_from=item.valid_from,
                    citations=[
                        protocol.CitationSpec(
                            path=f"f{k % 100:03d}.txt", start_line=1 + k % 40, end_line=2 + k % 40
                        )
                    ],
                    infer_citations=False,
                )
                for k, item in enumerate(items)
            ]
            for start in range(0, len(params), 2000):
                engine.ingest(
                    protocol.IngestParams(project=str(folder), items=params[start : start + 2000])
                )
            questions = [q["question"] for q in corpus.questions(sample)]
            shipped = records.citations_of
            seen: dict[str, list[float]] = {"citations read": [], "citations not read": []}
            for round_ in range(args.rounds):
                order = list(seen) if round_ % 2 else list(reversed(seen))
                for name in order:
                    records.citations_of = (
                        shipped if name == "citations read" else (lambda conn, ids: {})
                    )
                    for question in questions:
                        started = time.perf_counter()
                        engine.query(
                            protocol.QueryParams(
                                query=question, project=str(folder), mode="lexical", k=10
                            )
                        )
                        seen[name].append((time.perf_counter() - started) * 1000)
            records.citations_of = shipped
    print(
        f"{args.size:,} memories, {args.size:,} citations, {len(questions)} questions x "
        f"{args.rounds} rounds a side"
    )
    for name, times in seen.items():
        print(
            f"{name}: p50 {statistics.median(times):.2f} ms, "
            f"p90 {sorted(times)[int(len(times) * 0.9)]:.2f} ms"
        )
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
