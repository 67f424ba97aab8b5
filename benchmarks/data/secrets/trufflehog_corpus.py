"""TruffleHog's per-detector pattern tests as a labelled corpus: in `pkg/detectors/**/*_test.go`
of a TruffleHog checkout at a pinned commit, each `Test..._Pattern` function's table of cases
(`name`, `input`, `want []string`). A case whose detector must report something (`want` not
empty) is a credential; one whose detector must report nothing (`want: nil`, `[]string{}`) is
a false pattern. TruffleHog is AGPL-3.0: nothing of it is kept in this repository, and the
corpus is rebuilt from the snapshot on each run (the strings are printed only as a digest).

The tables are Go: they are read with the evaluator of gitleaks_corpus.py (string literals,
`+`, `fmt.Sprintf`, `strings.Repeat`, package and local variables). A case it cannot read (a
helper function, a loop, a value from the detector's own file) is left out and counted.

A false pattern says "this detector must not report it", not "no credential is here": most
are a key of the detector's service made to fail its pattern. One is counted apart when it
holds, whole, a value that some case of the corpus names as a credential (`want`: the same key
out of its keyword's reach, or without the other half a detector needs), or a near-copy of a
credential of its own detector (a character changed, added or cut). What is left is judged
not a secret; benchmarks/data/secrets/candidates.py takes apart, as for gitleaks' own lists,
those that the whole of gitleaks reports.

Each detector (its folder under pkg/detectors, `aws/access_keys`) goes to one of two parts by
the first byte of sha256(folder): even is the part rules may be tuned on (`tune`), odd the part
only reported (`report`).
"""

from __future__ import annotations

import difflib
import hashlib
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitleaks_corpus import Evaluator, Parser, Tok, Unreadable, tokens

PINNED = "3ab759fef4bb5935d4fe9ac68b503d05346b8364"
DETECTORS = "pkg/detectors/"
_ERRORS = (Unreadable, IndexError, KeyError, TypeError, ValueError, AttributeError)


def part(detector: str) -> str:
    return "tune" if hashlib.sha256(detector.encode()).digest()[0] % 2 == 0 else "report"


@dataclass
class Case:
    detector: str
    name: str
    text: str
    want: list[str]

    @property
    def credential(self) -> bool:
        return bool(self.want)


@dataclass
class Detector:
    detector: str
    cases: list[Case] = field(default_factory=list)
    unread: int = 0


def _skip(toks: list[Tok], i: int) -> int:
    """The index after the balanced group that opens at toks[i]."""
    depth = 0
    while i < len(toks):
        if toks[i].text in ("(", "[", "{"):
            depth += 1
        elif toks[i].text in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def _globals(toks: list[Tok], ev: Evaluator) -> None:
    """Package-level `var`/`const` declarations, one or a parenthesised block, into ev.env."""
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.text == "func":
            while i < len(toks) and toks[i].text != "{":
                i += 1
            i = _skip(toks, i)
            continue
        if t.text in ("var", "const"):
            if toks[i + 1].text == "(":
                end = _skip(toks, i + 1)
                j = i + 2
                while j < end - 1:
                    j = _declare(toks, j, ev) + 1
                i = end
                continue
            i = _declare(toks, i + 1, ev)
        i += 1


def _declare(toks: list[Tok], j: int, ev: Evaluator) -> int:
    """`name [type] = value` at toks[j]; the index of the `;` or `)` that ends it."""
    name = toks[j].text if toks[j].kind == "id" else None
    k = j + 1
    while k < len(toks) and toks[k].text not in ("=", ";", ")"):
        k += 1
    if name and k < len(toks) and toks[k].text == "=":
        p = Parser(toks, k + 1)
        try:
            ev.env[name] = ev.ev(p.expr())
            k = p.i
        except _ERRORS:
            pass
    while k < len(toks) and toks[k].text not in (";", ")"):
        k = _skip(toks, k) if toks[k].text in ("(", "[", "{") else k + 1
    return k


def _pattern_tests(toks: list[Tok]) -> list[tuple[int, int]]:
    """(start, end) of the body of each `func Test..._Pattern...(t *testing.T)`."""
    out = []
    for i, t in enumerate(toks[:-1]):
        name = toks[i + 1].text
        if t.text == "func" and name.startswith("Test") and "Pattern" in name:
            j = i
            while toks[j].text != "{":
                j += 1
            out.append((j + 1, _skip(toks, j) - 1))
    return out


def _cases(toks: list[Tok], start: int, end: int, ev: Evaluator, detector: Detector) -> None:
    """Local assignments in order, and the table `tests := []struct{...}{...}` read case by
    case."""
    i = start
    depth = 0
    while i < end:
        t = toks[i]
        if t.text in ("{", "(", "["):
            depth += 1
        elif t.text in ("}", ")", "]"):
            depth -= 1
        if depth == 0 and t.kind == "id" and toks[i + 1].text in (":=", "="):
            at = i + 2
            if toks[at].text == "[" and toks[at + 2].text == "struct":
                table = _skip(toks, at + 3)  # past the struct's fields
                p = Parser(toks, table)
                items = p.braced()[1]
                for item in items:
                    _case(item, ev, detector)
                i = p.i
                continue
            p = Parser(toks, at)
            try:
                ev.env[t.text] = ev.ev(p.expr())
                i = p.i
                continue
            except _ERRORS:
                ev.env.pop(t.text, None)
        i += 1


def _case(item: Any, ev: Evaluator, detector: Detector) -> None:
    if item[0] != "items":
        detector.unread += 1
        return
    fields = {kv[1][1]: kv[2] for kv in item[1] if kv[0] == "kv" and kv[1][0] == "var"}
    if "input" not in fields or "want" not in fields:
        detector.unread += 1
        return
    try:
        name = ev.ev(fields["name"]) if "name" in fields else ""
        text = ev.ev(fields["input"])
        want = ev.ev(fields["want"])
    except _ERRORS:
        detector.unread += 1
        return
    if not isinstance(text, str) or not isinstance(want, list) or not text.strip():
        detector.unread += 1
        return
    detector.cases.append(Case(detector.detector, str(name), text, [str(w) for w in want]))


def read_detector(name: str, sources: list[str]) -> Detector:
    """The cases of one detector's test files (Go sources)."""
    detector = Detector(name)
    for src in sources:
        toks = tokens(src)
        ev = Evaluator(name, {})
        _globals(toks, ev)
        base = dict(ev.env)
        for start, end in _pattern_tests(toks):
            ev.env = dict(base)
            _cases(toks, start, end, ev, detector)
    return detector


def load(git_dir: Path, commit: str = PINNED) -> list[Detector]:
    """Every detector's cases in the TruffleHog snapshot in `git_dir` at `commit`."""
    names = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", commit, DETECTORS],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    tests = [n for n in names if n.endswith("_test.go") and "integration" not in n]
    by_folder: dict[str, list[str]] = {}
    for path in tests:
        folder = str(Path(path).parent.relative_to(DETECTORS.rstrip("/")))
        src = subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        if "Pattern" in src:
            by_folder.setdefault(folder, []).append(src)
    return [read_detector(f, srcs) for f, srcs in sorted(by_folder.items()) if f != "."]


_SEPARATORS = re.compile(r"[:;|,\s@]+")
_WORD = re.compile(r"[^\s\"'`]{12,}")
NEAR = 0.85  # difflib ratio from which a string is a near-copy of a credential


def _pieces(values: list[str], least: int) -> set[str]:
    """The values and their parts between separators (`id:secret` is two credentials)."""
    out = {v for v in values if len(v) >= least}
    for v in values:
        out |= {p for p in _SEPARATORS.split(v) if len(p) >= least}
    return out


def labelled(
    detectors: list[Detector], least: int = 8, split: bool = True
) -> list[tuple[str, str, str]]:
    """(part, credential | false-pattern | same-value | near-copy, text), each distinct text once
    per part. A false pattern is taken apart when it holds, whole, a value (or, with `split`, a
    part of one) of at least `least` characters that some case names as a credential
    (`same-value`), or a near-copy of one its own detector names (`near-copy`: a character
    changed, added or cut, as the tests make a key that one format refuses). Values in words
    (`user=admin&password=...`) want `split` off: their parts are words, not credentials."""
    values = [w for d in detectors for c in d.cases for w in c.want]
    wanted = _pieces(values, least) if split else {v for v in values if len(v) >= least}
    out: dict[tuple[str, str], str] = {}
    for d in detectors:
        own = _pieces([w for c in d.cases for w in c.want], 12)
        for c in d.cases:
            key = (part(d.detector), c.text)
            if c.credential:
                out[key] = "credential"
            elif key in out:
                continue
            elif any(w in c.text for w in wanted):
                out[key] = "same-value"
            elif any(
                difflib.SequenceMatcher(None, a, b).ratio() >= NEAR
                for a in _WORD.findall(c.text)
                for b in own
            ):
                out[key] = "near-copy"
            else:
                out[key] = "false-pattern"
    return [(p, label, text) for (p, text), label in out.items()]


def digest(items: list[tuple[str, str, str]]) -> str:
    h = hashlib.sha256()
    for p, label, text in sorted(items):
        h.update(f"{p}\0{label}\0{text}\0".encode())
    return h.hexdigest()[:16]
