"""Citations followed through real history: states against the truth from git, and their cost.

    python benchmarks/citations.py ../shared/data/history/click.bundle \
        [--base 700 --step 5 --checkpoints 25 --spans 600 --symbols 300 --seed 7]

Clones the bundle into a temporary folder, checks out the BASE-th commit of the first-parent
history, cites random spans (1-12 lines starting and ending on a non-blank line, in .py, .rst,
.txt, .md, .cfg, .ini, .toml files) and random definitions (Python, by tree-sitter), then
checks out each of CHECKPOINTS later commits (every STEP-th) and compares the tracker's state
of every citation (memls.citations.tree.Workspace: what the daemon and `memls check` run)
with the truth from `git diff -M -w -U0 BASE COMMIT` (benchmarks/citations_truth.py). It
runs the tracker twice: with git's rename detection, and without git (renames followed by
content only). Then it times the re-check of one file cited 1,000 times.
"""

from __future__ import annotations

import argparse
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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from citations_truth import Truth, diff, span_truth
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


if __name__ == "__main__":
    main()
