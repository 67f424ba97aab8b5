"""Candidate pairs of lines from agent-instruction files and decision records in git histories.

    python training/mine_pairs.py --mirrors /work/.mirror --repos training/pairs/repos.txt \
        --dropped training/pairs/dropped.tsv --out training/pairs/cache

Reads every `owner+name/repo` bare git directory under --mirrors (or those named by --repos) and,
for the files that hold agent instructions or decision records (AGENTS.md, CLAUDE.md, GEMINI.md,
.claude/rules, copilot instructions, Cursor/Windsurf/Cline rules, adr/ and decisions/ folders),
writes candidate pairs of statement lines to be labelled later:

- hunk: a line removed and a line added in one change block, on the same subject (content-word
  Jaccard >= 0.2, or the same position in blocks of equal size);
- replace: a line removed in one commit and one added in the same commit elsewhere (another block
  of the file or another instruction file), sharing >= 2 content words and Jaccard >= 0.25;
- infile: two lines of one file at the snapshot commit sharing >= 2 content words;
- crossfile: two lines of two instruction files at the snapshot commit sharing >= 2 content words.

For hunk and replace, `a` is the older line (its line number is in the first parent of `commit`)
and `b` the newer one (in `commit`). Lines kept are statements: 4 to 60 words, not headings, not in
a code fence or front matter, not only a link, an image, a table row or HTML; list markers and
emphasis are stripped. Pairs equal after normalising are dropped; pairs are deduplicated
(unordered); each repository gives at most --cap pairs, sampled with a fixed seed across kinds.

Outputs in --out (text of fetched repositories, never committed): candidates.jsonl, batch-NN.jsonl
(blind to the split). Committed next to this script, coordinates only: split.json, manifest.json,
candidates.index.tsv (the sha256 of `a` and of `b` as written in candidates.jsonl, UTF-8, never
the text). repos.txt names the repositories mined; dropped.tsv those looked at and left out, why.

Line numbers are 1-based; for hunk and replace, `line_a` is in `parent` (the commit's first
parent) and `line_b` in `commit`; for infile and crossfile both are in `commit`, the snapshot.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20250611
KINDS = ("hunk", "replace", "infile", "crossfile")
# Share of each kind in a repository's quota (hunk+replace 40 %, infile 35 %, crossfile 25 %).
SHARE = {"hunk": 0.26, "replace": 0.16, "infile": 0.32, "crossfile": 0.26}
SPLITS = (("test", 0.25), ("dev", 0.15), ("train", 0.60))  # as PATTERN below

# Repositories never read: the kept-apart list (EXCLUDED.md) and the notes of the test set.
TEST_SET = (
    "openai/openai-agents-python",
    "modelcontextprotocol/python-sdk",
    "jlowin/fastmcp",
    "PrefectHQ/fastmcp",
    "getsentry/sentry-python",
    "getsentry/sentry-javascript",
    "pydantic/pydantic-ai",
    "langfuse/langfuse",
    "ministryofjustice/cloud-platform",
    "arachne-framework/architecture",
)
TEST_SET_NAMES = (
    "openai-agents-python",
    "python-sdk",
    "fastmcp",
    "sentry-python",
    "sentry-javascript",
    "pydantic-ai",
    "langfuse",
    "cloud-platform",
    "arachne-architecture",
    "architecture",
)

PATHSPECS = [
    ":(glob)**/AGENTS.md",
    ":(glob)**/CLAUDE.md",
    ":(glob)**/GEMINI.md",
    ":(glob)**/.claude/rules/**/*.md",
    ":(glob)**/copilot-instructions.md",
    ":(glob)**/*.instructions.md",
    ":(glob)**/.cursor/rules/**/*.mdc",
    ":(glob)**/.cursorrules",
    ":(glob)**/.windsurfrules",
    ":(glob)**/.clinerules",
    ":(glob)**/.clinerules/**/*.md",
    ":(glob)**/adr/*.md",
    ":(glob)**/adrs/*.md",
    ":(glob)**/decisions/*.md",
    ":(glob)**/architecture-decisions/*.md",
    ":(glob)**/decision-records/*.md",
    ":(glob)**/decision_records/*.md",
    ":(icase,glob)**/ADRs/*.md",
    ":(icase,glob)**/*adr[-_0-9]*.md",
    ":(glob)**/architecture-decision-records/*.md",
]
EXCLUDE_DIRS = (
    "node_modules",
    "vendor",
    "third_party",
    "fixtures",
    "fixture",
    "testdata",
    "__snapshots__",
    "__fixtures__",
    "test-data",
)
PATHSPECS += [f":(exclude,glob)**/{d}/**" for d in EXCLUDE_DIRS]
# The same selection as PATHSPECS, for listings that take no pathspec magic (ls-tree).
PATH_RE = re.compile(
    r"(^|/)(AGENTS|CLAUDE|GEMINI)\.md$|(^|/)\.claude/rules/.*\.md$|(^|/)copilot-instructions\.md$"
    r"|\.instructions\.md$|(^|/)\.cursor/rules/.*\.mdc$|(^|/)\.(cursorrules|windsurfrules|clinerules)$"
    r"|(^|/)\.clinerules/.*\.md$"
    r"|(?i:(^|/)(adr|adrs|decisions|architecture-decisions|(architecture-)?decision[-_]records)/"
    r"[^/]+\.md$)"
    r"|(?i:(^|/)([^/]*\b)?adr[-_]?\d+[^/]*\.md$)"
)
EXCLUDE_RE = re.compile(r"(^|/)(" + "|".join(re.escape(d) for d in EXCLUDE_DIRS) + r")/")
SKIP_NAMES = re.compile(r"(^|/)(README|index)\.md$|template[^/]*$", re.I)


def file_kind(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    if name == "AGENTS.md":
        return "agents"
    if name == "CLAUDE.md" or "/.claude/" in f"/{path}":
        return "claude"
    if name == "GEMINI.md":
        return "gemini"
    if name == "copilot-instructions.md" or name.endswith(".instructions.md"):
        return "copilot"
    if name.endswith(".mdc") or name == ".cursorrules":
        return "cursor"
    if name == ".windsurfrules":
        return "windsurf"
    if ".clinerules" in path:
        return "cline"
    return "decision"


# ---------------------------------------------------------------- text

STOP = set(
    """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each either etc few for from
further had has have having he her here hers him his how i if in into is it its itself just may
me might more most must my no nor not of off on once only or other our ours out over own same
shall she should so some such than that the their theirs them then there these they this those
through to too under until up upon us use used using very via was we were what when where which
while who whom why will with within without would yet you your yours e.g i.e eg ie always never
don't do not make sure please also instead new one two etc.
""".split()
)
WORD = re.compile(r"[a-z][a-z0-9+#]*(?:[-_.][a-z0-9+#]+)*|\d+(?:\.\d+)*")
LIST_MARK = re.compile(r"^\s*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+|>\s*)+")
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
EMPH = re.compile(r"(\*\*|__|\*|~~|`)")
HTML = re.compile(r"^\s*</?[a-zA-Z][^>]*>\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
FRONT_KEY = re.compile(r"^[A-Za-z_][\w-]*:\s")


def stem(w: str) -> str:
    for suf in ("ing", "ied", "ies", "ed", "es", "ly", "s"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)] + ("y" if suf in ("ied", "ies") else "")
    return w


def clean(line: str) -> str:
    """The statement of a markdown line: no list marker, emphasis or link syntax."""
    s = LIST_MARK.sub("", line.strip())
    s = LINK.sub(lambda m: m.group(1), s)
    s = EMPH.sub("", s)
    return re.sub(r"\s+", " ", s).strip()


def normal(text: str) -> str:
    return " ".join(WORD.findall(text.lower()))


def content(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in WORD.findall(text.lower()) if w not in STOP and len(w) > 1)


def statement(line: str) -> str | None:
    """The cleaned line when it reads as a statement, else None (structure is checked elsewhere)."""
    raw = line.strip()
    if not raw or HEADING.match(raw) or FENCE.match(raw) or raw.startswith("|") or HTML.match(raw):
        return None
    if re.fullmatch(r"[-=*_:| ]+", raw) or raw.startswith(
        ("<!--", "$ ", "{", "}", "//", "import ")
    ):
        return None
    s = clean(raw)
    if not s or not re.search(r"[A-Za-z]", s):
        return None
    if LINK.sub("", LIST_MARK.sub("", raw)).strip(" -*:.,;") == "":
        return None  # only a link or an image
    words = s.split()
    if not 4 <= len(words) <= 60:
        return None
    if sum(ch.isalpha() for ch in s) < 0.5 * len(s):
        return None  # mostly code or symbols
    if FRONT_KEY.match(raw) and len(words) < 8:
        return None
    return s


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def structure(lines: list[str]) -> list[tuple[bool, str]]:
    """For each line: (is prose, the heading it sits under)."""
    out: list[tuple[bool, str]] = []
    fence = False
    heading = ""
    front = bool(lines) and lines[0].strip() == "---"
    for i, line in enumerate(lines):
        if front:
            out.append((False, heading))
            if i > 0 and line.strip() == "---":
                front = False
            continue
        if FENCE.match(line):
            fence = not fence
            out.append((False, heading))
            continue
        if not fence and HEADING.match(line):
            heading = line.strip()
        out.append((not fence, heading))
    return out


# ---------------------------------------------------------------- git


def git(gitdir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "core.quotePath=false", "--git-dir", str(gitdir), *args],
        check=True,
        capture_output=True,
        text=True,
        errors="replace",
    ).stdout


class Blobs:
    """File texts by (commit, path) through one `git cat-file --batch`."""

    def __init__(self, gitdir: Path) -> None:
        self.proc = subprocess.Popen(
            ["git", "--git-dir", str(gitdir), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self.cache: dict[tuple[str, str], list[str] | None] = {}

    def lines(self, commit: str, path: str) -> list[str] | None:
        key = (commit, path)
        if key not in self.cache:
            assert self.proc.stdin and self.proc.stdout
            self.proc.stdin.write(f"{commit}:{path}\n".encode())
            self.proc.stdin.flush()
            head = self.proc.stdout.readline().decode().split()
            if len(head) < 3 or head[1] != "blob":
                self.cache[key] = None
            else:
                data = self.proc.stdout.read(int(head[2]) + 1)[:-1]
                self.cache[key] = data.decode("utf-8", "replace").splitlines()
        return self.cache[key]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait()


@dataclass
class Line:
    path: str
    no: int  # 1-based, in the version the pair names
    text: str  # cleaned statement
    raw: str
    words: frozenset[str]


@dataclass
class Cand:
    kind: str
    commit: str
    parent: str  # version of line a for hunk/replace; == commit for infile/crossfile
    date: str
    a: Line
    b: Line
    score: float
    extra: dict = field(default_factory=dict)


def parse_log(gitdir: Path) -> list[dict]:
    """Commits touching the instruction files, each with its change blocks per file."""
    fmt = "%x01%H %P%x02%cI"
    out = git(
        gitdir,
        "log",
        "-p",
        "-M",
        "-U0",
        "--no-merges",
        "--no-color",
        "--no-ext-diff",
        f"--format={fmt}",
        "HEAD",
        "--",
        *PATHSPECS,
    )
    commits: list[dict] = []
    cur: dict | None = None
    block: dict | None = None
    old_path = new_path = None
    o_no = n_no = 0
    for line in out.split("\n"):
        if line.startswith("\x01"):
            ids, _, date = line[1:].partition("\x02")
            parts = ids.split()
            cur = {
                "commit": parts[0],
                "parent": parts[1] if len(parts) > 1 else "",
                "date": date,
                "blocks": [],
            }
            commits.append(cur)
            block = None
            continue
        if cur is None:
            continue
        if line.startswith("diff --git "):
            block = None
            old_path = new_path = None
        elif line.startswith("--- "):
            p = line[4:].strip('"')
            old_path = None if p == "/dev/null" else p[2:]
        elif line.startswith("+++ "):
            p = line[4:].strip('"')
            new_path = None if p == "/dev/null" else p[2:]
        elif line.startswith("@@ "):
            m = re.match(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@", line)
            if not m:
                continue
            o_no, n_no = int(m.group(1)), int(m.group(2))
            block = {"old": old_path, "new": new_path, "rem": [], "add": []}
            cur["blocks"].append(block)
        elif block is not None and line.startswith("-") and not line.startswith("---"):
            block["rem"].append((o_no, line[1:].rstrip("\r")))
            o_no += 1
        elif block is not None and line.startswith("+") and not line.startswith("+++"):
            block["add"].append((n_no, line[1:].rstrip("\r")))
            n_no += 1
    return commits


def keep_path(path: str | None) -> bool:
    return (
        bool(path)
        and bool(PATH_RE.search(path or ""))
        and not EXCLUDE_RE.search(path or "")
        and not SKIP_NAMES.search(path or "")
    )


def lines_of(side: list[tuple[int, str]], path: str) -> list[Line]:
    out = []
    for no, raw in side:
        s = statement(raw)
        if s:
            out.append(Line(path, no, s, raw, content(s)))
    return out


def history_pairs(commits: list[dict], rng: random.Random) -> dict[str, list[Cand]]:
    pools: dict[str, list[Cand]] = {"hunk": [], "replace": []}
    for c in commits:
        if not c["parent"]:
            continue
        per: dict[str, list[Cand]] = {"hunk": [], "replace": []}
        rems: list[tuple[int, Line]] = []
        adds: list[tuple[int, Line]] = []
        for bi, blk in enumerate(c["blocks"]):
            if not (keep_path(blk["old"]) or keep_path(blk["new"])):
                continue
            r = lines_of(blk["rem"], blk["old"]) if blk["old"] else []
            a = lines_of(blk["add"], blk["new"]) if blk["new"] else []
            rems += [(bi, x) for x in r]
            adds += [(bi, x) for x in a]
            same_pos = len(r) == len(a) and 0 < len(r) <= 3 and len(blk["rem"]) == len(blk["add"])
            for i, x in enumerate(r):
                for j, y in enumerate(a):
                    if normal(x.text) == normal(y.text):
                        continue
                    jac = jaccard(x.words, y.words)
                    if jac >= 0.2 or (same_pos and i == j):
                        per["hunk"].append(
                            Cand("hunk", c["commit"], c["parent"], c["date"], x, y, jac)
                        )
        if len(rems) * len(adds) <= 40000:
            for bi, x in rems:
                for bj, y in adds:
                    if bi == bj or normal(x.text) == normal(y.text):
                        continue
                    shared = x.words & y.words
                    jac = jaccard(x.words, y.words)
                    if len(shared) >= 2 and jac >= 0.25:
                        per["replace"].append(
                            Cand("replace", c["commit"], c["parent"], c["date"], x, y, jac)
                        )
        for kind, lst in per.items():
            # A commit gives at most a few of each kind: the best and a random few.
            lst.sort(key=lambda k: -k.score)
            keep = lst[:2] + rng.sample(lst[2:], min(8, len(lst[2:])))
            pools[kind] += keep
    return pools


def head_lines(blobs: Blobs, head: str, paths: list[str]) -> dict[str, list[Line]]:
    out: dict[str, list[Line]] = {}
    for p in paths:
        text = blobs.lines(head, p)
        if not text:
            continue
        st = structure(text)
        got = []
        for i, raw in enumerate(text):
            if not st[i][0]:
                continue
            s = statement(raw)
            if s:
                got.append(Line(p, i + 1, s, raw, content(s)))
        if got:
            out[p] = got
    return out


def snapshot_pairs(
    by_path: dict[str, list[Line]], head: str, date: str, rng: random.Random
) -> dict[str, list[Cand]]:
    pools: dict[str, list[Cand]] = {"infile": [], "crossfile": []}
    for p in rng.sample(sorted(by_path), min(60, len(by_path))):
        lines = by_path[p]
        found = []
        for i, x in enumerate(lines):
            for y in lines[i + 1 :]:
                if len(x.words & y.words) >= 2 and normal(x.text) != normal(y.text):
                    found.append(Cand("infile", head, head, date, x, y, jaccard(x.words, y.words)))
        pools["infile"] += rng.sample(found, min(40, len(found)))
    paths = sorted(by_path)
    couples = [(p, q) for i, p in enumerate(paths) for q in paths[i + 1 :]]
    # Files of two kinds (AGENTS.md against .cursor/rules) first, then a random few of one kind.
    mixed = [c for c in couples if file_kind(c[0]) != file_kind(c[1])]
    same = [c for c in couples if file_kind(c[0]) == file_kind(c[1])]
    couples = rng.sample(mixed, min(40, len(mixed))) + rng.sample(same, min(40, len(same)))
    for p, q in couples:
        found = []
        for x in by_path[p]:
            for y in by_path[q]:
                if len(x.words & y.words) >= 2 and normal(x.text) != normal(y.text):
                    found.append(
                        Cand("crossfile", head, head, date, x, y, jaccard(x.words, y.words))
                    )
        n = 30 if file_kind(p) != file_kind(q) else 8
        pools["crossfile"] += rng.sample(found, min(n, len(found)))
    return pools


LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
ENDS = (".", "!", "?", ":", ";", ")", "`", "*")


def is_unit(text: list[str], i: int) -> bool:
    """Whether line i holds a whole statement, not a piece of a hard-wrapped paragraph."""

    def boundary(x: str) -> bool:
        return (
            not x.strip()
            or bool(HEADING.match(x) or FENCE.match(x))
            or x.lstrip().startswith(("|", "<", "---"))
        )

    def continues(x: str, y: str) -> bool:
        # x runs on into y: neither is a boundary, y starts no item, x ends mid-sentence and y
        # goes on in lower case or as an indented continuation.
        if boundary(x) or boundary(y) or LIST_ITEM.match(y) or x.rstrip().endswith(ENDS):
            return False
        return y.lstrip()[:1].islower() or (
            y[:1].isspace() and not x[:1].isspace() and bool(LIST_ITEM.match(x))
        )

    prev = text[i - 1] if i > 0 else ""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    return not continues(prev, text[i]) and not continues(text[i], nxt)


def near(text: list[str], i: int, step: int) -> str:
    j = i + step
    while 0 <= j < len(text) and not text[j].strip():
        j += step
    return text[j] if 0 <= j < len(text) else ""


def context(blobs: Blobs, commit: str, ln: Line) -> dict | None:
    text = blobs.lines(commit, ln.path)
    if not text or ln.no > len(text) or text[ln.no - 1] != ln.raw:
        return None
    st = structure(text)
    if not st[ln.no - 1][0] or not is_unit(text, ln.no - 1):
        return None  # in a code fence or front matter, or a piece of a wrapped paragraph
    return {
        "heading": st[ln.no - 1][1],
        "before": near(text, ln.no - 1, -1),
        "after": near(text, ln.no - 1, 1),
    }


def pair_key(a: str, b: str) -> tuple[str, str]:
    x, y = normal(a), normal(b)
    return (x, y) if x <= y else (y, x)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ---------------------------------------------------------------- licences

REJECT = (
    "GNU GENERAL PUBLIC LICENSE",
    "GNU AFFERO",
    "GNU LESSER",
    "Business Source License",
    "Elastic License",
    "Commons Clause",
    "Sustainable Use License",
    "PolyForm",
    "Functional Source License",
    "Server Side Public License",
    "NonCommercial",
    "NoDerivatives",
    "Portions of this software are licensed as follows",
)
ACCEPT = (
    ("Apache-2.0", r"Apache License,?\s+Version 2\.0"),
    ("MIT", r"Permission is hereby granted, free of charge"),
    ("BSD-3-Clause", r"Redistribution and use in source and binary forms[\s\S]*Neither the name"),
    ("BSD-2-Clause", r"Redistribution and use in source and binary forms"),
    (
        "ISC",
        r"Permission to use, copy, modify, and(/or)? distribute this software for any purpose"
        r" with or without fee is hereby granted, provided",
    ),
    (
        "0BSD",
        r"Permission to use, copy, modify, and/or distribute this software for any purpose"
        r" with or without fee is hereby granted\.\s+THE SOFTWARE",
    ),
    ("MPL-2.0", r"Mozilla Public License,?\s+(Version|v\.)\s*2\.0"),
    ("Unlicense", r"This is free and unencumbered software released into the public domain"),
    ("CC0-1.0", r"CC0 1\.0|Creative Commons Zero|CC0-1\.0"),
    ("CC-BY-SA-4.0", r"Attribution-ShareAlike 4\.0"),
    ("CC-BY-4.0", r"Attribution 4\.0 International"),
    ("Zlib", r"Altered source versions must be plainly marked"),
    ("PSF-2.0", r"PYTHON SOFTWARE FOUNDATION LICENSE"),
)
SPDX_LINE = re.compile(
    r"^(MIT|Apache-2\.0|BSD-[23]-Clause|ISC|MPL-2\.0|Unlicense|CC0-1\.0|0BSD)"
    r"(\s+(OR|AND)\s+(MIT|Apache-2\.0|CC0-1\.0|BSD-[23]-Clause))*\s*$"
)


def licence(gitdir: Path, head: str) -> tuple[str | None, str]:
    """(SPDX-like name or None, the licence files read)."""
    names = []
    for row in git(gitdir, "ls-tree", head).splitlines():
        meta, _, name = row.partition("\t")
        if meta.split()[1] == "blob" and re.match(r"(LICEN[CS]E|COPYING|UNLICENSE)", name, re.I):
            names.append(name)
    if not names:
        return None, ""
    found: list[str] = []
    for n in names:
        try:
            text = git(gitdir, "show", f"{head}:{n}")
        except subprocess.CalledProcessError:
            continue
        text = re.sub(r"\s+", " ", text)  # wrapped anywhere: "free of\ncharge"
        if any(r.lower() in text.lower() for r in REJECT):
            return None, ",".join(names)
        first = text.strip().splitlines()[0].strip() if text.strip() else ""
        if SPDX_LINE.match(first):
            return first, ",".join(names)
        for spdx, pat in ACCEPT:
            if re.search(pat, text, re.I):
                if spdx == "BSD-2-Clause" and "BSD-3-Clause" in found:
                    continue
                found.append(spdx)
                break
    found = list(dict.fromkeys(found))
    return (" AND ".join(found) if found else None), ",".join(names)


# ---------------------------------------------------------------- per repository


def excluded_names(path: Path) -> set[str]:
    names = {r.lower() for r in TEST_SET}
    if path.exists():
        names |= {m.lower() for m in re.findall(r"github:([\w.-]+/[\w.-]+)", path.read_text())}
    return names


def skip_reason(repo: str, excluded: set[str]) -> str | None:
    if repo.lower() in excluded:
        return "kept apart (EXCLUDED.md or the notes test set)"
    # a repository whose name extends a kept-apart one ("owner/name-suffix") is left out too:
    # the checks that keep repositories apart match names by prefix
    if any(repo.lower().startswith(name + "-") for name in excluded):
        return "kept apart (its name extends one in EXCLUDED.md)"
    if repo.split("/")[1].lower() in TEST_SET_NAMES and repo.split("/")[0].lower() in {
        r.split("/")[0].lower() for r in TEST_SET
    }:
        return "kept apart (the notes test set)"
    return None


def mine_repo(repo: str, gitdir: Path, cap: int) -> tuple[dict, list[dict]]:
    rng = random.Random(f"{SEED}:{repo}")
    head = git(gitdir, "rev-parse", "HEAD").strip()
    date = git(gitdir, "log", "-1", "--format=%cI", head).strip()
    lic, lic_files = licence(gitdir, head)
    info = {"repo": repo, "commit": head, "licence": lic, "licence_files": lic_files}
    if not lic:
        info["skipped"] = "no accepted licence" + (f" ({lic_files})" if lic_files else " file")
        return info, []
    listed = git(gitdir, "ls-tree", "-r", "--name-only", head).splitlines()
    head_paths = [p for p in listed if keep_path(p)]
    commits = parse_log(gitdir)
    touched = sorted(
        {p for c in commits for b in c["blocks"] for p in (b["old"], b["new"]) if keep_path(p)}
    )
    info["paths"] = sorted(set(head_paths) | set(touched))
    info["commits"] = len(commits)
    if not info["paths"]:
        info["skipped"] = "no instruction or decision files"
        return info, []
    blobs = Blobs(gitdir)
    try:
        pools = history_pairs(commits, rng)
        pools.update(snapshot_pairs(head_lines(blobs, head, head_paths), head, date, rng))
        chosen = choose(pools, cap, rng, blobs)
    finally:
        blobs.close()
    rows = []
    for c, ca, cb in chosen:
        rows.append(
            {
                "id": sha(f"{repo}\0{c.a.text}\0{c.b.text}")[:16],
                "repo": repo,
                "licence": lic,
                "kind": c.kind,
                "commit": c.commit,
                "parent": c.parent if c.kind in ("hunk", "replace") else None,
                "path_a": c.a.path,
                "line_a": c.a.no,
                "path_b": c.b.path,
                "line_b": c.b.no,
                "a": c.a.text,
                "b": c.b.text,
                "context_a": ca,
                "context_b": cb,
                "date": c.date,
                "file_kind_a": file_kind(c.a.path),
                "file_kind_b": file_kind(c.b.path),
            }
        )
    info["counts"] = dict(Counter(r["kind"] for r in rows))
    info["pool"] = {k: len(v) for k, v in pools.items()}
    return info, rows


def choose(pools: dict[str, list[Cand]], cap: int, rng: random.Random, blobs: Blobs):
    """Up to `cap` pairs, balanced across kinds; each checked against its file version."""
    for lst in pools.values():
        rng.shuffle(lst)
    quota = {k: round(cap * SHARE[k]) for k in KINDS}
    seen: set[tuple[str, str]] = set()
    out: dict[str, list] = {k: [] for k in KINDS}
    idx = dict.fromkeys(KINDS, 0)

    def take(kind: str) -> bool:
        lst = pools.get(kind, [])
        while idx[kind] < len(lst):
            c = lst[idx[kind]]
            idx[kind] += 1
            key = pair_key(c.a.text, c.b.text)
            if key in seen:
                continue
            ca = context(blobs, c.parent, c.a)
            cb = context(blobs, c.commit, c.b)
            if ca is None or cb is None:
                continue
            seen.add(key)
            out[kind].append((c, ca, cb))
            return True
        return False

    for kind in KINDS:
        while len(out[kind]) < quota[kind] and take(kind):
            pass
    # Fill what a kind lacked from the others; history first, as most repositories have little.
    total = sum(len(v) for v in out.values())
    open_kinds = ["hunk", "replace", "crossfile", "infile"]
    while total < cap and open_kinds:
        for kind in list(open_kinds):
            if total >= cap:
                break
            if take(kind):
                total += 1
            else:
                open_kinds.remove(kind)
    return [x for k in KINDS for x in out[k]]


# ---------------------------------------------------------------- split and outputs


def stratum(info: dict, rows: list[dict]) -> str:
    kinds = Counter(file_kind(p) for p in info.get("paths", []))
    if not kinds:
        return "other"
    top = kinds.most_common(1)[0][0]
    return top if top in ("agents", "claude", "copilot", "cursor", "decision") else "other-agent"


# Test 5, dev 3, train 12 in every 20, spread out; walked along the repositories grouped by
# stratum (each shuffled), so every split gets repositories of every kind of file.
PATTERN = "TrrDTrrrTrDrTrrrTrDr"


def split_repos(strata: dict[str, str], fixed: dict[str, str]) -> dict[str, str]:
    """Repositories of `fixed` (a split.json already written) keep their split; the others are
    walked along PATTERN by stratum (a first split) or, added to a fixed split, placed by a hash
    of their name, so that adding a repository never moves another one."""
    if fixed:
        out = {}
        for repo in strata:
            if repo in fixed:
                out[repo] = fixed[repo]
                continue
            x = int(sha(f"{SEED}:{repo}")[:8], 16) / 2**32
            out[repo] = "test" if x < 0.25 else "dev" if x < 0.40 else "train"
        return out
    rng = random.Random(SEED)
    groups: dict[str, list[str]] = defaultdict(list)
    for repo, s in sorted(strata.items()):
        groups[s].append(repo)
    order: list[str] = []
    for s in sorted(groups):
        members = sorted(groups[s])
        rng.shuffle(members)
        order += members
    names = {"T": "test", "D": "dev", "r": "train"}
    return {repo: names[PATTERN[i % len(PATTERN)]] for i, repo in enumerate(order)}


def put(path: Path, text: str) -> None:
    """Write `text` to `path` at once (a reader never sees half a file), and not at all when the
    file already holds it: batch files may be open in a labeller's hands."""
    if path.exists() and path.read_text() == text:
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def write_outputs(
    infos: list[dict],
    rows: list[dict],
    out: Path,
    committed: Path,
    dropped: list[dict],
    resplit: bool = False,
) -> None:
    mined = [i for i in infos if "skipped" not in i and i.get("counts")]
    strata = {i["repo"]: i["stratum"] for i in mined}
    fixed = {}
    if (committed / "split.json").exists() and not resplit:
        fixed = json.loads((committed / "split.json").read_text())["splits"]
    split = split_repos(strata, fixed)
    test = sorted(r for r, s in split.items() if s == "test")
    committed.mkdir(parents=True, exist_ok=True)
    put(
        committed / "split.json",
        json.dumps(
            {
                "seed": SEED,
                "by": "repository",
                "shares": dict(SPLITS),
                "test_sha256": sha("\n".join(test)),
                "splits": dict(sorted(split.items())),
            },
            indent=1,
        )
        + "\n",
    )
    rows.sort(key=lambda r: (r["repo"], r["kind"], r["id"]))
    out.mkdir(parents=True, exist_ok=True)
    put(out / "candidates.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    index = [
        "id\trepo\tsplit\tkind\tcommit\tparent\tpath_a\tline_a\tpath_b\tline_b"
        "\tsha256_a\tsha256_b\n"
    ]
    for r in rows:
        index.append(
            "\t".join(
                str(x)
                for x in (
                    r["id"],
                    r["repo"],
                    split[r["repo"]],
                    r["kind"],
                    r["commit"],
                    r["parent"] or "",
                    r["path_a"],
                    r["line_a"],
                    r["path_b"],
                    r["line_b"],
                    sha(r["a"]),
                    sha(r["b"]),
                )
            )
            + "\n"
        )
    put(committed / "candidates.index.tsv", "".join(index))
    # Batches of about 500, each mixing repositories, blind to the split.
    mixed = rows[:]
    random.Random(SEED).shuffle(mixed)
    nb = max(1, round(len(mixed) / 500))
    names = [f"batch-{b + 1:02d}.jsonl" for b in range(nb)]
    for old in out.glob("batch-*.jsonl"):
        if old.name not in names:
            old.unlink()
    keys = ("id", "kind", "repo", "a", "b", "context_a", "context_b")
    for b, name in enumerate(names):
        put(
            out / name,
            "".join(
                json.dumps({k: r[k] for k in keys}, ensure_ascii=False) + "\n" for r in mixed[b::nb]
            ),
        )
    per_split: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        per_split[split[r["repo"]]][r["kind"]] += 1
    manifest = {
        "script": "training/mine_pairs.py",
        "seed": SEED,
        "totals": {
            "repos": len(mined),
            "candidates": len(rows),
            "by_kind": dict(Counter(r["kind"] for r in rows)),
            "by_split": {
                s: dict(c) | {"all": sum(c.values())} for s, c in sorted(per_split.items())
            },
            "repos_by_split": dict(Counter(split.values())),
            "batches": nb,
        },
        "repos": [
            {
                k: i.get(k)
                for k in ("repo", "commit", "licence", "stratum", "commits", "paths", "counts")
            }
            | {"split": split[i["repo"]]}
            for i in sorted(mined, key=lambda i: i["repo"].lower())
        ],
        "skipped": [
            {
                "repo": i["repo"],
                "commit": i.get("commit"),
                "why": i.get("skipped") or "no candidates",
            }
            for i in sorted(infos, key=lambda i: i["repo"].lower())
            if i not in mined
        ]
        + dropped,
    }
    put(committed / "manifest.json", json.dumps(manifest, indent=1) + "\n")


def repo_dirs(mirrors: Path, only: list[str] | None) -> list[tuple[str, Path]]:
    found = []
    for d in sorted(mirrors.iterdir()):
        if "+" not in d.name or not (d / "repo").is_dir():
            continue
        repo = d.name.replace("+", "/", 1)
        if only is None or repo in only:
            found.append((repo, d / "repo"))
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--repos", type=Path, help="a file of owner/name, one a line (default: all)")
    ap.add_argument("--excluded", type=Path, default=Path("/work/shared/data/EXCLUDED.md"))
    ap.add_argument("--out", type=Path, default=Path("training/pairs/cache"))
    ap.add_argument("--committed", type=Path, default=Path("training/pairs"))
    ap.add_argument("--cap", type=int, default=60)
    ap.add_argument(
        "--resplit",
        action="store_true",
        help="split afresh, ignoring the split.json already in --committed (before any labelling)",
    )
    ap.add_argument(
        "--dropped",
        type=Path,
        help="repositories looked at and not mirrored: owner/name TAB why, one a line",
    )
    args = ap.parse_args()
    only = None
    if args.repos:
        only = [
            x.strip()
            for x in args.repos.read_text().splitlines()
            if x.strip() and not x.startswith("#")
        ]
    excluded = excluded_names(args.excluded)
    infos, rows = [], []
    t0 = time.time()
    for repo, gitdir in repo_dirs(args.mirrors, only):
        why = skip_reason(repo, excluded)
        if why:
            infos.append({"repo": repo, "skipped": why})
            print(f"skip {repo}: {why}", file=sys.stderr)
            continue
        t = time.time()
        try:
            info, got = mine_repo(repo, gitdir, args.cap)
        except subprocess.CalledProcessError as e:
            infos.append({"repo": repo, "skipped": f"git failed: {e.stderr.strip()[:200]}"})
            print(f"{repo}: git failed: {e.stderr.strip()[:200]}", file=sys.stderr)
            continue
        info["stratum"] = stratum(info, got)
        infos.append(info)
        rows += got
        print(
            f"{repo}: {info.get('skipped') or info.get('counts')} pool={info.get('pool')}"
            f" {time.time() - t:.1f}s",
            file=sys.stderr,
        )
    dropped = []
    if args.dropped:
        for row in args.dropped.read_text().splitlines():
            if row.strip() and not row.startswith("#"):
                repo, _, why = row.partition("\t")
                dropped.append({"repo": repo.strip(), "commit": None, "why": why.strip()})
    write_outputs(infos, rows, args.out, args.committed, dropped, args.resplit)
    print(
        f"{len(rows)} candidates from {sum(1 for i in infos if i.get('counts'))} repositories"
        f" in {time.time() - t0:.0f}s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
