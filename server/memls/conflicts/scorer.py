"""Pure contradiction scorer: does a NEW memory contradict an EXISTING one?

`score_pair(new, existing)` looks at one pair and nothing else: no I/O, no clock, no model,
no state kept between calls. It returns a `Verdict` that names every signal that fired and
the words that triggered it. Acting on a verdict (edges, supersession) is the resolver's job.

How a verdict is reached
1. Both texts are split into clauses; each clause yields subject words, values (numbers with
   what they measure), negators, antonym words and temporal markers (`text.py`,
   `quantities.py`); whole texts are read for named things and frames (`phrasing.py`,
   `frames.py`).
2. Signals compare clause pairs that are about the same subject (`subjects.py`): they share a
   subject word and at most one side has subject words the other lacks ("access tokens" vs
   "refresh tokens" are two subjects; "backups" vs "database backups" are one). Scope
   qualifiers of the same class that differ ("staging" vs "production") mean two subjects and
   silence every signal. One module a signal: `negation.py`, `antonyms.py`, `values.py`,
   `choices.py`, `change_frames.py`.
3. Signal weights combine as a noisy-or into a strength in [0, 1].
4. With the pair model's reading (`meaning.py`, computed by the caller for pairs past the
   gate): when the model is sure the two sides agree or are about two things, the signals
   that read words, not meaning (MEANING_VETOES: change words, changed numbers) do not count
   (none counts when it reads each side as entailing the other);
   when it is sure they contradict, a `meaning` signal fires on its own.
5. The similarity gate (`similarity.py`) scales that strength. Similarity is ABSOLUTE, never
   normalised across candidates: below the minimum of its kind nothing fires; from the minimum
   to the "full" value the gate rises from GATE_FLOOR to 1. A single strong signal on a
   same-subject pair passes the threshold at any similarity above the minimum.
"""

from __future__ import annotations

import math
import re
from types import MappingProxyType
from typing import cast

from memls.conflicts import change_frames, phrasing
from memls.conflicts.antonyms import opposite_pairs
from memls.conflicts.choices import (
    choice_change,
    decided_swap,
    named_swap,
    preference_swap,
    preferred_against,
    told_before,
    typed_swap,
)
from memls.conflicts.meaning import Meaning
from memls.conflicts.negation import forbidden, is_negative, negation
from memls.conflicts.similarity import (
    COSINE_SIMILARITY_FULL,
    COSINE_SIMILARITY_MIN,
    GATE_FLOOR,
    LEXICAL_SIMILARITY_FULL,
    LEXICAL_SIMILARITY_MIN,
    PROBABILITY_SIMILARITY_FULL,
    PROBABILITY_SIMILARITY_MIN,
    checked_similarity,
    gate,
    lexical_similarity,
)
from memls.conflicts.subjects import same_subject, subject_of
from memls.conflicts.text import Analysis, Clause, analyze
from memls.conflicts.values import value_change
from memls.protocol.conflicts import (
    Signal,
    SimilarityKind,
    SimilaritySource,
    Verdict,
)

__all__ = [
    "CONTRADICTION_THRESHOLD",
    "COSINE_SIMILARITY_FULL",
    "COSINE_SIMILARITY_MIN",
    "GATE_FLOOR",
    "LEXICAL_SIMILARITY_FULL",
    "MEANING_VETOES",
    "LEXICAL_SIMILARITY_MIN",
    "PROBABILITY_SIMILARITY_FULL",
    "PROBABILITY_SIMILARITY_MIN",
    "SIGNAL_WEIGHTS",
    "WEAK_OVERRIDE_WEIGHT",
    "Meaning",
    "Signal",
    "Verdict",
    "gate",
    "lexical_similarity",
    "score_pair",
]

# ------------------------------------------------------------------ tunables (all absolute)

#: Verdict threshold on the gated confidence.
CONTRADICTION_THRESHOLD = 0.5


#: Weight of each signal when it fires on a same-subject clause pair. Each strong signal is
#: enough on its own: weight x GATE_FLOOR >= CONTRADICTION_THRESHOLD.
SIGNAL_WEIGHTS = MappingProxyType(
    {
        "negation": 0.85,
        "antonym": 0.85,
        "value_change": 0.85,
        "choice_change": 0.85,
        "temporal_override": 0.85,  # the new text names what it replaces and the old has it
        "meaning": 0.85,  # the pair model is sure the two contradict
    }
)

#: The signals that read words, not meaning, and do not count when the pair model is sure the
#: two sides are about two things: a change word whose two sides do not align ("On Windows,
#: run X instead of Y" / "Always run Y"), a number that names the subject ("Module 3 ..." /
#: "Module 4 ..."), a negation or a choice between two subjects that share their words. All
#: of them: on the development pairs, vetoing only change frames and values gave a lower F1
#: (training/tune_meaning.py).
MEANING_VETOES = frozenset(
    {"temporal_override", "value_change", "negation", "antonym", "choice_change"}
)


#: An update marker in the new text about the same subject, naming nothing replaced:
#: corroborates other signals, never decides alone.
WEAK_OVERRIDE_WEIGHT = 0.3


def score_pair(
    new: str,
    existing: str,
    *,
    similarity: float | None = None,
    similarity_kind: SimilarityKind = "cosine",
    common: frozenset[str] = frozenset(),
    meaning: Meaning | None = None,
) -> Verdict:
    """Score one (new, existing) pair. `similarity` is an absolute model score for this pair
    (embedding cosine in [-1, 1] or cross-encoder probability in [0, 1]); without it a
    lexical overlap is computed from the two texts. `common`: stems so frequent in the
    corpus the pair comes from (its caller counts them) that they name no one thing: a change
    frame whose replaced thing is only these aligns with nothing. `meaning`: the pair model's
    reading of the two (None: no model; the signals alone decide)."""
    a, b = analyze(new), analyze(existing)
    if similarity is None:
        sim, source = lexical_similarity(a, b), "lexical"
    else:
        sim, source = checked_similarity(similarity, similarity_kind), similarity_kind
    silent = _scope_conflict(a, b) or _code_only(new) or _code_only(existing)
    signals, related = ([], False) if silent else _signals(a, b, new, existing, common)
    opened = gate(sim, source)
    if meaning is not None and not silent and opened > 0.0:
        signals, related = _read(signals, related, meaning)
    strength = 1.0 - math.prod(1.0 - s.weight for s in signals)
    if related:
        opened = max(opened, GATE_FLOOR)  # an aligned change frame on the same subject:
        #                                   related whatever the similarity
    confidence = round(min(1.0, max(0.0, strength * opened)), 4)
    return Verdict(
        contradiction=confidence >= CONTRADICTION_THRESHOLD,
        confidence=confidence,
        signals=signals,
        similarity=round(sim, 4),
        similarity_source=cast(SimilaritySource, source),
        update_marker=bool(a.markers),
    )


def _read(signals: list[Signal], related: bool, meaning: Meaning) -> tuple[list[Signal], bool]:
    """The signals with the pair model's reading: the word-reading ones dropped when it is
    sure there is no contradiction, its own added when it is sure there is one."""
    if meaning.agrees:
        return [], False  # one claim in other words: what the words read is no change
    if meaning.apart:
        kept = [s for s in signals if s.kind not in MEANING_VETOES]
        return kept, related and len(kept) == len(signals)
    if meaning.contradicts:
        trigger = f"contradiction {meaning.contradiction:.2f}"
        return [
            *signals,
            Signal(kind="meaning", weight=SIGNAL_WEIGHTS["meaning"], triggers=[trigger]),
        ], related
    return signals, related


_CODE_LINE = re.compile(r"^\s*(?:`[^`]+`|```.*```|\|.*\|)\s*$", re.DOTALL)


def _code_only(text: str) -> bool:
    """A line that is only code (`uv run pytest -q`) or a table row (`| Postgres | 15 |`)
    shows something, it claims nothing."""
    return bool(_CODE_LINE.match(text))


def _scope_conflict(a: Analysis, b: Analysis) -> bool:
    """Both texts name a scope of the same class and share none ('staging' vs 'production')."""
    return any(qa and qb and not qa & qb for qa, qb in zip(a.qualifiers, b.qualifiers))


def _signals(
    a: Analysis,
    b: Analysis,
    new: str = "",
    existing: str = "",
    common: frozenset[str] = frozenset(),
) -> tuple[list[Signal], bool]:
    """The signals that fired, and whether an aligned change frame makes the pair related
    whatever its similarity."""
    if phrasing.apart(new, existing):
        return [], False  # about two different systems (`phrasing.topics`)
    found: dict[str, list[str]] = {}
    names = (phrasing.entities(new), phrasing.entities(existing))
    hedged = phrasing.hedged(new) or phrasing.hedged(existing)  # an option weighed is no choice
    antonym_pairs: set[tuple[str, str]] = set()

    def fire(kind: str, triggers: list[str]) -> None:
        bucket = found.setdefault(kind, [])
        bucket.extend(t for t in triggers if t not in bucket)

    for cn in a.clauses:
        for ce in b.clauses:
            if cn.past or ce.past:
                continue  # a clause about the past does not assert the present
            flipped = bool(cn.negators) != bool(ce.negators)
            opposites = opposite_pairs(cn, ce)
            if flipped and opposites:
                continue  # "not enabled" vs "disabled": two flips agree
            ignore = cn.predicates | ce.predicates
            if (
                not opposites
                and is_negative(cn) != is_negative(ce)
                and (cn.negators or ce.negators)
            ):
                if triggers := negation(cn, ce, ignore):
                    fire("negation", triggers)
            if opposites:
                antonym_pairs.update(opposites)
                drop = frozenset(w for pair in opposites for w in pair)
                if same_subject(subject_of(cn, drop), subject_of(ce, drop), ignore):
                    fire("antonym", [_word(cn, ce, w) for pair in opposites for w in pair])
            if triggers := value_change(cn, ce, a, b, ignore):
                fire("value_change", triggers)
            if not flipped and not hedged and (triggers := choice_change(cn, ce, a, b, names)):
                fire("choice_change", triggers)
    if len(antonym_pairs) > 1:
        found.pop("antonym", None)  # two opposites at once describe two sides, not a change
    if "negation" not in found and (
        (triggers := forbidden(new, existing, names))
        or (triggers := forbidden(existing, new, names[::-1]))
    ):
        fire("negation", triggers)
    if triggers := preference_swap(new, existing):
        fire("choice_change", triggers)
    if "choice_change" not in found and (
        (triggers := preferred_against(new, existing))
        or (triggers := preferred_against(existing, new))
    ):
        fire("choice_change", triggers)
    if "choice_change" not in found and (triggers := named_swap(new, existing, names)):
        fire("choice_change", triggers)
    if "choice_change" not in found and (triggers := typed_swap(new, existing, names)):
        fire("choice_change", triggers)
    if "choice_change" not in found and (
        (triggers := decided_swap(new, existing, names))
        or (triggers := decided_swap(existing, new, names[::-1]))
    ):
        fire("choice_change", triggers)
    if "choice_change" in found and told_before(new, existing, names):
        found.pop("choice_change")  # "renamed utils to common" / "... the common package"
    strong_frame, related = change_frames.change_frame(new, existing, a, b, names, common)
    signals = [
        Signal(kind=kind, weight=SIGNAL_WEIGHTS[kind], triggers=triggers)  # type: ignore[arg-type]
        for kind, triggers in found.items()
    ]
    if strong_frame is not None:
        signals.append(_override(strong_frame, strong=True))
    elif marked := change_frames.marker_override(a, b, strong_evidence=bool(signals)):
        signals.append(_override(*marked))
    order = list(SIGNAL_WEIGHTS)
    return sorted(signals, key=lambda s: order.index(s.kind)), related and strong_frame is not None


def _override(triggers: list[str], strong: bool) -> Signal:
    """A change the new text states: decisive when strong, corroboration when weak."""
    weight = SIGNAL_WEIGHTS["temporal_override"] if strong else WEAK_OVERRIDE_WEIGHT
    return Signal(kind="temporal_override", weight=weight, triggers=triggers)


def _word(cn: Clause, ce: Clause, stem: str) -> str:
    return cn.surface.get(stem) or ce.surface.get(stem) or stem
