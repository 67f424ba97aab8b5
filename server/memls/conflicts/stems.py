"""Words as the scorer compares them: normalised text, stems, and the classes of words the
lexicon defines (generic words, scope qualifiers, antonyms, update markers).

Pure: every function maps its input to a fresh value (two are memoised).
"""

from __future__ import annotations

import functools
import re
import unicodedata

from memls.conflicts import lexicon as lx

_PULL_REQUEST = re.compile(r"\bpull requests?\b")
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": " ", "\u201c": '"', "\u201d": '"'})

_EMPHASIS = re.compile(r"(?<![\w])_+|_+(?![\w])")

#: How many texts' readings each memoised reading keeps: a contradiction check's batch (128 new
#: memories, up to 15 candidates each) read once, not again for every pair it is in (a pair
#: scored in 0.05 ms instead of 0.2 at 10,000 memories; about 30 MB when full).
TEXTS = 4096


@functools.lru_cache(maxsize=TEXTS)
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


def phrases(phrases: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(p.split()) for p in phrases)


UPDATE = phrases(lx.UPDATE_MARKERS)


BE = frozenset("is are was were be been being".split())


def is_participle(word: str) -> bool:
    return word in lx.IRREGULAR_PARTICIPLES or (
        word.isalpha() and len(word) > 4 and word.endswith("ed") and not word.endswith("eed")
    )


def is_content(word: str, s: str) -> bool:
    return (
        word.isalpha()
        and word not in lx.STOPWORDS
        and s not in GENERIC_STEMS
        and word not in lx.NEGATORS
        and word not in lx.UNITS
        and word not in lx.WORD_NUMBERS
        and not any(word == p[0] for p in UPDATE)
    )
