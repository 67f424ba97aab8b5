"""The change-frame signal (`temporal_override`): the new text says something changed.

- `change_frame`: its change-of-state frame (`frames.changes`) aligned with what the existing
  text states: strong evidence, and the pair is related whatever its similarity.
- `marker_override`: an update marker ("switched from", "no longer", "instead of") that names
  what it replaces, which the old text states: strong; one that only shares the subject: weak,
  corroboration only.

Each returns the trigger words; the scorer weighs them.
"""

from __future__ import annotations

import re

from memls.conflicts import frames, phrasing
from memls.conflicts.stems import GENERIC_STEMS, normalize, stem
from memls.conflicts.subjects import (
    SHORT_CLAUSE_KEYS,
    SHORT_TEXT_KEYS,
    is_compound,
    restated,
    share_of,
    with_parts,
)
from memls.conflicts.text import Analysis, Clause, analyze
from memls.conflicts.values import can_compare, equal_values

#: Nouns for a whole or a kind of part, never one thing: two statements that share only
#: these are not about one subject ("configuration", "the codebase", "the environment").
CONTAINER_STEMS = frozenset(
    stem(w)
    for w in (
        "adr codebase code configuration config environment service system project repository "
        "repo setup infrastructure platform application app tool tooling process approach "
        "component components thing way"
    ).split()
)


#: Share of the replaced thing's words ("from session cookies") the old text must contain.
OVERRIDE_MIN_OVERLAP = 0.6


#: Share of a change frame's replaced filler ("from our homegrown table") the old text states.
FRAME_MIN_SHARE = 0.5


def _present(b: Analysis) -> frozenset[str]:
    return frozenset(w for c in b.clauses if not c.past for w in c.content)


def change_frame(
    new: str,
    existing: str,
    a: Analysis,
    b: Analysis,
    names: tuple[frozenset[str], frozenset[str]],
    common: frozenset[str] = frozenset(),
) -> tuple[list[str] | None, bool]:
    """The new text's change-of-state frame, aligned with what the existing text states:
    the replaced filler (A) is there and the new filler (B) is not; or, when the frame names
    only B, the existing text shares the subject and names another thing in its place; or the
    existing text chose against A ("rather than using EKS") and the new one states A."""
    stated = with_parts(_present(b) | names[1] | phrasing.words(existing))
    old_keys = frozenset(k for c in b.clauses if not c.past for k in c.keys)  # its length is
    #   read on b.keys: a past clause ("Initially we'll ...") still makes a statement long
    if not frames.changes(new) and not frames.changes(existing):
        return None, False
    banned = frozenset(w for thing, _ in frames.prohibitions(existing) for w in thing)
    for change in () if phrasing.hedged(new) else frames.changes(new):
        fill = change.new - change.old
        if change.head in fill and not fill & names[0]:
            fill = frozenset({change.head})  # "services log with zap instead of logrus": zap
        if fill and share_of(fill - GENERIC_STEMS, banned) >= FRAME_MIN_SHARE:
            return [change.marker, *change.old_words], _related(change, old_keys)  # the
            #   existing text forbids the new state ("Do not use double backticks")
        if change.new and restated(fill, names[0], stated):
            continue  # the existing text already says the new state
        if change.old:
            named = (change.old & names[0]) - change.new  # "EKS" in "from EKS nodes to EKS
            #                                               Fargate" is context, not the filler
            named = frozenset(w for w in named if phrasing.tokens(new).count(w) < 2)  # nor is
            # a name said again ("Use Managed Service for Prometheus ... instead of Prometheus")
            key = named or (change.old - change.new)
            key = frozenset(w for w in key if not any(w.startswith(c) for c in common))
            if not key - CONTAINER_STEMS:
                continue  # "replace the configuration", "moved the codebase", a word the
                #           whole corpus uses ("cluster" in a platform team's records)
            if not named and len(b.keys) > SHORT_TEXT_KEYS:
                continue  # common words replaced, against a paragraph: too loose to align
            if share_of(key, stated) < FRAME_MIN_SHARE or not all(
                w in stated
                for w in key | change.old
                if phrasing.identifier(w) and not is_compound(w) and (w in key or w[:1].isdigit())
            ):
                continue  # "the v1 API was deprecated" says nothing of "the v2 API"
            if not in_role(key, existing):
                continue  # the replaced thing only hangs on another noun in the other text
            scope = change.scope
            if len(scope) > 1 and _scoped_apart(scope, existing, stated):
                continue  # "replaced Webpack for the admin app" / "the customer app ... Webpack"
            aside = not (change.subject - GENERIC_STEMS - CONTAINER_STEMS) & old_keys
            if aside and len(b.keys) > SHORT_CLAUSE_KEYS:
                continue  # the replaced thing named in passing, by a statement on another subject
            return [change.marker, *change.old_words], _related(change, old_keys)
        if change.kind in ("rewrite", "adopt") and change.new:
            if (
                not (change.subject - GENERIC_STEMS - CONTAINER_STEMS) & old_keys
                or len(b.keys) > SHORT_TEXT_KEYS
            ):
                continue  # only a short statement on the same subject names the old filler
            others = frozenset(
                w
                for w in names[1] - names[0] - change.subject - change.new - CONTAINER_STEMS
                if len(w) > 1 and w[:1].isalpha()
            )
            if others:
                return [change.marker, *sorted(others)[:3]], _related(change, old_keys)
    said = phrasing.words(new) | names[0]
    removed = frozenset(w for c in frames.changes(new) for w in c.old)
    for change in frames.changes(existing):
        if change.kind != "replace" or not change.old or not change.new:
            continue
        named = change.old & names[1]
        key = named or change.old
        if share_of(key, said) < 1.0 or key & removed:
            continue  # the new text does not name the rejected thing, or removes it too
        if not in_role(key, new, _AGENT_MODIFIERS):
            continue  # named only as what something else hangs on ("recommended by EKS")
        rest = (said & stated) - change.old - GENERIC_STEMS
        if len(rest) >= 2:  # the same subject besides the rejected thing
            return [change.marker, *sorted(key)[:2]], _related(change, said)
    return None, False


#: A thing named only after "of" (or "based on") hangs on another noun ("the complexity of
#: cluster management", "deployment of concourse", "an alternative based on Concourse CI"):
#: the statement is about that noun, not the thing.
#: Other prepositions often open the statement's choice ("sessions live in Memcached", "runs on
#: Heroku") and are left alone.
_MODIFIER_PREPOSITIONS = frozenset({"of"})
#: For a text that states what another rejected ("rather than using EKS"): a thing named only
#: as the agent of a participle ("recommended by EKS") is not what it states either.
_AGENT_MODIFIERS = frozenset({"of", "by"})
#: What ends such a modifier: punctuation, a conjunction, a relative pronoun, a preposition
#: of means or destination ("with", "to", "via", "by": the statement's choice).
_PHRASE_END = frozenset(
    "and or but nor so because while if when where which that who whose whom than then "
    "to with via by through using".split()
)
_RAW_WORD = re.compile(r"[\w#@][\w.+#/-]*|[,;:.!?()\[\]]")
#: "instead of", "because of", "out of": no noun for the thing to hang on.
_NOT_MODIFIER = frozenset({"", "instead", "because", "out", "ahead", "rather", "the", "a", "an"})
#: Quantity nouns whose "of" names the head itself ("a pool of ingress controllers").
_QUANTITY = frozenset("set pool number list group couple lot lots few kind type".split())


def in_role(
    key: frozenset[str], text: str, modifiers: frozenset[str] = _MODIFIER_PREPOSITIONS
) -> bool:
    """Is one of the replaced thing's words (stems) what `text` states — its subject, its
    object or its choice — and not only a word hanging on another noun ("the complexity of
    cluster management", "deployment of concourse")? Generic words count only when the thing
    has no other."""
    key = frozenset(k for k in key if k not in GENERIC_STEMS) or key
    inside = False
    before = ""
    for raw in _RAW_WORD.findall(normalize(phrasing.unlinked(text))):
        word = raw.strip(".-/")
        if not word or not (word[0].isalnum() or word[0] in "#@"):
            inside = False
        elif word in modifiers or (word == "on" and before == "based"):
            inside = before not in _NOT_MODIFIER and stem(before) not in _QUANTITY
        elif word in _PHRASE_END:
            inside = False
        elif not inside and (with_parts(frozenset({stem(word)})) | {word}) & key:
            return True
        before = word
    return False


def _scoped_apart(scope: tuple[str, ...], existing: str, stated: frozenset[str]) -> bool:
    """The frame's trailing scope ("for the admin app") names its head word, and the existing
    text gives that head another modifier ("the customer app"): two scopes. "for all unit
    tests in the TypeScript packages" / "TypeScript packages are unit-tested" is one."""
    if scope[-1] not in stated or set(scope) <= with_parts(stated):
        return False
    seq = phrasing.tokens(existing)
    modifiers = {seq[i - 1] for i, w in enumerate(seq) if w == scope[-1] and i > 0 and seq[i - 1]}
    return not modifiers or bool(modifiers - set(scope) - GENERIC_STEMS)


def _related(change: frames.Change, keys: frozenset[str]) -> bool:
    """The frame's own subject is in the other text, or the other text is a short statement:
    then the pair is related whatever its similarity ("switched from Jenkins to Buildkite" is
    not about "Jenkins also builds the nightly APKs, publishes the docs, ...")."""
    return bool(change.subject & keys) or len(keys) <= SHORT_CLAUSE_KEYS


_MOVE = (
    r"(?:switched|switching|migrated|migrating|moved|changed|took over|taken over|"
    r"upgraded|downgraded)"
)


_OLD_END = re.compile(
    r" (?:since|for|in|on|at|because|when|after|before|during|with|to|from|by|as|last|"
    r"years?|months?|weeks?)\b.*$"
)


_REPLACED_PATTERNS = (
    re.compile(_MOVE + r" (?:\S+ ){0,3}?from (?P<old>.+?)(?: to\b|$)"),
    re.compile(r"\b(?:no longer|stopped|quit) (?P<old>.+)"),
    re.compile(r"\bused to (?P<old>.+)"),
    re.compile(r"\binstead of (?P<old>.+)"),
    re.compile(r"\breplaced (?P<old>.+?) (?:with|by)\b"),
    re.compile(r"\brenamed (?P<old>.+?) to\b"),
    re.compile(r"\bmoved off (?P<old>.+)"),
    re.compile(
        r"^(?P<old>.+?) (?:was|were|has been|have been|got|is|are) (?:replaced|renamed|"
        r"deprecated|dropped|retired|superseded|removed|switched off)\b"
    ),
)


def marker_override(
    a: Analysis, b: Analysis, *, strong_evidence: bool
) -> tuple[list[str], bool] | None:
    """The new text says something changed: (its triggers, strong). Strong when it names the
    replaced thing and the old text states it; weak (corroboration only) when it merely shares
    the subject."""
    if not a.markers:
        return None
    present = [c for c in b.clauses if not c.past]
    old_keys = frozenset(k for c in present for k in c.keys)
    old_values = tuple(v for c in present for v in c.values)
    for clause in a.clauses:
        if not clause.markers:
            continue
        for pattern in _REPLACED_PATTERNS:
            match = pattern.search(clause.text)
            if match is None:
                continue
            replaced = analyze(_OLD_END.sub("", match.group("old")))
            words = [k for k in replaced.keys if k not in GENERIC_STEMS]
            if not words:
                continue
            hit = [k for k in words if k in old_keys]
            values_agree = all(
                any(can_compare(v, w) and equal_values(v, w) for w in old_values)
                for v in replaced.values
            )
            if (
                len(hit) / len(words) >= OVERRIDE_MIN_OVERLAP
                and values_agree
                and not any(_other_scope(clause, c, frozenset(words)) for c in present)
                and in_role(frozenset(hit), " ".join(c.text for c in present))
            ):
                surfaces = [c.surface[k] for c in replaced.clauses for k in c.keys if k in hit]
                return [*clause.markers, *dict.fromkeys(surfaces)], True
    if strong_evidence or any(
        len(set(cn.keys) & set(ce.keys)) >= 2 for cn in a.clauses for ce in present
    ):
        return list(a.markers), False
    return None


def _other_scope(cn: Clause, ce: Clause, replaced: frozenset[str]) -> bool:
    """Besides the replaced thing, both clauses share context yet each has its own qualifiers:
    'replaced Webpack for the admin app' says nothing about 'the customer app ... Webpack'."""
    if not replaced & set(ce.keys):
        return False
    rest_n, rest_e = set(cn.keys) - replaced, set(ce.keys) - replaced
    return (
        bool(rest_n & rest_e)
        and bool(rest_n - rest_e - cn.predicates)
        and bool(rest_e - rest_n - ce.predicates)
    )
