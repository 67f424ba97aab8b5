"""Contradictions inside real instruction files: 24 AGENTS.md / CLAUDE.md /
copilot-instructions.md / .cursor/rules files from public repositories, each with one planted
later line (`benchmarks/data/instructions/`: 12 that contradict an earlier line of the same file,
12 harmless), synced into the real engine as an editor opens them.

    python benchmarks/instructions_conflicts.py \
        --out benchmarks/results/instructions-conflicts.txt
    python benchmarks/instructions_conflicts.py --set dev \
        --out benchmarks/results/instructions-dev-conflicts.txt
    python benchmarks/instructions_conflicts.py --no-pair ...   # without the pair model

`--set dev` runs the development set (`benchmarks/data/instructions-dev/`: six other files,
each once with a contradicting and once with a harmless planted line), the one rules are
developed on; the default set is the reported one.

The files themselves are not in this repository: `manifest.tsv` pins each one (repository,
commit, original path, licence, sha256) and the harness rebuilds the corpus from the fetched
repository snapshots (`--mirror`, one bare git directory per repository:
`<mirror>/<owner>+<name>/repo`), checks every original against its sha256, applies
`edits.jsonl` and writes the folders to `--corpus` (outside the checkout; each folder a project
root with its `LICENCE-NOTE.txt`). With no mirror, an already built corpus is used as it is.

Each folder is its own project (`Engine.open` on a fresh data directory, default settings,
`sync_note` per file in path order, `flush`, then `conflicts` per project). Reported:

- found: a planted contradiction is found when a reported conflict joins the unit holding the
  planted line with the unit holding one of the lines it contradicts (`contradicts`, or `also`
  for a line of another file it contradicts too);
- control alarms: reported conflicts that involve a harmless planted line;
- false alarms per 100 note units: every reported conflict that is not a found planted pair and
  not judged TRUE in `benchmarks/results/instructions-judged.tsv` (a, b, verdict, why; pairs
  between lines of the original files, judged by reading them), over all units of all files.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from memls.notes import DEFAULT, parse
from notes_conflicts import mode_engine

MIRROR = Path("/work/.mirror")
SETS = {
    "reported": (
        ROOT / "benchmarks" / "data" / "instructions",
        ROOT / "benchmarks" / "results" / "instructions-judged.tsv",
        Path.home() / ".cache" / "memls-bench" / "instructions",
    ),
    "dev": (
        ROOT / "benchmarks" / "data" / "instructions-dev",
        ROOT / "benchmarks" / "results" / "instructions-dev-judged.tsv",
        Path.home() / ".cache" / "memls-bench" / "instructions-dev",
    ),
}
DATA, JUDGED, CORPUS = SETS["reported"]


@dataclass(frozen=True)
class Edit:
    file: str  # "<folder>/<path in the folder>"
    kind: str  # "conflict" | "control"
    after: int  # 1-based line of the original after which the planted line goes
    blank_before: bool
    text: str
    contradicts: tuple[int, ...]  # 1-based lines of the original file
    also: tuple[str, ...]  # "<folder>/<path>:<original line>" of another file
    change_word: bool
    category: str

    @property
    def inserted(self) -> int:
        return 2 if self.blank_before else 1

    @property
    def planted_line(self) -> int:
        """1-based line of the planted text in the built file."""
        return self.after + self.inserted


def load_manifest() -> list[dict[str, str]]:
    with open(DATA / "manifest.tsv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def load_edits() -> dict[str, Edit]:
    edits = {}
    with open(DATA / "edits.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            edits[row["file"]] = Edit(
                file=row["file"],
                kind=row["kind"],
                after=row["after"],
                blank_before=row["blank_before"],
                text=row["text"],
                contradicts=tuple(row["contradicts"]),
                also=tuple(row["also"]),
                change_word=row["change_word"],
                category=row["category"],
            )
    return edits


def built_line(file: str, line: int, edits: dict[str, Edit]) -> int:
    """Where a line of the original file sits once the file's edit is applied."""
    edit = edits.get(file)
    return line + edit.inserted if edit and line > edit.after else line


def original(row: dict[str, str], mirror: Path) -> bytes:
    git_dir = mirror / row["repository"].replace("/", "+") / "repo"
    data = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{row['commit']}:{row['original_path']}"],
        check=True,
        capture_output=True,
    ).stdout
    digest = hashlib.sha256(data).hexdigest()
    if digest != row["sha256"]:
        raise SystemExit(f"{row['folder']}/{row['file']}: sha256 {digest} != {row['sha256']}")
    return data


def build(mirror: Path, corpus: Path, edits: dict[str, Edit]) -> None:
    rows = load_manifest()
    notes: dict[str, list[str]] = {}
    for row in rows:
        name = f"{row['folder']}/{row['file']}"
        lines = original(row, mirror).decode("utf-8").split("\n")
        edit = edits.get(name)
        if edit is not None:
            planted = ["", edit.text] if edit.blank_before else [edit.text]
            lines[edit.after : edit.after] = planted
        target = corpus / row["folder"] / row["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(lines), encoding="utf-8")
        notes.setdefault(row["folder"], []).append(
            f"  {row['original_path']} -> {row['file']} (licence {row['licence']}; commit "
            f"{row['commit']}; one planted line: benchmarks/data/instructions/edits.jsonl)"
        )
    for folder, entries in notes.items():
        repo = next(r["repository"] for r in rows if r["folder"] == folder)
        (corpus / folder / "LICENCE-NOTE.txt").write_text(
            f"Repository: https://github.com/{repo}\nFiles (original path -> path here):\n"
            + "\n".join(entries)
            + "\n",
            encoding="utf-8",
        )


def unit_starts(corpus: Path) -> dict[str, list[tuple[int, int]]]:
    """Per file, the (first, last) 1-based lines of each unit, as the engine parses it."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for folder in sorted(p for p in corpus.iterdir() if p.is_dir()):
        for f in sorted(folder.rglob("*")):
            if not f.is_file() or f.name == "LICENCE-NOTE.txt":
                continue
            rel = f.relative_to(folder).as_posix()
            found = DEFAULT.match(rel)
            kind = found.memory_type if found is not None else "note"
            units = parse(f.read_text(encoding="utf-8"), default_type=kind)
            name = f.relative_to(corpus).as_posix()
            spans[name] = [(u.start_line + 1, u.end_line + 1) for u in units]
    return spans


def where(file: str, line: int, spans: dict[str, list[tuple[int, int]]]) -> str:
    """The `path:line` the engine reports for the unit holding a line (its first line)."""
    for first, last in spans.get(file, []):
        if first <= line <= last:
            return f"{file}:{first}"
    return f"{file}:{line}"


def load_judged() -> dict[frozenset[str], tuple[str, str]]:
    judged: dict[frozenset[str], tuple[str, str]] = {}
    if JUDGED.exists():
        with open(JUDGED, encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                judged[frozenset((row["a"], row["b"]))] = (row["verdict"], row["why"])
    return judged


def report(corpus: Path, edits: dict[str, Edit], out, pair: bool = True) -> None:
    spans = unit_starts(corpus)
    found, _edges, total = mode_engine(corpus, pair)
    reported = {
        frozenset((newer, older)): (newer, older, c, nt, ot) for newer, older, c, nt, ot in found
    }
    judged = load_judged()

    planted_pairs: dict[str, set[frozenset[str]]] = {}
    control_units: dict[str, str] = {}
    for edit in edits.values():
        mine = where(edit.file, edit.planted_line, spans)
        if edit.kind == "control":
            control_units[mine] = edit.file
            continue
        others = [
            where(edit.file, built_line(edit.file, t, edits), spans) for t in edit.contradicts
        ]
        for ref in edit.also:
            file, line = ref.rsplit(":", 1)
            others.append(where(file, built_line(file, int(line), edits), spans))
        planted_pairs[edit.file] = {frozenset((mine, o)) for o in others}

    hits = {f for f, pairs in planted_pairs.items() if pairs & reported.keys()}
    conflicts = [e for e in edits.values() if e.kind == "conflict"]
    plain = [e for e in conflicts if not e.change_word]
    true_pairs = set().union(*planted_pairs.values())
    control_alarms = [k for k in reported if k & control_units.keys()]
    false = [
        k for k in reported if k not in true_pairs and judged.get(k, ("FALSE", ""))[0] != "TRUE"
    ]
    print(f"files: {len(spans)} in {len({f.split('/', 1)[0] for f in spans})} projects", file=out)
    print(f"note units: {total}", file=out)
    print(f"reported conflicts: {len(reported)}", file=out)
    print(
        f"planted contradictions found: {len(hits)} of {len(conflicts)} (target >= 10 of 12, "
        "scaled to the set); "
        f"without a change word {len([e for e in plain if e.file in hits])} of {len(plain)}, "
        f"with one {len(hits) - len([e for e in plain if e.file in hits])} of "
        f"{len(conflicts) - len(plain)}",
        file=out,
    )
    controls = len(edits) - len(conflicts)
    print(
        f"control alarms: {len(control_alarms)} of {controls} harmless edits (target <= 1)",
        file=out,
    )
    print(
        f"false alarms: {len(false)}, per 100 note units: {100 * len(false) / max(1, total):.2f} "
        "(target <= 1)",
        file=out,
    )
    print("\nplanted contradictions:", file=out)
    for edit in conflicts:
        mark = "FOUND " if edit.file in hits else "MISSED"
        word = "change word" if edit.change_word else edit.category
        print(f"  {mark} {edit.file}:{edit.planted_line} ({word}): {edit.text[:100]!r}", file=out)
    print("\nreported pairs (verdict, confidence, signals, newer, older):", file=out)
    for k, (newer, older, c, new_text, old_text) in sorted(
        reported.items(), key=lambda kv: sorted(kv[0])
    ):
        if k in true_pairs:
            verdict = "PLANTED"
        elif k & control_units.keys():
            verdict = "CONTROL"
        else:
            verdict = judged.get(k, ("UNJUDGED", ""))[0]
        sig = " ".join(f"{s.kind}[{','.join(s.triggers[:4])}]" for s in c.signals)
        print(
            f"  {verdict:8} {c.confidence:.3f} {sig}\n      {newer}: {new_text[:160]!r}\n"
            f"      {older}: {old_text[:160]!r}",
            file=out,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=sorted(SETS), default="reported")
    parser.add_argument("--mirror", type=Path, default=MIRROR)
    parser.add_argument("--corpus", type=Path, help="where the built files go")
    parser.add_argument("--out", type=Path, help="also write the report here")
    parser.add_argument("--no-pair", action="store_true", help="without the pair model")
    args = parser.parse_args()
    global DATA, JUDGED
    DATA, JUDGED, corpus = SETS[args.set]
    args.corpus = args.corpus or corpus
    edits = load_edits()
    if args.mirror.exists():
        build(args.mirror, args.corpus, edits)
    elif not args.corpus.exists():
        raise SystemExit(f"no mirror at {args.mirror} and no built corpus at {args.corpus}")
    out = io.StringIO()
    command = "python benchmarks/instructions_conflicts.py " + shlex.join(sys.argv[1:])
    print(f"$ {command.strip()}", file=out)
    print(
        f"corpus: {DATA.relative_to(ROOT)} ({len(load_manifest())} files), engine defaults"
        + (", without the pair model" if args.no_pair else ""),
        file=out,
    )
    started = time.perf_counter()
    report(args.corpus, edits, out, pair=not args.no_pair)
    print(f"\n({time.perf_counter() - started:.1f} s)", file=out)
    text = out.getvalue()
    print(text, end="")
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
