"""Contradictions on real notes: ../shared/data/notes, each repository folder its
own project, default note globs, as an editor opens them.

    python benchmarks/notes_conflicts.py --mode pairs    [--models]   # scorer alone, on pairs
    python benchmarks/notes_conflicts.py --mode simulate [--models]   # whole pipeline, pure parts
    python benchmarks/notes_conflicts.py --mode engine \
        --out benchmarks/results/notes-conflicts-engine-infile.txt
    python benchmarks/notes_conflicts.py --mode engine --no-pair   # without the pair model

Modes
- pairs: every pair of `judged.tsv` (what an earlier engine reported, judged by the corpus) and
  `missed.tsv` scored by `score_pair` alone; then the same pairs through the document rules
  (a unit that is no claim, two units of one note that records no change, a newer side whose
  note is rejected or superseded: dropped).
- simulate: the engine's pipeline rebuilt from the pure parts: each
  file parsed (`memls.notes.parse`: sections, claims), files synced in path order, each claim
  unit checked against its 10 nearest units of the project (bge-small cosine with --models, the
  scorer's lexical Jaccard without) recorded before it, under the document rules, by
  `score_pair`; plus supersession/amendment edges from `note_facts` resolved by link or number.
- engine: `Engine.open` on a fresh data directory (default settings: bge-small vectors),
  `sync_note` per file, `flush`, then `conflicts` per project: what users get. The edges are
  the links between notes that `conflicts` returns (`links`: supersedes/amends, resolved by
  the engine by link or number).

Every reported pair is looked up in the judgements: `judged.tsv` and `missed.tsv` of the corpus
and ours, `benchmarks/results/notes-conflicts-judged.tsv` (file_a:line, file_b:line, verdict,
why; we judged every pair the runs reported, and say there where we disagree with the given
judgement). A pair nobody judged is listed as UNJUDGED. Output: false alarms per 100 note
units, and how many of the real conflicts and supersessions (the 11 of missed.tsv + the 3 TRUE
of judged.tsv) are found, as a conflict or as an edge between the two notes; to stdout, and to
--out when given (docs/benchmarks.md cites the engine mode's).
"""

from __future__ import annotations

import argparse
import csv
import shlex
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from memls.conflicts.frames import targets
from memls.conflicts.phrasing import entities, words
from memls.conflicts.scorer import lexical_similarity, score_pair
from memls.conflicts.text import analyze
from memls.notes import DEFAULT, comparable, note_facts, parse, resolve_ref
from memls.notes.globs import matches

# the corpus's note files: the places its projects keep notes (the table of the agents'
# conventions names more, which this corpus does not hold)
CORPUS_GLOBS = (
    "AGENTS.md",
    "CLAUDE.md",
    ".memls/**/*.md",
    "docs/adr/**/*.md",
    "docs/decisions/**/*.md",
    ".github/copilot-instructions.md",
    ".cursor/rules/**",
)


def default_type(relative: str) -> str:
    found = DEFAULT.match(relative)
    return found.memory_type if found is not None else "note"


CORPUS = ROOT.parent / "shared" / "data" / "notes"
OURS = ROOT / "benchmarks" / "results" / "notes-conflicts-judged.tsv"
CANDIDATES = 10
TARGETED = 5
DIAGNOSIS: dict = {}
csv.field_size_limit(1 << 24)


@dataclass(frozen=True)
class NoteUnit:
    project: str
    path: str  # relative to the corpus: "cloud-platform/docs/adr/022-EKS.md"
    line: int  # 1-based, as in judged.tsv
    text: str
    section: str
    claim: bool
    order: int

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def note_files(corpus: Path) -> dict[str, list[Path]]:
    projects: dict[str, list[Path]] = {}
    for folder in sorted(p for p in corpus.iterdir() if p.is_dir()):
        files = [
            f
            for f in sorted(folder.rglob("*"))
            if f.is_file() and matches(f.relative_to(folder).as_posix(), CORPUS_GLOBS)
        ]
        if files:
            projects[folder.name] = files
    return projects


def read_units(corpus: Path) -> tuple[dict[str, list[NoteUnit]], dict[str, object]]:
    units: dict[str, list[NoteUnit]] = {}
    facts: dict[str, object] = {}
    order = 0
    for project, files in note_files(corpus).items():
        seen: set[str] = set()
        out = units.setdefault(project, [])
        for f in files:
            rel = f.relative_to(corpus).as_posix()
            text = f.read_text(encoding="utf-8")
            facts[rel] = note_facts(text, rel)
            kind = default_type(f.relative_to(corpus / project).as_posix())
            for u in parse(text, default_type=kind):  # type: ignore[arg-type]
                if u.key in seen:
                    continue  # the engine keeps one memory per canonical text per project
                seen.add(u.key)
                order += 1
                out.append(
                    NoteUnit(project, rel, u.start_line + 1, u.text, u.section, u.claim, order)
                )
    return units, facts


# ---------------------------------------------------------------- judgements


def key(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


def load_judgements(corpus: Path) -> tuple[dict, dict, set]:
    """(given verdicts by pair, our verdicts by pair, the real pairs to find)."""
    given: dict[frozenset[str], str] = {}
    real: set[frozenset[str]] = set()
    with open(corpus / "judged.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            k = key(row["file_a:line"], row["file_b:line"])
            given[k] = row["verdict"]
            if row["verdict"] == "TRUE":
                real.add(k)
    with open(corpus / "missed.tsv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            k = key(row["file_a:line"], row["file_b:line"])
            given[k] = "TRUE"
            real.add(k)
    ours: dict[frozenset[str], str] = {}
    if OURS.exists():
        with open(OURS, encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                ours[key(row["a"], row["b"])] = row["verdict"]
    return given, ours, real


def verdict_of(k: frozenset[str], given: dict, ours: dict) -> str:
    return ours.get(k) or given.get(k) or "UNJUDGED"


# ---------------------------------------------------------------- the document rules


def document_rule(newer: NoteUnit, older: NoteUnit, facts: dict) -> str | None:
    """Why this pair is not compared (None: it is)."""
    if not newer.claim or not older.claim:
        return "not a claim"
    if newer.path == older.path and not comparable(
        (newer.line - 1, newer.section), (older.line - 1, older.section), facts[newer.path]
    ):
        return "same note, no recorded change"
    if not facts[newer.path].current:
        return "newer note rejected or superseded"
    return None


def supersession_edges(facts: dict) -> list[tuple[str, str, str]]:
    """(newer path, older path, relation) from the notes' own references."""
    by_project: dict[str, list[str]] = defaultdict(list)
    for path in facts:
        by_project[path.split("/", 1)[0]].append(path)
    edges = []
    for path, fact in facts.items():
        project = path.split("/", 1)[0]
        for ref in (*fact.superseded_by, *fact.amended_by, *fact.see):
            other = resolve_ref(ref, path, by_project[project])
            if other:
                edges.append((other, path, ref.relation))
        for ref in (*fact.supersedes, *fact.amends):
            other = resolve_ref(ref, path, by_project[project])
            if other:
                edges.append((path, other, ref.relation))
    return sorted(set(edges))


# ---------------------------------------------------------------- modes


def mode_pairs(corpus: Path, similarity) -> list[tuple]:
    units, facts = read_units(corpus)
    at = {u.where: u for us in units.values() for u in us}
    rows = []
    for name in ("judged.tsv", "missed.tsv"):
        with open(corpus / name, encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                a, b = at.get(row["file_a:line"]), at.get(row["file_b:line"])
                if a is None or b is None:
                    rows.append(
                        (name, row["file_a:line"], row["file_b:line"], None, "unit not found")
                    )
                    continue
                newer, older = (a, b) if a.order > b.order else (b, a)
                sim = similarity(newer.text, older.text) if similarity else None
                verdict = score_pair(newer.text, older.text, similarity=sim)
                rows.append(
                    (name, newer.where, older.where, verdict, document_rule(newer, older, facts))
                )
    return rows


def mode_simulate(
    corpus: Path,
    embed,
    targeted: bool = False,
    watch: set | None = None,
    candidates: int = CANDIDATES,
) -> tuple[list[tuple], list, int]:
    """`targeted`: besides the nearest units, the earlier units that state what a change frame
    of the new unit replaces (`frames.targets`), as a lexical lookup would find them.
    `watch`: pairs to explain (their similarity, rank and verdict) in DIAGNOSIS."""
    units, facts = read_units(corpus)
    found = []
    total = 0
    DIAGNOSIS.clear()
    for us in units.values():
        total += len(us)
        claims = list(us)  # candidates come from every unit, as the index holds them all
        if embed is not None:
            import numpy as np

            vectors = np.asarray(embed([u.text for u in claims]))
            sims = vectors @ vectors.T
        else:
            analyses = [analyze(u.text) for u in claims]
            sims = None
        for i, newer in enumerate(claims):
            if not newer.claim:
                continue
            if sims is not None:
                row = [(float(sims[i, j]), j) for j in range(len(claims)) if j != i]
            else:
                row = [
                    (lexical_similarity(analyses[i], analyses[j]), j)
                    for j in range(len(claims))
                    if j != i
                ]
            row.sort(reverse=True)
            picked = row[:candidates]
            if targeted:
                # both directions: the earlier units that state what the new one replaces, and
                # the earlier units that rejected or replaced what the new one names
                wanted, named = targets(newer.text), entities(newer.text)
                chosen = {j for _, j in picked}
                extra = [
                    (sim, j)
                    for sim, j in row[candidates:]
                    if claims[j].order < newer.order
                    and claims[j].claim
                    and (
                        (wanted and wanted <= words(claims[j].text))
                        or (targets(claims[j].text) & named)
                    )
                ]
                picked += [(sim, j) for sim, j in extra[:TARGETED] if j not in chosen]
            if watch:
                for rank, (sim, j) in enumerate(row):
                    k = key(newer.where, claims[j].where)
                    if k in watch:
                        v = score_pair(
                            newer.text, claims[j].text, similarity=sim if sims is not None else None
                        )
                        DIAGNOSIS[k] = (
                            round(sim, 3),
                            rank + 1,
                            v.confidence,
                            document_rule(newer, claims[j], facts),
                            any(jj == j for _, jj in picked),
                        )
            for sim, j in picked:
                older = claims[j]
                if older.order > newer.order or document_rule(newer, older, facts):
                    continue
                verdict = score_pair(
                    newer.text, older.text, similarity=sim if sims is not None else None
                )
                if verdict.contradiction:
                    found.append((newer.where, older.where, verdict, newer.text, older.text))
    return found, supersession_edges(facts), total


def mode_engine(corpus: Path, pair: bool = True) -> tuple[list[tuple], list, int]:
    """`pair=False`: the engine without its pair model (a configured folder that holds none:
    the model reports "missing" and the scorer decides by its signals alone, as before the
    model shipped)."""
    from pygls import uris

    from memls import protocol
    from memls.config import model_cache_dir
    from memls.engine import Engine
    from memls.models import ModelRuntime

    def rel(uri: str) -> str:
        return Path(uris.to_fs_path(uri)).resolve().relative_to(corpus.resolve()).as_posix()

    found = []
    edges = []
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        runtime = None
        if not pair:
            (Path(tmp) / "no-pair-model").mkdir()
            runtime = ModelRuntime(
                cache_dir=model_cache_dir(), pair_dir=Path(tmp) / "no-pair-model"
            )
        engine = Engine.open(Path(tmp) / "data", models=runtime)
        try:
            for project, files in note_files(corpus).items():
                root = corpus / project
                for f in files:
                    result = engine.sync_note(
                        protocol.SyncNoteParams(
                            uri=f.resolve().as_uri(),
                            text=f.read_text(encoding="utf-8"),
                            project=str(root.resolve()),
                            default_type=default_type(f.relative_to(root).as_posix()),
                        )
                    )
                    total += len(result.added)
            engine.flush(1800)
            time.sleep(0)  # the check runs in the indexer; flush returns when it is done
            for project in note_files(corpus):
                listed = engine.conflicts(
                    protocol.ConflictsParams(project=str((corpus / project).resolve()), limit=1000)
                )
                edges += [(rel(x.newer_uri), rel(x.older_uri), x.relation) for x in listed.links]
                for c in listed.conflicts:
                    found.append(
                        (
                            _where(corpus, c.newer),
                            _where(corpus, c.older),
                            c,
                            c.newer.content,
                            c.older.content,
                        )
                    )
        finally:
            engine.close()
    return found, sorted(set(edges)), total


def _where(corpus: Path, memory) -> str:
    from pygls import uris

    path = Path(uris.to_fs_path(memory.source_uri)).resolve().relative_to(corpus.resolve())
    line = int(memory.source_range.split(":", 1)[0]) + 1
    return f"{path.as_posix()}:{line}"


# ---------------------------------------------------------------- report


def report_found(found, edges, total, given, ours, real, out) -> None:
    verdicts = defaultdict(int)
    hits: set[frozenset[str]] = set()
    unjudged = []
    for newer, older, _verdict, new_text, old_text in found:
        k = key(newer, older)
        v = verdict_of(k, given, ours)
        verdicts[v] += 1
        if v == "TRUE":
            hits.add(k)
        if v == "UNJUDGED":
            unjudged.append((newer, older, new_text, old_text))
    edge_files = {frozenset((a, b)) for a, b, _ in edges}
    by_edge = {k for k in real if frozenset(w.rsplit(":", 1)[0] for w in k) in edge_files}
    reached = (hits & real) | by_edge
    extra = hits - real
    false = verdicts["FALSE"]
    print(f"note units: {total}", file=out)
    print(
        f"reported conflicts: {len(found)} (TRUE {verdicts['TRUE']}, FALSE {false}, "
        f"UNJUDGED {verdicts['UNJUDGED']})",
        file=out,
    )
    print(
        f"false alarms per 100 note units: {100 * false / max(1, total):.2f} (target <= 1)",
        file=out,
    )
    print(f"supersession/amendment edges from the notes: {len(edges)}", file=out)
    for a, b, rel in edges:
        print(f"  {a} -> {b} ({rel})", file=out)
    print(
        f"real conflicts and supersessions found: {len(reached)} of {len(real)} "
        f"(as conflicts {len(hits & real)}, as edges {len(by_edge)}; target >= 8); "
        f"other true conflicts found: {len(extra)}",
        file=out,
    )
    for k in sorted(real, key=sorted):
        a, b = sorted(k)
        how = "conflict" if k in hits else "edge" if k in by_edge else "MISSED"
        why = ""
        if how == "MISSED" and k in DIAGNOSIS:
            sim, rank, conf, rule, picked = DIAGNOSIS[k]
            why = (
                f"  [similarity {sim}, rank {rank}, "
                f"{'a candidate' if picked else 'not a candidate'}"
                f", confidence {conf}, rule: {rule or '-'}]"
            )
        print(f"  {how:8} {a}  |  {b}{why}", file=out)
    print("\nreported pairs (verdict, confidence, signals, newer, older):", file=out)
    for newer, older, verdict, new_text, old_text in found:
        sig = " ".join(f"{s.kind}[{','.join(s.triggers[:4])}]" for s in verdict.signals)
        v = verdict_of(key(newer, older), given, ours)
        print(
            f"  {v:8} {verdict.confidence:.3f} {sig}\n      {newer}: {new_text[:160]!r}\n"
            f"      {older}: {old_text[:160]!r}",
            file=out,
        )
    if unjudged:
        print(f"\nUNJUDGED ({len(unjudged)}): add them to {OURS.relative_to(ROOT)}", file=out)


def report_pairs(rows, given, ours, out) -> None:
    cells = defaultdict(lambda: [0, 0])  # (source, truth) -> [fired alone, fired after rules]
    for name, newer, older, verdict, rule in rows:
        truth = verdict_of(key(newer, older), given, ours)
        fired = verdict is not None and verdict.contradiction
        cells[(name, truth)][0] += fired
        cells[(name, truth)][1] += fired and rule is None
        cells[(name, truth, "n")] = cells.get((name, truth, "n"), 0) + 1  # type: ignore
    print(
        "| pairs | judged | n | fires (scorer alone) | fires (scorer + document rules) |", file=out
    )
    print("|---|---|---|---|---|", file=out)
    for (name, truth, *rest), value in sorted(cells.items(), key=lambda kv: str(kv[0])):
        if rest:
            continue
        n = cells[(name, truth, "n")]
        print(f"| {name} | {truth} | {n} | {value[0]} | {value[1]} |", file=out)
    print("\nper pair (source, judged, fired, rule, confidence, signals):", file=out)
    for name, newer, older, verdict, rule in rows:
        truth = verdict_of(key(newer, older), given, ours)
        if verdict is None:
            print(f"  {name} {truth} ? {rule} {newer} {older}", file=out)
            continue
        if not verdict.contradiction and truth != "TRUE":
            continue
        sig = " ".join(f"{s.kind}[{','.join(s.triggers[:4])}]" for s in verdict.signals)
        print(
            f"  {name:10} {truth:5} {'FIRES' if verdict.contradiction else 'quiet'} "
            f"{rule or '-'} {verdict.confidence:.3f} {sig} | {newer} | {older}",
            file=out,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("pairs", "simulate", "engine"), default="pairs")
    parser.add_argument("--models", action="store_true", help="bge-small cosine as similarity")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--out", type=Path, help="also write the report here")
    parser.add_argument(
        "--no-pair", action="store_true", help="engine: without the pair model (as before it)"
    )
    parser.add_argument(
        "--candidates", type=int, default=CANDIDATES, help="simulate: nearest units checked"
    )
    parser.add_argument(
        "--targeted",
        action="store_true",
        help="simulate: also check the earlier units a change frame names",
    )
    args = parser.parse_args()
    given, ours, real = load_judgements(args.corpus)
    embed = similarity = None
    if args.models:
        from memls.models import ModelRuntime

        runtime = ModelRuntime(rerank=False)
        cache: dict[str, object] = {}

        def embed(texts: list[str]):
            missing = [t for t in dict.fromkeys(texts) if t not in cache]
            for i in range(0, len(missing), 32):
                for t, v in zip(missing[i : i + 32], runtime.embedder.embed(missing[i : i + 32])):
                    cache[t] = v
            return [cache[t] for t in texts]

        def similarity(new: str, existing: str) -> float:
            x, y = embed([new, existing])
            return float(x @ y)

    import io

    out = io.StringIO()
    command = "python benchmarks/notes_conflicts.py " + shlex.join(sys.argv[1:])
    print(f"$ {command.strip()}", file=out)
    print(
        f"corpus: {args.corpus.name}/, similarity: "
        + (
            "the engine's own (default settings)"
            if args.mode == "engine"
            else "bge-small cosine"
            if args.models
            else "lexical (no models)"
        ),
        file=out,
    )
    started = time.perf_counter()
    if args.mode == "pairs":
        report_pairs(mode_pairs(args.corpus, similarity), given, ours, out)
    elif args.mode == "simulate":
        found, edges, total = mode_simulate(
            args.corpus, embed, args.targeted, real, args.candidates
        )
        report_found(found, edges, total, given, ours, real, out)
    else:
        found, edges, total = mode_engine(args.corpus, pair=not args.no_pair)
        report_found(found, edges, total, given, ours, real, out)
    print(f"\n({time.perf_counter() - started:.1f} s)", file=out)
    text = out.getvalue()
    print(text, end="")
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
