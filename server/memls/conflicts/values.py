"""The value-change signal: the same attribute of the same subject holds another value
("The API listens on port 8080" / "The API port is 9090", "Django 5.0" / "Django 4.2"). Sizes
and durations compare with a tolerance; a period is not a length, a reading is not a bound.
"""

from __future__ import annotations

import re

from memls.conflicts import phrasing
from memls.conflicts.quantities import Value
from memls.conflicts.stems import GENERIC_STEMS, stem
from memls.conflicts.subjects import (
    SHORT_TEXT_KEYS,
    modified_apart,
    same_subject,
    slot_of,
    subject_of,
)
from memls.conflicts.text import Analysis, Clause

#: Relative tolerance for sizes and durations (10 MB vs 10 MiB, a year vs 12 months).
#: Ports, counts, versions, percentages and clock times compare exactly.
VALUE_TOLERANCE = 0.05


_TOLERANT_KINDS = frozenset({"size", "duration", "offset", "rate"})


def can_compare(x: Value, y: Value) -> bool:
    if x.kind != y.kind or x.kind == "year":
        return False
    if x.kind == "version":
        return _same_anchor(x.anchor, y.anchor)
    if x.kind == "count":
        return not x.units or not y.units or bool(x.units & y.units)
    if x.kind == "rate":
        return bool(x.units & y.units)
    return True


def _same_anchor(x: str, y: str) -> bool:
    """One product named two ways: "node" / "node.js", "postgres" / "postgresql"."""
    if not x or not y:
        return False
    short, long = sorted((x, y), key=len)
    if "." in long and "." not in short:
        long = stem(long.split(".")[0])  # "node.js" is node
    return x == y or short == long or (len(short) >= 4 and long.startswith(short))


def equal_values(x: Value, y: Value) -> bool:
    if isinstance(x.magnitude, tuple) and isinstance(y.magnitude, tuple):
        n = min(len(x.magnitude), len(y.magnitude))  # "Python 3" agrees with "Python 3.12"
        if "+" in x.units or "+" in y.units:  # "v10+" agrees with 10, 11, ..., not with 9
            low, other = (
                (x.magnitude, y.magnitude) if "+" in x.units else (y.magnitude, x.magnitude)
            )
            return ("+" in x.units and "+" in y.units) or other[:n] >= low[:n]
        return x.magnitude[:n] == y.magnitude[:n]
    if isinstance(x.magnitude, float) and isinstance(y.magnitude, float):
        if x.kind not in _TOLERANT_KINDS:
            return x.magnitude == y.magnitude
        scale = max(abs(x.magnitude), abs(y.magnitude), 1e-9)
        return abs(x.magnitude - y.magnitude) <= VALUE_TOLERANCE * scale
    return False


def differing_values(cn: Clause, ce: Clause, a: Analysis, b: Analysis) -> list[tuple[Value, Value]]:
    pairs = []
    for x in cn.values:
        for y in ce.values:
            if not can_compare(x, y) or equal_values(x, y):
                continue
            if any(can_compare(x, z) and equal_values(x, z) for z in b.values):
                continue  # the old text also states the new value
            if any(can_compare(y, z) and equal_values(y, z) for z in _kept(a)):
                continue  # the new text still states the old value
            pairs.append((x, y))
    return pairs


_REPLACED_BEFORE = re.compile(
    r"\b(?:instead of|rather than|in place of|from)\s+(?:(?!to\b|into\b)\S+\s+){0,3}$"
)


def _kept(a: Analysis) -> list[Value]:
    """The values a text states as holding: not one it names as replaced ("every two weeks
    rather than every month", "from 30 to 60 seconds")."""
    out = []
    for c in a.clauses:
        for v in c.values:
            at = c.text.find(v.surface)
            if at > 0 and _REPLACED_BEFORE.search(c.text[:at]):
                continue
            out.append(v)
    return out


def value_change(
    cn: Clause, ce: Clause, a: Analysis, b: Analysis, ignore: frozenset[str]
) -> list[str]:
    pairs = differing_values(cn, ce, a, b)
    if not pairs:
        return []
    anchors = frozenset(x.anchor for x, _ in pairs if x.kind == "version")
    subject_n, subject_e = subject_of(cn), subject_of(ce)
    if anchors:  # the product is the shared subject of a version ("Django 5.0" / "Django 4.2")
        subject_n, subject_e = subject_n | anchors, subject_e | anchors
    pairs = [(x, y) for x, y in pairs if _periodic(cn, x) == _periodic(ce, y)]
    pairs = [(x, y) for x, y in pairs if not _reading_and_bound(cn, x, ce, y)]
    if not pairs:
        return []  # "retained for 90 days" / "run every 6 hours": a lifetime and a period
    spelled = bool(a.joined & set(ce.keys) or b.joined & set(cn.keys))  # "time out"/"timeout"
    if not same_subject(subject_n, subject_e, ignore) and not (
        _one_attribute(pairs, cn, ce, subject_n, subject_e, a, b)
        and (spelled or not _parallel(cn, ce))
    ):
        return []
    return [t for x, y in pairs for t in (x.surface, y.surface)]


_PERIOD = re.compile(r"\b(?:every|each|per|once a|once an?)\s+$")


def _periodic(clause: Clause, value: Value) -> bool:
    """A duration said as a period ("every 6 hours"), not as a length ("for 90 days")."""
    if value.kind != "duration":
        return False
    if "<every>" in value.units:
        return True  # "weekly", "every night", "once a week"
    at = clause.text.find(value.surface)
    return at > 0 and bool(_PERIOD.search(clause.text[:at]))


_BOUND = re.compile(
    r"\b(?:below|above|under|over|at least|at most|less than|more than|fewer than|no more than|"
    r"up to|exceeds?|exceeding|minimum of|maximum of|max|min)\s+$"
)


#: Words of a norm: a value that is a rule ("the coverage gate is 80%"), not a reading.
_NORM = re.compile(
    r"\b(?:gate|threshold|limit|minimum|maximum|target|budget|cap|must|required|fails?)\b"
)


_READING = re.compile(r"\b(?:today|currently|right now|at the moment|as of|so far|this week)\b")


def _bound(clause: Clause, value: Value) -> bool:
    at = clause.text.find(value.surface)
    return at > 0 and bool(_BOUND.search(clause.text[:at]))


def _reading_and_bound(cn: Clause, x: Value, ce: Clause, y: Value) -> bool:
    """A measurement taken at a time ("coverage is 91% today") against a threshold ("CI fails
    when coverage drops below 80 percent"): a reading within a rule, two attributes."""
    return any(
        _READING.search(c.text) is not None
        and not _bound(c, v)
        and (_bound(d, w) or _NORM.search(d.text) is not None)
        and _READING.search(d.text) is None
        for c, v, d, w in ((cn, x, ce, y), (ce, y, cn, x))
    )


def _parallel(cn: Clause, ce: Clause) -> bool:
    """The two clauses say the same thing of two different subjects: one run of words differs,
    at the same place ("Worker pods get 2 GiB" / "API pods get 512 MiB")."""
    said = {stem(w) for v in (*cn.values, *ce.values) if _spoken(v) for w in v.surface.split()}
    keys_n = tuple(k for k in cn.keys if k not in said)  # "weekly" / "every day" are values
    keys_e = tuple(k for k in ce.keys if k not in said)
    only_n = [k for k in keys_n if k not in keys_e]
    only_e = [k for k in keys_e if k not in keys_n]
    if not only_n or not only_e:
        return False
    slot_n, slot_e = slot_of(keys_n, only_n), slot_of(keys_e, only_e)
    if slot_n is None or slot_e is None:
        return False
    return (slot_n[0] is not None and slot_n[0] == slot_e[0]) or (
        slot_n[1] is not None and slot_n[1] == slot_e[1]
    )


def _spoken(value: Value) -> bool:
    """A value said in words that stay subject words ("weekly", "every day", "Thursdays")."""
    return value.kind == "weekday" or "<every>" in value.units


#: Value kinds that measure one attribute whatever the words around them.
_MEASURES = frozenset({"duration", "size", "percent", "port", "weekday", "offset"})


_NO_NAMES: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())


def _wordy(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """Tokens without bare numbers ("100 requests"): a value is what differs, not a modifier
    of a subject; identifiers with digits ("v1 clients") stay."""
    return tuple("" if t.replace(".", "").replace(",", "").isdigit() else t for t in tokens)


def _one_attribute(
    pairs: list[tuple[Value, Value]],
    cn: Clause,
    ce: Clause,
    subject_n: set[str],
    subject_e: set[str],
    a: Analysis,
    b: Analysis,
) -> bool:
    """Two statements that each give ONE measure of a kind, about a shared subject word:
    "The HTTP client times out after 5 seconds" / "Outbound HTTP requests time out after 30
    seconds". A second measure of the kind on either side means two attributes."""
    for x, y in pairs:
        if x.kind in _MEASURES:
            same = lambda v, w: v.kind == w.kind  # noqa: E731
        elif x.kind == "rate":
            each = {u[1:] for u in x.units | y.units if u.startswith("/")}
            if not each <= (a.keys & b.keys) | frozenset(u[1:] for u in x.units & y.units):
                continue  # "per token" / "anonymous clients": a rate of another thing
            same = lambda v, w: v.kind == w.kind and bool(v.units & w.units)  # noqa: E731
        elif x.kind == "version":
            same = lambda v, w: v.kind == w.kind and _same_anchor(v.anchor, w.anchor)  # noqa: E731
        else:
            continue  # a bare count ("3 times") measures whatever its words say
        if (
            len({v.magnitude for v in _kept(a) if same(v, x)}) != 1
            or len({v.magnitude for v in _kept(b) if same(v, y)}) != 1
        ):
            continue
        shared = ((subject_n | a.joined) & (subject_e | b.joined)) - GENERIC_STEMS
        head = next((k for k in cn.keys if k in shared), None)  # the first shared word
        if head and modified_apart(
            _wordy(phrasing.tokens(cn.text)),
            _wordy(phrasing.tokens(ce.text)),
            frozenset({head}),
            _NO_NAMES,
        ):
            continue  # "the lint job" / "the test job": two subjects
        if shared and len(a.keys) <= SHORT_TEXT_KEYS and len(b.keys) <= SHORT_TEXT_KEYS:
            return True
    return False
