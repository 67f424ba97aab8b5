"""Values in a clause: numbers with what they measure (versions, ports, sizes, durations,
clock times, percentages, rates, counts, years) and frequencies said in words ("weekly",
"every second Friday", "twice a day").

Pure: `read_values` maps a clause's words to the values they state.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from memls.conflicts import lexicon as lx
from memls.conflicts.stems import BE, is_content, is_participle, stem

_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})$")


_HOST_PORT = re.compile(r"^(?:[a-z][\w.-]*)?:(\d{2,5})$")


_DOTTED = re.compile(r"^v?(\d{1,6}(?:\.\d{1,6})+)(\+?)/?$")


_V_TAG = re.compile(r"^v(\d{1,6})(\+?)/?$")  # "v10+": version 10 or later (units {"+"})


_NUMBER = re.compile(r"^\d{1,12}(?:\.\d{1,6})?$")


_GLUED = re.compile(r"^(\d{1,12}(?:\.\d{1,6})?)([a-z%]+)$")


_HYPHENED = re.compile(
    r"^(\d{1,12}|one|two|three|four|five|six|seven|eight|nine|ten|twelve)-([a-z]+)$"
)


_PORT_CUE_STEMS = frozenset(stem(w) for w in lx.PORT_CUES)


class Value(NamedTuple):
    kind: str  # version | port | size | duration | clock | percent | count | year
    magnitude: float | tuple[int, ...]
    anchor: str  # versions: the product it belongs to ("python")
    units: frozenset[str]  # counts: the counted noun ("replica")
    surface: str


def read_values(words: list[str], stems: list[str]) -> tuple[list[Value], set[int]]:
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
            out.append(Value("version", parts, anchor, frozenset(m.group(2)), w))
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
    if j >= 0 and is_content(words[j], stems[j]) and not (prev == "to" and is_participle(words[j])):
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
        if words[j] in BE or words[j] in ("has", "have", "been", "got", "we"):
            continue
        return stems[j] if is_content(words[j], stems[j]) else ""
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
        if words[j] in lx.VERSION_SUFFIXES or not is_content(words[j], stems[j]):
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
        if is_content(words[j], stems[j]):
            return stems[j]
    if i + 1 < len(words) and is_content(words[i + 1], stems[i + 1]):
        return None
    return ""
