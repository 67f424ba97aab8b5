"""The truth for benchmarks/citations.py, from git alone: `git diff -M -w -U0 BASE COMMIT`.

A cited span (its non-blank lines, normalised as memls normalises them) is
- missing when git says its file was deleted (no rename);
- changed when a hunk removes one of its non-blank lines, or inserts non-blank lines between
  two of them, and the removed text was not re-added as one block (a move) elsewhere in the
  file, and the hunk is not a white-space-only change;
- otherwise at the lines the hunks shift it to (in the file git names as renamed, if so):
  fresh when that is where it was, moved when not.
A symbol is a span over its definition; a definition whose extent (by its parser at COMMIT)
grew or shrank is changed, and one whose name is gone is missing.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field

from memls.citations.fingerprint import normalise

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
