"""False refusals of the secret detector on labelled sets no rule of memls was written on:
other scanners' own rule tests, each split in two parts by rule (or detector) before memls was
first run on it, a part rules may be tuned on (`tune`) and a part only reported (`report`).

- TruffleHog's per-detector pattern tests (benchmarks/data/secrets/trufflehog_corpus.py);
- Nosey Parker's rule examples and negative examples, secretlint's rule snapshots,
  detect-secrets' plugin test tables, ripsecrets' test files and semgrep-rules' annotated
  tests of its hard-coded credential rules, Titus' rule examples that Nosey Parker's lack,
  Kingfisher's that neither Nosey Parker's nor Titus' hold, the examples of Sonar's secrets
  rules, and the lines the tests of the hard-coded credential checks of Sonar's analysers for
  Java, PHP and Python mark `Compliant` or `Noncompliant` (`sonar-checks`, from the three
  `--sonar-java`, `--sonar-php`, `--sonar-python`), and one set pooled from whispers'
  fixtures, IBM's detect-secrets plugin tests, DevSkim's secret rules and checkov's clean
  secrets folders (`pooled`, from any of `--whispers`, `--ibm-detect-secrets`, `--devskim`,
  `--checkov`: each alone holds too few texts judged not a secret)
  (benchmarks/data/secrets/rule_examples_corpus.py).

A false pattern that holds a credential of its set, or a near-copy of one of its own rule's, is
counted apart (the corpus modules say how); so is one the whole of gitleaks (its binary, with
the config of gitleaks_corpus.PINNED) reports. What is left is judged not a secret: the figure
is how many of those a candidate refuses. Credentials found is how many of each set's
credential cases a candidate refuses (Nosey Parker's examples include placeholders such as
`aaaa...`, so it is a count, not a recall).

    python benchmarks/secrets_untuned.py --gitleaks GIT_DIR --trufflehog GIT_DIR \
        --noseyparker GIT_DIR --secretlint GIT_DIR --detect-secrets GIT_DIR \
        --ripsecrets GIT_DIR --semgrep GIT_DIR --titus GIT_DIR --kingfisher GIT_DIR \
        --sonar GIT_DIR --sonar-java GIT_DIR --sonar-php GIT_DIR --sonar-python GIT_DIR \
        --whispers GIT_DIR --ibm-detect-secrets GIT_DIR --devskim GIT_DIR --checkov GIT_DIR \
        [--candidates memls,memls@COMMIT] [--show PART]

`--show tune` prints the false patterns of the tune parts that a candidate refuses (what rules
may be written on); `--show report` does the same for the report parts, for reading after the
figures are final. Candidates as in benchmarks/secrets_detect.py (memls, memls@COMMIT, ...).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[1] / "server"))
sys.path.insert(0, str(HERE.parent / "data" / "secrets"))

import candidates
import gitleaks_corpus
import rule_examples_corpus
import trufflehog_corpus

SOURCES = (
    "trufflehog",
    "noseyparker",
    "secretlint",
    "detect-secrets",
    "ripsecrets",
    "semgrep",
    "titus",
    "kingfisher",
    "sonar",
    "sonar-checks",
    "pooled",
)
# read by no one here before they were measured: all of each only reported
REPORT_ONLY = ("titus", "kingfisher", "sonar", "sonar-checks", "pooled")
# less the texts the sets before them hold
LATER = ("kingfisher", "sonar", "sonar-checks", "pooled")
SONAR_LANGS = ("java", "php", "python")  # --sonar-java, ... make the set sonar-checks
# --whispers, ... make one set, `pooled`: too few texts judged not a secret in each alone
POOLED = ("whispers", "ibm-detect-secrets", "devskim", "checkov")


def _items(args: argparse.Namespace) -> list[tuple[str, str, str, str]]:
    """(source, part, credential | false-pattern | same-value | near-copy, text)."""
    pooled = {
        s: getattr(args, s.replace("-", "_"))
        for s in POOLED
        if getattr(args, s.replace("-", "_")) is not None
    }
    loaded = {
        "trufflehog": (args.trufflehog, trufflehog_corpus.load, trufflehog_corpus.PINNED),
        "noseyparker": (
            args.noseyparker,
            rule_examples_corpus.load_noseyparker,
            rule_examples_corpus.NOSEYPARKER,
        ),
        "secretlint": (
            args.secretlint,
            rule_examples_corpus.load_secretlint,
            rule_examples_corpus.SECRETLINT,
        ),
        "detect-secrets": (
            args.detect_secrets,
            rule_examples_corpus.load_detect_secrets,
            rule_examples_corpus.DETECT_SECRETS,
        ),
        "ripsecrets": (
            args.ripsecrets,
            rule_examples_corpus.load_ripsecrets,
            rule_examples_corpus.RIPSECRETS,
        ),
        "semgrep": (args.semgrep, rule_examples_corpus.load_semgrep, rule_examples_corpus.SEMGREP),
        "titus": (
            args.titus,
            lambda g: rule_examples_corpus.load_titus(g, args.noseyparker),
            rule_examples_corpus.TITUS,
        ),
        "kingfisher": (
            args.kingfisher,
            lambda g: rule_examples_corpus.load_kingfisher(g, args.noseyparker, args.titus),
            rule_examples_corpus.KINGFISHER,
        ),
        "sonar": (args.sonar, rule_examples_corpus.load_sonar, rule_examples_corpus.SONAR),
        "sonar-checks": (
            args.sonar_java and args.sonar_php and args.sonar_python,
            lambda _: rule_examples_corpus.load_sonar_checks(
                {lang: getattr(args, f"sonar_{lang}") for lang in SONAR_LANGS}
            ),
            "+".join(
                c[:4]
                for c in (
                    rule_examples_corpus.SONAR_JAVA,
                    rule_examples_corpus.SONAR_PHP,
                    rule_examples_corpus.SONAR_PYTHON,
                )
            ),
        ),
        "pooled": (
            pooled or None,
            lambda _: rule_examples_corpus.load_pooled(pooled),
            "+".join(
                getattr(rule_examples_corpus, s.upper().replace("-", "_"))[:4] for s in pooled
            ),
        ),
    }
    out = []
    for source, (git_dir, load, pinned) in loaded.items():
        if git_dir is None:
            continue
        detectors = load(git_dir)
        labelled = (
            # a value the analysers' tests name is a string literal, often in words
            trufflehog_corpus.labelled(detectors, least=12, split=False)
            if source == "sonar-checks"
            else trufflehog_corpus.labelled(detectors)
        )
        if source in REPORT_ONLY:
            labelled = [("report", label, text) for _, label, text in labelled]
        if source in LATER:  # a text a set before it holds was read (or tuned on) already
            held = {text.strip() for *_, text in out}
            labelled = [item for item in labelled if item[2].strip() not in held]
        count = Counter((p, label) for p, label, _ in labelled)
        print(
            f"{source} {pinned[:12]}: {len(detectors)} rule groups "
            + (
                "(all report), "
                if source in REPORT_ONLY
                else f"({sum(trufflehog_corpus.part(d.detector) == 'tune' for d in detectors)} "
                "tune, the rest report), "
            )
            + f"{sum(len(d.cases) for d in detectors)} cases read, "
            f"{sum(d.unread for d in detectors)} not read; distinct texts per part: "
            + ", ".join(f"{p} {label} {n}" for (p, label), n in sorted(count.items()))
            + f"; digest {trufflehog_corpus.digest(labelled)}"
        )
        out += [(source, p, label, text) for p, label, text in labelled]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    for source in SOURCES[:-2]:
        ap.add_argument(f"--{source}", type=Path, help=f"git directory of a {source} clone")
    for lang in SONAR_LANGS:  # all three or none: Sonar's analysers' credential check tests
        ap.add_argument(f"--sonar-{lang}", type=Path, help=f"git directory of sonar-{lang}")
    for source in POOLED:  # any of them: one set, `pooled`
        ap.add_argument(f"--{source}", type=Path, help=f"git directory of {source}")
    ap.add_argument("--gitleaks", type=Path, required=True, help="git directory of gitleaks")
    ap.add_argument("--candidates", default="memls")
    ap.add_argument("--show", choices=("tune", "report"))
    args = ap.parse_args()
    print("$ python benchmarks/secrets_untuned.py " + shlex.join(sys.argv[1:]))
    items = _items(args)
    config = Path(tempfile.mkdtemp()) / "gitleaks.toml"
    config.write_text(
        subprocess.run(
            [
                "git",
                f"--git-dir={args.gitleaks}",
                "show",
                f"{gitleaks_corpus.PINNED}:{candidates.CONFIG}",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    judge, _ = candidates._batch(candidates._gitleaks_run(config), [t for *_, t in items])
    label = [
        "gitleaks" if lab == "false-pattern" and judged else lab
        for (_, _, lab, _), judged in zip(items, judge)
    ]
    apart = Counter((s, p) for (s, p, _, _), lab in zip(items, label) if lab == "gitleaks")
    print(
        "false patterns the whole of gitleaks reports (counted apart): "
        + ", ".join(f"{s} {p} {n}" for (s, p), n in sorted(apart.items()))
    )
    groups = [(s, p) for s in SOURCES for p in ("tune", "report")]
    print(
        f"\n{'candidate':16} {'source':12} {'part':7} {'not-a-secret refused':>22}"
        f" {'credentials found':>19}"
    )
    for name in [n for n in args.candidates.split(",") if n]:
        detect = (
            candidates.IN_PROCESS[name]()
            if name in candidates.IN_PROCESS
            else candidates._memls_at(name[6:])
        )
        flags = [detect(text) for *_, text in items]
        pooled = Counter()
        for source, part in groups:
            fp = [
                i
                for i, (s, p, _, _) in enumerate(items)
                if (s, p) == (source, part) and label[i] == "false-pattern"
            ]
            tp = [
                i
                for i, (s, p, _, _) in enumerate(items)
                if (s, p) == (source, part) and label[i] == "credential"
            ]
            if not fp and not tp:
                continue
            hit, found = sum(flags[i] for i in fp), sum(flags[i] for i in tp)
            pooled[part, "fp"] += len(fp)
            pooled[part, "fp hit"] += hit
            print(
                f"{name:16} {source:12} {part:7} {hit:>5} of {len(fp):<4} "
                f"({hit / max(1, len(fp)):6.1%}) {found:>7} of {len(tp):<5}"
            )
            if args.show == part:
                for i in fp:
                    if flags[i]:
                        print(f"    refused: {items[i][3][:160]!r}")
        for part in ("tune", "report"):
            n, hit = pooled[part, "fp"], pooled[part, "fp hit"]
            print(f"{name:16} {'all':12} {part:7} {hit:>5} of {n:<4} ({hit / max(1, n):6.1%})")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
