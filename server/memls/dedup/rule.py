"""The near-duplicate rule, chosen on a labelled tuning set of 318 pairs (restated / related
but different / contradicting) and scored once on 231 held-out pairs: precision 1.000, recall
0.299 without the pair model, 0.455 with it (benchmarks/near_duplicates.py, outputs in
benchmarks/results/near-duplicates.txt and near-duplicates-pair.txt).
A new memory restates an existing one when:

- both are of the same type (the engine only compares those);
- the bge-small cosine of the two is at least NEAR_COSINE and the ms-marco cross-encoder
  probability (mean of both directions) at least NEAR_CROSS: the same subject, closely; or,
  with the pair model's reading, each side entails the other (`Meaning.restates`) and the
  cosine is at least MEANING_COSINE: the same claim in other words;
- they share enough content words (LEXICAL_FLOOR: the cheap test that spares a model call);
- neither is the other with a word swapped (`substituted`: "owner records item 17" / "one
  records item 17" read alike to the models);
- the pure contradiction scorer says "no contradiction";
- neither names a thing the other does not: no name, code token or number on one side only
  ("kebab-case" / "snake_case", "40 lines" / "400 lines", "Sentry" / "Crashlytics").

A different memory must never be swallowed: every threshold errs towards storing.
"""

from __future__ import annotations

import difflib
import re

from memls.conflicts.frames import entities, words
from memls.conflicts.lexicon import STOPWORDS
from memls.conflicts.meaning import Meaning
from memls.conflicts.scorer import lexical_similarity, score_pair
from memls.conflicts.stems import normalize, stem
from memls.conflicts.text import analyze

NEAR_COSINE = 0.94
NEAR_CROSS = 0.99
#: The cosine a restatement the pair model reads must still reach (benchmarks/near_duplicates.py)
MEANING_COSINE = 0.91
#: Content-word overlap (the scorer's lexical similarity) below which no model is asked: every
#: restatement the rule merged in the tuning set shares at least 0.375 of its content words.
#: The store path embeds the new text only when a BM25 candidate of the same type is this
#: close, so most stores add no model call.
LEXICAL_FLOOR = 0.3

_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


def lexically_close(existing: str, new: str) -> bool:
    """Enough content words in common for a restatement to be possible."""
    return lexical_similarity(analyze(existing), analyze(new)) >= LEXICAL_FLOOR


_TOKEN = re.compile(r"[\w][\w.+#/-]*")


def substituted(existing: str, new: str) -> bool:
    """The same sentence with a word swapped: the two read alike word for word (nothing
    added or left out) except where one or two content words stand in for others ("owner
    records item 17" / "one records item 17"). A restatement says the claim in other words;
    a swap names another thing."""
    a = [stem(normalize(t)) for t in _TOKEN.findall(existing)]
    b = [stem(normalize(t)) for t in _TOKEN.findall(new)]
    swapped = False
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        left = {w for w in a[i1:i2] if w not in STOPWORDS}
        right = {w for w in b[j1:j2] if w not in STOPWORDS}
        if op != "replace" or i2 - i1 > 2 or j2 - j1 > 2:
            if left or right:
                return False  # words added, left out or reworded: not a plain swap
            continue
        swapped = swapped or bool(left and right and left != right)
    return swapped


def differing_names(existing: str, new: str) -> bool:
    """A name, code token or number in one text that the other lacks (a name is looked for
    among all the other's words: "Airflow" opening a sentence is not marked as a name)."""
    old_words, new_words = words(existing), words(new)
    if entities(existing) - new_words or entities(new) - old_words:
        return True
    return set(_NUMBER.findall(existing)) != set(_NUMBER.findall(new))


def is_restatement(
    existing: str, new: str, *, cosine: float, cross: float, meaning: Meaning | None = None
) -> bool:
    """The rule above, for two memories of the same type."""
    close = cosine >= NEAR_COSINE and cross >= NEAR_CROSS
    read = meaning is not None and meaning.restates and cosine >= MEANING_COSINE
    if not (close or read):
        return False
    if not lexically_close(existing, new) or differing_names(existing, new):
        return False
    if substituted(existing, new):
        return False
    return not score_pair(new, existing, similarity=cosine, meaning=meaning).contradiction
