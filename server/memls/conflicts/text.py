"""Pure text analysis for the contradiction scorer: clauses, tokens, stems, values.

Nothing here keeps state between calls; every function maps its input to a fresh value.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import NamedTuple

from memls.conflicts import lexicon as lx

_CLAUSE_BREAK = re.compile(
    r"[.;!?]+(?=\s|$)"  # sentence ends (not the dot in 3.12 or a.yaml)
    r"|[()]"  # parentheticals
    r"|\s(?:and|but|while|whereas|although|so)\s"
    r"|,\s*(?=(?:not|but|so|while|which|who|though)\b)"  # ", not npm" / ", who took over"
)
_TOKEN = re.compile(r"[:@]?[^\W_][\w@./:+#%'-]*")
_POSSESSIVE = re.compile(r"'s$")
_PULL_REQUEST = re.compile(r"\bpull requests?\b")
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": " ", "\u201c": '"', "\u201d": '"'})

_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})$")
_HOST_PORT = re.compile(r"^(?:[a-z][\w.-]*)?:(\d{2,5})$")
_DOTTED = re.compile(r"^v?(\d{1,6}(?:\.\d{1,6})+)/?$")
_V_TAG = re.compile(r"^v(\d{1,6})/?$")
_NUMBER = re.compile(r"^\d{1,12}(?:\.\d{1,6})?$")
_GLUED = re.compile(r"^(\d{1,12}(?:\.\d{1,6})?)([a-z%]+)$")
_HYPHENED = re.compile(
    r"^(\d{1,12}|one|two|three|four|five|six|seven|eight|nine|ten|twelve)-([a-z]+)$"
)


_EMPHASIS = re.compile(r"(?<![\w])_+|_+(?![\w])")


@functools.lru_cache(maxsize=4096)
def normalize(text: str) -> str:
    """NFKC, quotes folded, case folded, emphasis out. Memoised: every rule of a pair reads
    the same two texts again (15% of the scorer's time before)."""
    value = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    value = _EMPHASIS.sub(" ", value)  # "_front_" is emphasis; "APP_DEBUG" keeps its "_"
    return _PULL_REQUEST.sub(lambda m: m.group(0).replace(" ", "-"), value)


@functools.lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A small suffix stripper: enough to match 'stored'/'store', 'deploys'/'deployment'."""
    word = lx.ABBREVIATIONS.get(word, word)
    head, dash, tail = word.rpartition("-")
    if dash and head and tail.isalpha():
        return f"{head}-{_stem_word(tail)}"  # "pull-requests" -> "pull-request"
    return _stem_word(word)


def _stem_word(word: str) -> str:
    if not word.isalpha() or len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ied") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouslz":
                word = word[:-1]
            break
    if word.endswith("ically") and len(word) > 8:
        word = word[:-4]
    elif word.endswith("ly") and len(word) > 5:
        word = word[:-2]
    if word.endswith("ment") and len(word) > 7:
        word = word[:-4]
    elif word.endswith("tion") and len(word) > 7:
        word = word[:-3]  # "rotation" / "rotate", "migration" / "migrate"
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


GENERIC_STEMS = frozenset(stem(w) for w in lx.GENERIC)
QUALIFIER_STEMS = tuple(frozenset(stem(w) for w in cls) for cls in lx.QUALIFIER_CLASSES)
ANTONYMS = tuple((stem(a), stem(b)) for a, b in lx.ANTONYM_PAIRS)
ANTONYM_STEMS = frozenset(w for pair in ANTONYMS for w in pair)
_PORT_CUE_STEMS = frozenset(stem(w) for w in lx.PORT_CUES)


def _phrases(phrases: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(p.split()) for p in phrases)


_UPDATE = _phrases(lx.UPDATE_MARKERS)
_TIME_PHRASES = tuple(
    (when, what) for when in lx.TIME_DEICTICS for what in lx.TIME_PERIODS
) + tuple((w,) for w in lx.TIME_ADVERBS)
_PAST = _phrases(lx.PAST_MARKERS)
_ADDITIVE = _phrases(lx.ADDITIVE_MARKERS)
_BE = frozenset("is are was were be been being".split())
_SCOPE_PREPOSITIONS = frozenset({"in", "for", "on", "under", "within"})


class Value(NamedTuple):
    kind: str  # version | port | size | duration | clock | percent | count | year
    magnitude: float | tuple[int, ...]
    anchor: str  # versions: the product it belongs to ("python")
    units: frozenset[str]  # counts: the counted noun ("replica")
    surface: str


class Clause(NamedTuple):
    keys: tuple[str, ...]  # subject stems in order, deduplicated: no generic words, values,
    #                        markers, negators or stopwords
    surface: dict[str, str]  # stem -> a surface word, for trigger reporting
    content: frozenset[str]  # all content stems, values as <kind> placeholders (similarity)
    values: tuple[Value, ...]
    negators: tuple[str, ...]  # surface negators, empty when the clause is affirmative
    switches: frozenset[str]  # antonym stems present ("on"/"off" only as predicates)
    scoped: frozenset[str]  # antonym stems inside a scope phrase ("in the light theme")
    predicates: frozenset[str]  # participles ("compiled", "built"): predicate, not subject
    markers: tuple[str, ...]  # update markers
    past: bool
    additive: bool
    text: str


class Analysis(NamedTuple):
    clauses: tuple[Clause, ...]
    markers: tuple[str, ...]
    values: tuple[Value, ...]
    content: frozenset[str]
    keys: frozenset[str]
    qualifiers: tuple[frozenset[str], ...]
    joined: frozenset[str] = frozenset()  # verb + particle written as one word ("time out"
    #                                       -> timeout, "backed up" -> backup)


@functools.lru_cache(maxsize=1024)
def analyze(text: str) -> Analysis:
    """Pure; memoised, since a new memory is compared with up to ten candidates (an entry
    holds ~10 KB of tuples: 4,096 of them were 40 MB of the daemon's RSS)."""
    clauses = tuple(
        c for c in (_clause(part) for part in _CLAUSE_BREAK.split(normalize(text))) if c.content
    )
    all_keys = frozenset(k for c in clauses for k in c.keys)
    return Analysis(
        clauses=clauses,
        markers=tuple(m for c in clauses for m in c.markers),
        values=tuple(v for c in clauses for v in c.values),
        content=frozenset(w for c in clauses for w in c.content),
        keys=all_keys,
        qualifiers=tuple(all_keys & cls for cls in QUALIFIER_STEMS),
        joined=_joined(normalize(text)),
    )


_PARTICLES = frozenset("out up off down".split())  # "on", "in": prepositions ("runs on")


def _joined(text: str) -> frozenset[str]:
    """A verb and its particle as one word: "times out" / "timeout", "backed up" / "backup"."""
    words = [w.strip(".,:;'\"()") for w in text.split()]
    return frozenset(
        stem(joined)
        for w, nxt in zip(words, words[1:])
        if nxt in _PARTICLES and w.isalpha() and w not in lx.STOPWORDS
        for joined in (w + nxt, stem(w) + nxt, stem(w) + "e" + nxt)
    )


@functools.lru_cache(maxsize=64)
def _by_first_word(
    phrases: tuple[tuple[str, ...], ...],
) -> dict[str, tuple[tuple[str, ...], ...]]:
    index: dict[str, list[tuple[str, ...]]] = {}
    for phrase in phrases:
        index.setdefault(phrase[0], []).append(phrase)
    return {k: tuple(v) for k, v in index.items()}


def _find_phrases(
    words: list[str], phrases: tuple[tuple[str, ...], ...]
) -> tuple[list[str], set[int]]:
    found: list[str] = []
    used: set[int] = set()
    starting = _by_first_word(phrases)
    for i in range(len(words)):
        for phrase in starting.get(words[i], ()):
            n = len(phrase)
            if tuple(words[i : i + n]) != phrase or used.intersection(range(i, i + n)):
                continue
            if phrase == ("used", "to") and i > 0 and words[i - 1] in _BE:
                continue  # "is used to cache" states a purpose, not a past habit
            found.append(" ".join(phrase))
            used.update(range(i, i + n))
    return found, used


def _clause(part: str) -> Clause:
    words = [_POSSESSIVE.sub("", w).rstrip(".:'-,") for w in _TOKEN.findall(part)]
    words = [w for w in words if w]
    markers, marker_at = _find_phrases(words, _UPDATE)
    _, time_at = _find_phrases(words, _TIME_PHRASES)
    past, _ = _find_phrases(words, _PAST)
    additive, _ = _find_phrases(words, _ADDITIVE)
    stems = [stem(w) for w in words]
    values, value_at = _values(words, stems)

    negators = [w for w in words if w in lx.NEGATORS or w.endswith("n't")]
    if negators and lx.WEAK_NEGATOR in words:
        negators = [] if len(negators) % 2 else negators + [lx.WEAK_NEGATOR]
    negated = len(negators) % 2 == 1

    switches: set[str] = set()
    scoped: set[str] = set()
    predicates: set[str] = set()
    keys: list[str] = []
    content: set[str] = set()
    surface: dict[str, str] = {}
    for i, (w, s) in enumerate(zip(words, stems)):
        if w in ("on", "off"):
            if _is_switch(words, i):
                switches.add(w)
                surface.setdefault(w, w)
            continue
        if (
            i in marker_at
            or i in value_at
            or i in time_at
            or w in lx.STOPWORDS
            or w in lx.NEGATORS
            or w.endswith("n't")
            or w == lx.WEAK_NEGATOR
        ):
            continue
        surface.setdefault(s, w)
        content.add(s)
        if s in ANTONYM_STEMS:
            switches.add(s)
            if _SCOPE_PREPOSITIONS.intersection(words[max(0, i - 2) : i]):
                scoped.add(s)
        if s not in GENERIC_STEMS and s not in keys:
            keys.append(s)
            if is_participle(w):
                predicates.add(s)
    content.update(f"<{v.kind}>" for v in values if v.kind != "year")
    return Clause(
        keys=tuple(keys),
        surface=surface,
        content=frozenset(content),
        values=tuple(values),
        negators=tuple(negators) if negated else (),
        switches=frozenset(switches),
        scoped=frozenset(scoped),
        predicates=frozenset(predicates),
        markers=tuple(markers),
        past=bool(past),
        additive=bool(additive),
        text=part.strip(),
    )


def is_participle(word: str) -> bool:
    return word in lx.IRREGULAR_PARTICIPLES or (
        word.isalpha() and len(word) > 4 and word.endswith("ed") and not word.endswith("eed")
    )


def _is_switch(words: list[str], i: int) -> bool:
    """'is on', 'turned off', 'turn off the rule': a state, not a preposition ('runs on X')."""
    if i == 0 or words[i - 1] not in lx.SWITCH_VERBS:
        return False
    if words[i] == "off":
        return True
    nxt = words[i + 1] if i + 1 < len(words) else ""
    return nxt == "" or (nxt in lx.STOPWORDS and nxt not in lx.ARTICLES)


def _is_content(word: str, s: str) -> bool:
    return (
        word.isalpha()
        and word not in lx.STOPWORDS
        and s not in GENERIC_STEMS
        and word not in lx.NEGATORS
        and word not in lx.UNITS
        and word not in lx.WORD_NUMBERS
        and not any(word == p[0] for p in _UPDATE)
    )


def _values(words: list[str], stems: list[str]) -> tuple[list[Value], set[int]]:
    """Numbers with what they measure. Returns the values and the token positions they use."""
    out, said = _frequencies(words)
    used: set[int] = set()  # frequency words stay subject words ("rebuilt every night")
    port_cue = any(s in _PORT_CUE_STEMS for s in stems)
    n = len(words)
    for i, w in enumerate(words):
        if i in used or i in said:
            continue
        nxt = words[i + 1] if i + 1 < n else ""
        number: float | None = None
        unit = ""
        if m := _CLOCK.match(w):
            hours, minutes = int(m.group(1)), int(m.group(2))
            out.append(Value("clock", float(hours * 60 + minutes), "", frozenset(), w))
            used.add(i)
            continue
        if m := _HOST_PORT.match(w):
            out.append(Value("port", float(m.group(1)), "", frozenset(), w))
            used.add(i)
            continue
        if m := _GLUED.match(w):
            number, unit = float(m.group(1)), m.group(2)
            if unit not in lx.UNITS:
                continue
        elif m := _HYPHENED.match(w):
            amount, noun = m.group(1), m.group(2)
            count = float(lx.WORD_NUMBERS.get(amount, 0) or amount)
            measure = lx.UNITS.get(noun) or lx.UNITS.get(noun + "s")
            if measure is not None and measure[0] in ("duration", "size"):  # "two-week sprints"
                out.append(Value(measure[0], count * measure[1], "", frozenset(), w))
            else:
                out.append(Value("count", count, "", frozenset({stem(noun)}), w))
            used.add(i)
            continue
        elif _NUMBER.match(w) and nxt in lx.UNITS:
            number, unit = float(w), nxt
        elif (
            _NUMBER.match(w)
            and nxt in ("to", "or")
            and i + 3 < n
            and _NUMBER.match(words[i + 2])
            and words[i + 3] in lx.UNITS
        ):  # "from 30 to 60 seconds": the unit said once for both
            kind, factor = lx.UNITS[words[i + 3]]
            if kind in ("duration", "size", "percent"):
                out.append(Value(kind, float(w) * factor, "", frozenset(), w))
                used.add(i)
                continue
        elif w in lx.WORD_NUMBERS and nxt in lx.UNITS and lx.UNITS[nxt][0] in ("duration", "size"):
            if w in ("a", "an", "single") and nxt.endswith("s"):
                continue  # "a s" / "an hours": not a quantity
            number, unit = float(lx.WORD_NUMBERS[w]), nxt
            if w in ("a", "an"):
                number = _fraction(words, i)
        if number is not None:
            kind, factor = lx.UNITS[unit]
            after = words[i + 2] if unit == nxt and i + 2 < n else nxt if unit != nxt else ""
            if kind == "duration" and after in lx.OFFSET_WORDS:
                kind = "offset"  # "1 minute before they expire" is not a lifetime
            if kind == "clock":
                magnitude = ((number % 12) + factor) * 60
            else:
                magnitude = number * factor
            surface = w if unit in w else f"{w} {unit}"
            out.append(Value(kind, magnitude, "", frozenset(), surface))
            used.update((i, i + 1) if unit == nxt else (i,))
            continue
        if m := _DOTTED.match(w) or _V_TAG.match(w):
            anchor = _anchor(words, stems, i)
            if anchor is None:
                continue  # "the v2 API": a name for another thing, kept as a subject word
            parts = tuple(int(p) for p in m.group(1).split("."))
            out.append(Value("version", parts, anchor, frozenset(), w))
            used.add(i)
            continue
        if _NUMBER.match(w) and "." not in w:
            out.append(_bare(words, stems, i, int(w), port_cue))
            used.add(i)
        elif w in lx.WORD_NUMBERS and w not in ("a", "an", "single") and nxt:
            units = _count_units(words, stems, i)
            if units:
                out.append(Value("count", float(lx.WORD_NUMBERS[w]), "", units, w))
                used.add(i)
    return out, used


def _bare(words: list[str], stems: list[str], i: int, n: int, port_cue: bool) -> Value:
    w = words[i]
    prev = words[i - 1] if i > 0 else ""
    is_year = 1900 <= n <= 2100
    if not is_year and _DOTTED_NAME.match(prev):
        return Value("version", (n,), stems[i - 1], frozenset(), w)  # "node.js 18 runtime"
    if prev == "to" and i > 1 and words[i - 2] in _BUMPS:
        owner = _owner(words, stems, i - 2)  # "Postgres was upgraded to 16": a version
        if owner:
            return Value("version", (n,), owner, frozenset(), w)
    if prev in ("port", "ports") or (
        not is_year and 80 <= n <= 65535 and (port_cue or (prev in ("on", "at") and n >= 1024))
    ):
        return Value("port", float(n), "", frozenset(), w)
    if is_year and prev in lx.YEAR_PREPOSITIONS:
        return Value("year", float(n), "", frozenset(), w)
    if "version" in words[max(0, i - 3) : i] or prev == "v":
        return Value("version", (n,), _anchor(words, stems, i) or "", frozenset(), w)
    units = _count_units(words, stems, i)
    if units:
        k = i + 1 + len(units)
        per = _per(words, k)
        if per:  # "100 requests per minute"; "... per token": a rate of each token
            each = words[k + 3] if k + 3 < len(words) and words[k + 2] == "per" else ""
            return Value("rate", n / per, "", units | ({f"/{stem(each)}"} if each else set()), w)
        return Value("count", float(n), "", units, w)
    j = i - 2 if prev == "to" else i - 1
    if (
        j >= 0
        and _is_content(words[j], stems[j])
        and not (prev == "to" and is_participle(words[j]))
    ):
        return Value("version", (n,), stems[j], frozenset(), w)  # "Node 20", "pin Node to 20"
    #                                                   ("raised to 16" is a count, not a version)
    return Value("count", float(n), "", frozenset(), w)


_DOTTED_NAME = re.compile(r"^[a-z][a-z0-9-]*\.(?:js|ts|net|io|py|rs)$")
#: Verbs that set a product's version ("upgraded to 16"), unlike "raised to 16" (a count).
_BUMPS = frozenset("upgraded bumped pinned downgraded updated upgrade bump pin".split())
_EVERY = frozenset({"<every>"})
_STEP_WORDS = frozenset({"every", "each"})


def _owner(words: list[str], stems: list[str], verb: int) -> str:
    """The product before a version verb ("Postgres [was] upgraded to 16" -> postgres)."""
    for j in range(verb - 1, max(-1, verb - 4), -1):
        if words[j] in _BE or words[j] in ("has", "have", "been", "got", "we"):
            continue
        return stems[j] if _is_content(words[j], stems[j]) else ""
    return ""


def _fraction(words: list[str], i: int) -> float:
    """ "half an hour" -> 0.5, "a quarter of an hour" -> 0.25, "an hour" -> 1."""
    if i > 0 and words[i - 1] in lx.FRACTIONS:
        return lx.FRACTIONS[words[i - 1]]
    if i > 1 and words[i - 1] == "of" and words[i - 2] in lx.FRACTIONS:
        return lx.FRACTIONS[words[i - 2]]
    return 1.0


def _weekday(word: str) -> int | None:
    base = word[:-1] if word.endswith("s") else word
    return lx.WEEKDAYS.index(base) if base in lx.WEEKDAYS else None


def _frequencies(words: list[str]) -> tuple[list[Value], set[int]]:
    """How often, said in words: "weekly", "every night", "once a week", "every second week",
    "twice a day" (periodic durations, units `<every>`), and days of the week ("on Thursdays",
    kind `weekday`; "every Thursday" is also a weekly period)."""
    out: list[Value] = []
    used: set[int] = set()
    n = len(words)
    for i, w in enumerate(words):
        if i in used:
            continue
        if w in lx.FREQUENCY_ADVERBS:
            out.append(Value("duration", lx.FREQUENCY_ADVERBS[w], "", _EVERY, w))
            used.add(i)
            continue
        day = _weekday(w)
        if day is not None:
            out.append(Value("weekday", float(day), "", frozenset(), w))
            used.add(i)
            before = words[i - 1] if i > 0 else ""
            if before in _STEP_WORDS or (w.endswith("s") and before == "on"):
                out.append(Value("duration", 7 * 86400.0, "", _EVERY, f"{before} {w}"))
            continue
        times, j = 1, i + 1
        if w in lx.TIMES_PER and i + 1 < n and words[i + 1] in ("a", "an", "per", "every", "each"):
            times, j = lx.TIMES_PER[w], i + 2
        elif w not in _STEP_WORDS:
            continue
        step = 1
        if j < n and words[j] in lx.ORDINAL_STEPS:
            step, j = lx.ORDINAL_STEPS[words[j]], j + 1
        noun = words[j] if j < n else ""
        if times == 1 and (day := _weekday(noun)) is not None:  # "every other Friday"
            out.append(Value("weekday", float(day), "", frozenset(), noun))
            out.append(
                Value("duration", 7 * 86400.0 * step, "", _EVERY, " ".join(words[i : j + 1]))
            )
            used.update(range(i, j + 1))
            continue
        noun = noun[:-1] if noun.endswith("s") and noun[:-1] in lx.PERIOD_NOUNS else noun
        if noun in lx.PERIOD_NOUNS:
            out.append(
                Value(
                    "duration",
                    lx.PERIOD_NOUNS[noun] * step / times,
                    "",
                    _EVERY,
                    " ".join(words[i : j + 1]),
                )
            )
            used.update(range(i, j + 1))
    return out, used


def _per(words: list[str], k: int) -> float:
    """Seconds of the period after a counted noun ("per minute", "an hour", "each day"), or 0."""
    if k + 1 >= len(words) or words[k] not in ("per", "a", "an", "each", "every", "/"):
        return 0.0
    unit = lx.UNITS.get(words[k + 1])
    return unit[1] if unit is not None and unit[0] == "duration" else 0.0


def _count_units(words: list[str], stems: list[str], i: int) -> frozenset[str]:
    """The counted noun: up to two content words right after the number ('5 API replicas')."""
    units: list[str] = []
    for j in range(i + 1, min(i + 3, len(words))):
        if words[j] in lx.VERSION_SUFFIXES or not _is_content(words[j], stems[j]):
            break
        units.append(stems[j])
    return frozenset(units)


def _anchor(words: list[str], stems: list[str], i: int) -> str | None:
    """The product a version belongs to: the nearest content word before it ("Python 3.12",
    "iOS version is 16"). None when the version comes first and names a thing ("the v2 API")."""
    if (
        i > 0
        and words[i - 1].isalpha()
        and words[i - 1] not in lx.STOPWORDS
        and words[i - 1] not in ("version", "v")
    ):
        return stems[i - 1]  # right before the number: the product, even "Go 1.22"
    for j in range(i - 1, max(-1, i - 5), -1):
        if words[j] in ("version", "v", "to", "is", "are", "on", "at"):
            continue
        if _is_content(words[j], stems[j]):
            return stems[j]
    if i + 1 < len(words) and _is_content(words[i + 1], stems[i + 1]):
        return None
    return ""
