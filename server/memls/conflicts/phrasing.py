"""How a text is worded, read whole rather than clause by clause: its content stems, its
tokens in order, the named things it mentions, whether it hedges or adds, and the systems it
is about. Pure and memoised, like `text.analyze`.

- `entities(text)`: the named things it mentions, as stems: words written as names (a capital
  inside a sentence, "GitHub", "EKS"), identifiers and tokens with digits or symbols
  ("node.js", "s3", "#deploys", "APP_DEBUG", "blue/green"), and code spans. A slot filler that
  is a named thing is an alternative; a verb or an adjective is not.
- `topics(text)` / `apart(new, existing)`: the systems a statement is about, and whether two
  statements are about two different systems.
"""

from __future__ import annotations

import functools
import re

from memls.conflicts import lexicon as lx
from memls.conflicts.stems import GENERIC_STEMS, TEXTS, normalize, stem

_UPPER = re.compile(r"[A-Z]")


_DIGIT = re.compile(r"[0-9]")


_SYMBOL = re.compile(r"[./+#_$@]")


_NAME_TOKEN = re.compile(r"[#@$]?[A-Za-z0-9][\w./+#-]*")


CODE_SPAN = re.compile(r"`([^`]+)`")


SENTENCE_BREAK = re.compile(r"(?<=[.;!?])\s+|\n+")


_WORD = re.compile(r"[#@$]?[^\W_][\w@./+#%'-]*")


#: Words that never count as a filler or a subject on their own.
_FRAME_WORDS = frozenset(
    stem(w)
    for w in (
        "move moved moving migrate migrated migrating switch switched switching change changed "
        "replace replaced replaces replacing rename renamed renaming rewrite rewrote rewritten "
        "rebuild rebuilt reimplement reimplemented port ported call called now instead rather "
        "longer stop stopped remove removed removing removal drop dropped dropping decommission "
        "decommissioned decommissioning retire retired retiring deprecate deprecated delete deleted "  # noqa: E501
        "prefer preferred favour favor favoured favored choose chose chosen prioritise prioritize "
        "prioritised prioritized pick over adopt adopted forward will shall start starting "
        "support concept all any entire whole existing old new current previous legacy".split()
        + list(lx.TIME_DEICTICS)
        + list(lx.TIME_PERIODS)
        + list(lx.TIME_ADVERBS)
    )
)


def content_stems(phrase: str, keep_generic: bool = False) -> frozenset[str]:
    out = set()
    for w in _WORD.findall(phrase):
        w = _POSSESSIVE.sub("", w).strip(".,:;'\"()").rstrip("-")  # "provider's": provider
        if not w or w in lx.STOPWORDS or w in lx.NEGATORS:
            continue
        s = stem(w)
        if (s in GENERIC_STEMS and not keep_generic) or (
            s in _FRAME_WORDS
            and not w.endswith("tions")  # "migrations" is a thing
            and w not in lx.FREQUENCY_ADVERBS  # "nightly" is no "last night"
        ):
            continue
        out.add(s)
    return frozenset(out)


_POSSESSIVE = re.compile(r"'s$")


_LINK_TARGET = re.compile(r"\]\([^)]*\)|<?\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)


def unlinked(text: str) -> str:
    """`text` without link targets and URLs: a link is a reference, not a claim's word."""
    return _LINK_TARGET.sub("] ", text)


@functools.lru_cache(maxsize=TEXTS)
def entities(text: str) -> frozenset[str]:
    """Stems of the named things in `text` (see the module docstring)."""
    text = unlinked(text)
    out: set[str] = set()
    for span in CODE_SPAN.findall(text):
        out.update(content_stems(normalize(span)))
    for sentence in SENTENCE_BREAK.split(CODE_SPAN.sub(" ", text)):
        tokens = _NAME_TOKEN.findall(sentence)
        for i, tok in enumerate(tokens):
            core = tok.rstrip(".:-,")
            if not core or "://" in core:
                continue
            lower = core.casefold()
            if lower in lx.STOPWORDS or lower in lx.NEGATORS:
                continue
            named = (
                _UPPER.search(core, 1) is not None  # GitHub, EKS, OpenSearch
                or (i > 0 and core[0].isupper())  # a capital inside a sentence
                or _DIGIT.search(core) is not None
                and not core.isdigit()  # s3, k8s
                or _SYMBOL.search(core.strip(".")) is not None  # node.js, #deploys, a/b
            )
            if named:
                s = stem(normalize(core))
                if s not in GENERIC_STEMS and s not in _FRAME_WORDS:
                    out.add(s)
    return frozenset(out)


@functools.lru_cache(maxsize=TEXTS)
def words(text: str) -> frozenset[str]:
    """Every content stem of `text`, values included as words ("a month" -> month)."""
    return content_stems(normalize(CODE_SPAN.sub(lambda m: m.group(1), unlinked(text))))


def identifier(word: str) -> bool:
    """A named thing written as an identifier ("v1", "#deploys", "node.js"): the most
    specific kind of name."""
    return any(not c.isalpha() for c in word)


_HEDGE = re.compile(
    r"\b(?:consider(?:ed|ing)?|could|would|might|may|option|options|alternatives?|"
    r"alternatively|evaluat(?:e|ed|ing)|pros|cons|proposal|propose[sd]?|rejected|"
    r"trade-?offs?|maybe|perhaps|possibly|suggest(?:ed|s)?)\b|\?"
)


_ADDITIVE = re.compile(r"\b(?:also|too|as well|additionally|in addition|besides)\b")


@functools.lru_cache(maxsize=TEXTS)
def tokens(text: str) -> tuple[str, ...]:
    """The stems of `text` in order, stopwords kept as "" (a modifier needs a neighbour)."""
    plain = CODE_SPAN.sub(lambda m: m.group(1), text)
    shouted = {w.casefold() for w in _SHOUT.findall(plain)}  # "US", "IT": names, not pronouns
    out = []
    for w in _WORD.findall(normalize(plain)):
        w = _POSSESSIVE.sub("", w).strip(".,:;'\"()").rstrip("-")
        out.append("" if not w or (w in lx.STOPWORDS and w not in shouted) else stem(w))
    return tuple(out)


_SHOUT = re.compile(r"\b[A-Z]{2,}\b")


@functools.lru_cache(maxsize=TEXTS)
def hedged(text: str) -> bool:
    """Does the text weigh an option instead of stating a choice ("we could use X", "Option
    2: ...", "should we ...?")?"""
    return bool(_HEDGE.search(normalize(text)))


@functools.lru_cache(maxsize=TEXTS)
def additive(text: str) -> bool:
    return bool(_ADDITIVE.search(normalize(text)))


_SYSTEM = re.compile(r"^[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)+$")  # checkout-service, billing_api


_TOPIC_LEAD = frozenset({"of", "for"})  # "Backups of catalog-sync ...", "CI for search-api ..."


@functools.lru_cache(maxsize=TEXTS)
def topics(text: str) -> frozenset[str]:
    """The systems a statement is about: a system identifier (lower-case words joined by - _ or
    .) that opens a sentence or follows "of"/"for" among its first four words. "checkout-service
    exchanges messages in Protobuf": checkout-service. Not a filler after a verb ("we deploy
    with docker-compose" has no topic)."""
    out: set[str] = set()
    for sentence in SENTENCE_BREAK.split(CODE_SPAN.sub(" ", unlinked(text))):
        toks = [t.rstrip(".:-,") for t in _NAME_TOKEN.findall(sentence)[:4]]
        for i, tok in enumerate(toks):
            if _SYSTEM.match(tok) and (i == 0 or toks[i - 1].casefold() in _TOPIC_LEAD):
                out.add(tok)
    return frozenset(out)


def apart(new: str, existing: str) -> bool:
    """Two statements about two different systems, neither naming the other's: "checkout-service
    uses Protobuf" / "inventory-store uses Protobuf", "Backups of catalog-sync run on Mondays" /
    "Backups of reporting-pipeline run on Wednesdays". What one says of its system cannot
    contradict what the other says of another."""
    mine, theirs = topics(new), topics(existing)
    if not mine or not theirs or mine & theirs:
        return False
    low_new, low_existing = new.casefold(), existing.casefold()
    return not any(t.casefold() in low_existing for t in mine) and not any(
        t.casefold() in low_new for t in theirs
    )
