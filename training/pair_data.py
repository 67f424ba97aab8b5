"""Builds the pair model's train / dev / test sets from pinned sources (nothing fetched is
committed: `manifest.json` pins repository, commit, path, licence, sha256 and counts).

    python training/pair_data.py --mirror /work/.mirror --out /tmp/pair-data

`--mirror` holds one bare git directory per repository (`<mirror>/<owner>+<name>/repo`, as the
`fetch` tool leaves them). Every file is read at its pinned commit and checked against its
sha256. Sources:

- SNLI dev + test from e-SNLI (CC BY-SA 4.0): split by premise (a premise's three hypotheses
  stay together), 90 / 5 / 5;
- our generated pairs (`training/data/generated.jsonl`, `generate_pairs.py`): split by group
  (a family and subject), 80 / 10 / 10;
- real pairs of lines from public instruction files and decision records (`kind` "real":
  `training/pairs/`, mined by `mine_pairs.py`, labelled by reading against
  `training/pairs/GUIDE.md`): the text is read from the mining cache
  (`training/pairs/cache/candidates.jsonl`, rebuilt from the pinned commits), the labels from
  `training/pairs/labels/*.jsonl`, the split from `training/pairs/split.json` (by repository,
  frozen before any training). restatement -> entailment; compatible and unrelated -> neutral;
- counterparts we wrote for real lines (`kind` "counterparts", `training/pairs/counterparts/`):
  each names the real line it answers (a candidate's id and side), in training and dev only.

Before anything is written, every pair whose sentence is one of the evaluation sets' (the
labelled conflict pairs, the near-duplicate groups, the planted instruction lines), or close to
one (content-word Jaccard >= 0.8), is dropped and counted: the model is measured on sets it has
not seen.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MANIFEST = HERE / "manifest.json"
LABELS = ("contradiction", "entailment", "neutral")


def git_show(mirror: Path, repo: str, commit: str, path: str) -> bytes:
    gitdir = mirror / repo.replace("/", "+") / "repo"
    if (gitdir / ".git").is_dir():
        gitdir = gitdir / ".git"
    return subprocess.run(
        ["git", "--git-dir", str(gitdir), "show", f"{commit}:{path}"],
        check=True,
        capture_output=True,
    ).stdout


def split_of(key: str, parts: tuple[float, float]) -> str:
    h = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "train" if h < parts[0] else "dev" if h < parts[0] + parts[1] else "test"


WORD = re.compile(r"[a-z0-9_.]+")


def words(text: str) -> frozenset[str]:
    return frozenset(w.strip(".") for w in WORD.findall(text.lower()) if len(w.strip(".")) > 2)


def eval_sentences() -> list[str]:
    """Every sentence of the evaluation sets in this checkout."""
    out: list[str] = []
    for f in [
        ROOT / "tests/data/conflict_pairs.jsonl",
        *sorted((ROOT / "benchmarks/data/conflict_pairs").glob("*.jsonl")),
    ]:
        for line in f.read_text().splitlines():
            if line.strip():
                d = json.loads(line)
                out += [d["new"], d["existing"]]
    tsv = ROOT / "benchmarks/data/conflict_pairs/pairs.tsv"
    for line in tsv.read_text().splitlines():
        out += line.split("\t")[2:4]
    for f in (ROOT / "benchmarks/data/near_duplicates").glob("*.txt"):
        for line in f.read_text().splitlines():
            if line and not line.startswith("#"):
                out.append(line.split(":", 1)[-1] if line[0] not in "=~!" else line[1:])
    for d in ("instructions", "instructions-dev"):
        for line in (ROOT / "benchmarks/data" / d / "edits.jsonl").read_text().splitlines():
            if line.strip():
                out.append(json.loads(line)["text"])
    return [s.strip() for s in out if s.strip()]


class Overlap:
    def __init__(self, sentences: list[str]) -> None:
        self.exact = {s.lower() for s in sentences}
        self.sets = [w for w in map(words, sentences) if len(w) >= 3]
        self.index: dict[str, list[int]] = {}
        for i, w in enumerate(self.sets):
            for t in w:
                self.index.setdefault(t, []).append(i)

    def hit(self, text: str) -> bool:
        if text.strip().lower() in self.exact:
            return True
        w = words(text)
        if len(w) < 3:
            return False
        cand = Counter(i for t in w for i in self.index.get(t, ()))
        return any(len(w & self.sets[i]) / len(w | self.sets[i]) >= 0.8 for i in cand)


def snli(mirror: Path, src: dict) -> list[dict]:
    files = {}
    for name, meta in src["files"].items():
        data = git_show(mirror, src["repo"], src["commit"], meta["path"])
        digest = hashlib.sha256(data).hexdigest()
        if digest != meta["sha256"]:
            sys.exit(f"{src['repo']}:{meta['path']}: sha256 {digest} != pinned {meta['sha256']}")
        files[name] = data.decode().splitlines()
    out = []
    for part in ("dev", "test"):
        s1, s2, lab = files[f"s1.{part}"], files[f"s2.{part}"], files[f"labels.{part}"]
        assert len(s1) == len(s2) == len(lab), part
        for p, h, y in zip(s1, s2, lab):
            y = y.strip()
            if y in LABELS:
                out.append(
                    dict(
                        p=p.strip(), h=h.strip(), label=y, family="snli", group=f"snli:{p.strip()}"
                    )
                )
    return out


PAIR_LABELS = {
    "contradiction": "contradiction",
    "restatement": "entailment",
    "compatible": "neutral",
    "unrelated": "neutral",
}


def real_candidates(src: dict) -> dict[str, dict]:
    path = ROOT / src["candidates"]
    if not path.is_file():
        sys.exit(f"{path}: missing; run training/mine_pairs.py over the pinned mirrors first")
    return {d["id"]: d for d in map(json.loads, path.read_text().splitlines()) if d}


def real_labels(src: dict) -> dict[str, str]:
    """The first labelling of each pair (the settled label where a disagreement was settled)."""
    out: dict[str, str] = {}
    for f in sorted((ROOT / src["labels"]).glob("*.jsonl")):
        for line in f.read_text().splitlines():
            if line.strip():
                d = json.loads(line)
                out[d["id"]] = d.get("settled") or d["label"]
    return out


def real(src: dict) -> list[dict]:
    cands = real_candidates(src)
    splits = json.loads((ROOT / src["split_file"]).read_text())["splits"]
    rows = []
    for pid, label in real_labels(src).items():
        c = cands.get(pid)
        if c is None or label not in PAIR_LABELS or c["repo"] not in splits:
            continue
        rows.append(
            dict(
                p=c["a"],
                h=c["b"],
                label=PAIR_LABELS[label],
                family=f"real/{c['kind']}",
                fine=label,
                group=c["repo"],
                split=splits[c["repo"]],
                id=pid,
            )
        )
    return rows


def counterparts(src: dict) -> list[dict]:
    cands = real_candidates(src)
    splits = json.loads((ROOT / src["split_file"]).read_text())["splits"]
    rows = []
    for f in sorted((ROOT / src["path"]).glob("*.jsonl")):
        for line in f.read_text().splitlines():
            if not line.strip():
                continue
            d = json.loads(line)
            c = cands.get(d["id"])
            if c is None or d["label"] not in PAIR_LABELS or c["repo"] not in splits:
                continue
            split = splits[c["repo"]]
            if split == "test":  # counterparts are for training and tuning only
                continue
            rows.append(
                dict(
                    p=c[d.get("side", "a")],
                    h=d["text"],
                    label=PAIR_LABELS[d["label"]],
                    family=f"counterpart/{d.get('form', d['label'])}",
                    fine=d["label"],
                    group=c["repo"],
                    split=split,
                )
            )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    manifest = json.loads(MANIFEST.read_text())
    overlap = Overlap(eval_sentences())
    pairs: list[dict] = []
    for src in manifest["sources"]:
        if src["kind"] == "snli":
            rows = snli(args.mirror, src)
        elif src["kind"] == "real":
            rows = real(src)
        elif src["kind"] == "counterparts":
            rows = counterparts(src)
        else:
            rows = [
                json.loads(x) for x in (ROOT / src["path"]).read_text().splitlines() if x.strip()
            ]
        parts = tuple(src.get("split", (0.8, 0.1)))
        kept = dropped = 0
        for r in rows:
            # the frozen real test split is kept whole: only what trains or tunes is filtered
            if r.get("split") != "test" and (overlap.hit(r["p"]) or overlap.hit(r["h"])):
                dropped += 1
                continue
            r["source"] = src["name"]
            if "split" not in r:  # real pairs and counterparts carry their repository's split
                r["split"] = split_of(r["group"], parts)
            pairs.append(r)
            kept += 1
        print(
            f"{src['name']}: {len(rows)} pairs, {dropped} dropped as close to an evaluation "
            "sentence"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    for split in ("train", "dev", "test"):
        rows = [r for r in pairs if r["split"] == split]
        rng.shuffle(rows)
        with (args.out / f"{split}.jsonl").open("w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        by = Counter((r["source"], r["label"]) for r in rows)
        print(split, len(rows), dict(sorted(by.items())))
    groups = {s: {r["group"] for r in pairs if r["split"] == s} for s in ("train", "dev", "test")}
    sent = {s: {t for r in pairs if r["split"] == s for t in (r["p"], r["h"])} for s in groups}
    assert not groups["train"] & groups["test"] and not groups["train"] & groups["dev"]
    print("sentences shared by train and test:", len(sent["train"] & sent["test"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
