"""Change-of-state frames, decisions, preference orders and prohibitions: what a text says
replaced what, chose, prefers or forbids.

Pure and memoised, like `text.analyze`. Four readings of one text:

- `changes(text)`: each change-of-state frame — the grammar of a change, not a word list of
  tools: "moved/migrated/switched X from A to B", "B instead of / rather than A", "replaced A
  with B", "B replaces A", "A was replaced by B", "renamed A to B", "A is now called B",
  "rewritten/rebuilt/ported in/with/to B", "no longer A", "stopped A", "remove/drop/
  decommission/retire A", "switched/moved/migrated to B", "now B". Each frame keeps the stems
  of the old filler A, of the new filler B and of the rest of its sentence (the subject).
- `decisions(text)`: a decision for a thing for a job ("We chose gRPC for service calls").
- `preferences(text)`: order-sensitive preferences "prefer/favour/choose/prioritise A over/to/
  rather than B", "A is preferred to B", "use A rather than B": (A, B) as stem sets.
- `prohibitions(text)`: what a rule forbids ("Never commit generated protobuf files").

The named things, content words and tokens of a text are `phrasing.py`'s.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

from memls.conflicts.phrasing import (
    CODE_SPAN,
    SENTENCE_BREAK,
    content_stems,
    entities,
    tokens,
    unlinked,
    words,
)
from memls.conflicts.stems import TEXTS, normalize, stem


class Change(NamedTuple):
    kind: str  # replace | rename | rewrite | remove | adopt
    old: frozenset[str]  # stems of what was replaced (empty: the frame names only the new)
    new: frozenset[str]  # stems of what replaces it (empty: a removal)
    subject: frozenset[str]  # the rest of the sentence: what changed
    trigger: str  # the frame's words as written ("switched from jest to vitest")
    marker: str  # the words that make it a change ("switched", "no longer", "instead of")
    old_words: tuple[str, ...]  # the replaced filler's words as written
    scope: tuple[str, ...]  # a trailing "for the admin app": where the change applies
    head: str = ""  # B's word next to the marker ("log with [zap] instead of logrus")


def _filler(phrase: str) -> frozenset[str]:
    """The stems of a slot filler; a filler of only generic words keeps them ("in Go")."""
    phrase = _OWNER.sub(" ", _TRIM.sub("", phrase))  # "the team's existing [...]": the team
    #                                                   owns the filler, it is not the filler
    return content_stems(phrase) or content_stems(phrase, keep_generic=True)


_OWNER = re.compile(r"[\w-]+'s\b")


_X = r"(?P<x>[^,;]{1,60}?)"


_A = r"(?P<a>[^,;]{1,60}?)"


_B = r"(?P<b>[^,;]{1,60}?)"


_END = (
    r"(?=\s+(?:for(?!\s+[^\s,;]+[.!]?\s*$)|because|since|after|before|when|once|until|unless|so|as|in order|last|"  # noqa: E501
    r"this|from now|on \w+day|due|pending|mainly|which|in (?:all|every|each|\d{4})|and)\b"
    r"|[,;:]|[.](?!\w)|$)"
)


_MOVE = (
    r"(?:move|moved|moves|migrate|migrated|migrates|switch|switched|switches|change|"
    r"changed|transitioned|ported|converted|went|passed|handed|transferred|rewritten|rewrote|"
    r"rebuilt|reimplemented)"
)


_NEAR_B = r"(?<![\w#@$-])(?P<b>(?:\S+\s+){0,3}?\S+?)"


_CUES = tuple(
    re.compile(c)
    for c in (
        r"\b(?:from|off|out of)\b",
        r"\b(?:from|off)\b",
        r"\b(?:instead of|rather than|in place of|in favou?r of)\b",
        r"\b(?:replac|swap|substitut)",
        r"\b(?:replace|supersed|succeed|took over|takes over)",
        r"\b(?:replaced|superseded|succeeded)\s+(?:by|with)\b",
        r"\brenamed\s",
        r"\brenamed\s",
        r"\bnow\s+(?:called|named|known|published)",
        r"\b(?:rewr|rebuil|re-?implement|rework|ported|recreat|redone)",
        r"\bnow\s",
        r"\b(?:switch|mov|migrat|transition|chang|upgrad)",
        r"\bno longer\s",
        r"\b(?:no longer|not anymore|stop|quit|ceased)",
        r"\b(?:remov|drop|decomm?iss?ion|retir|deprecat|delet|abandon|sunset|phas|rid of)",
        r"\b(?:removed|dropped|decommissioned|retired|deprecated|deleted|abandoned|sunset|phased|"
        r"gone|closed|unsupported|shut down|torn down|taken down)\b",
        r"\b(?:away from|left|took over|taken over|takes over)\b",
        r"\b(?:took over|taken over|takes over)\b",
    )
)
"""One cheap check per frame below, in order: the frame is tried only where its cue is."""


_FRAMES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        (
            "replace",
            rf"\b{_MOVE}\s+(?:(?!from\b)[^,;]{{0,60}}?\s+)?(?:from|off|out of)\s+{_A}\s+(?:and\s+)?(?:to|onto|into|over to)\s+{_B}{_END}",  # noqa: E501
        ),
        ("replace", rf"\b{_MOVE}\s+(?:(?!from\b)[^,;]{{0,60}}?\s+)?(?:from|off)\s+{_A}{_END}"),
        (
            "replace",
            rf"{_NEAR_B}\s*,?\s+(?:instead of|rather than|in place of|in favou?r of)\s+{_A}{_END}",
        ),
        (
            "replace",
            rf"\b(?:replaced|replacing|replace|swapped|swapping|substituted)\s+(?!by\b|with\b){_A}\s+(?:with|by|for)\s+{_B}{_END}",
        ),
        (
            "replace",
            rf"(?:^|\b(?:the|our|a|an)\s+)?{_B}(?<!\bbeen)(?<!\bwas)(?<!\bwere)(?<!\bis)(?<!\bare)(?<!\bbe)(?<!\bget)(?<!\bgot)\s+(?:now\s+)?(?:replaces|replace|replaced|supersedes|supersede|superseded|succeeds|takes over from|took over from)\s+(?!by\b|with\b)(?:the\s+(?:use|usage) of\s+|usage of\s+|use of\s+)?{_A}{_END}",  # noqa: E501
        ),
        (
            "replace",
            rf"{_A}\s+(?:(?:has|have)\s+been|was|were|is|are|got|will be)\s+(?:replaced|superseded|succeeded)\s+(?:by|with)\s+{_B}{_END}",  # noqa: E501
        ),
        ("rename", rf"\brenamed\s+{_A}\s+(?:to|as)\s+{_B}{_END}"),
        (
            "rename",
            rf"{_A}\s+(?:(?:has|have)\s+been|was|were|is|are|got)\s+renamed\s+(?:to|as)\s+{_B}{_END}",
        ),
        (
            "rename",
            rf"{_A}\s+(?:is|are)\s+now\s+(?:called|named|known as|published as)\s+{_B}{_END}",
        ),
        (
            "rewrite",
            rf"\b(?:rewrote|rewritten|rebuilt|rebuild|reimplemented|re-implemented|reworked|ported|recreated|redone|rewriting|rebuilding)\s+(?:(?!in\b|with\b|to\b|using\b)[^,;]{{0,60}}?\s+)?(?:in|with|to|using|on)\s+{_B}{_END}",
        ),
        (
            "rewrite",
            rf"\b(?:(?:is|are)\s+now\s+(?:implemented|written|built|done|handled|managed|run|served|hosted|stored|kept|cut|sent|shipped|signed|hashed|maintained|routed|signed|released|published|powered)|now\s+(?:runs|run|lives|live|goes|go|sits|sit|happens|happen|flows|flow))\s+(?:in|with|by|on|at|through|via|using|from|to|as)\s+{_B}{_END}",
        ),
        (
            "adopt",
            rf"(?:\b(?:(?:will|we'll|shall|going to|decided to|plan to|are to|is to|must|should)\s+(?:\w+\s+)?)(?:switch|move|migrate|transition|change|upgrade)|\b(?:switched|switching|moved|moving|migrated|migrating|transitioned|transitioning|changed|changing|upgraded|upgrading))\s+(?:(?!to\b|from\b)[^,;]{{0,40}}?\s+)?(?:to|onto|over to)\s+{_B}{_END}",  # noqa: E501
        ),
        (
            "remove",
            rf"(?:^|\b(?:the|our|a|an)\s+)?{_A}\s+(?:is|are|was|were)\s+no longer\s+(?:used|needed|supported|maintained|required|run|deployed|in use)\b",  # noqa: E501
        ),
        ("remove", rf"\b(?:no longer|not anymore|stopped|ceased)\s+{_A}{_END}"),
        (
            "remove",
            rf"(?:\b(?:(?:will|we'll|shall|going to|decided to|plan to|are to|is to|must|should)\s+(?:\w+\s+)?)(?:remove|drop|decomm?iss?ion|retire|deprecate|delete|abandon|sunset|phase out|phasing out|phased out)|\b(?:got|get|getting) rid of|\b(?:removed|removing|dropped|dropping|decomm?iss?ioned|decomm?iss?ioning|retired|retiring|deprecated|deprecating|deleted|deleting|abandoned|sunsetting)|^(?:[a-z]+:\s+)?(?:remove|drop|decomm?iss?ion|retire|deprecate|delete|abandon|sunset|phase out))\s+(?:support\s+for\s+)?{_A}{_END}",  # noqa: E501
        ),
        (
            "remove",
            rf"{_A}\s+(?:(?:has|have)\s+been|was|were|is|are|will be|are being|is being)\s+(?:removed|dropped|decommissioned|retired|deprecated|deleted|abandoned|sunset|phased out|gone|closed|unsupported|shut down|torn down|taken down)\b",  # noqa: E501
        ),
        (
            "remove",
            rf"(?:\b(?:we|they|the team|teams?)\s+(?:have\s+|had\s+)?left|\b(?:moved|moving|migrated|migrating|migration|move|migrate|transition|transitioned)\s+away\s+from)\s+{_A}{_END}",  # noqa: E501
        ),
        (
            "replace",
            rf"(?:^|\b(?:the|our|a|an)\s+)?{_B}\s+(?:has|have|had)?\s*(?:took|taken|takes)\s+over\s+(?:(?!from\b)[^,;]{{0,40}}?\s+)?from\s+{_A}{_END}",
        ),
    )
)


def _marker(phrase: str) -> str:
    """The change words of a frame: its first verb of change or connective."""
    for m in re.finditer(
        r"\b(no longer|not anymore|instead of|rather than|in place of|"
        r"in favou?r of|renamed|replaced|replaces|replace|rewrote|rewritten|"
        r"rebuilt|ported|removed?|dropped|drop|decomm?iss?ion\w*|retired?|"
        r"deprecated|deleted?|stopped|stop|switch\w*|mov\w+|migrat\w+|"
        r"chang\w+|passed|handed|transferred|upgrad\w+|supersed\w+|gone|"
        r"(?:got|get|getting) rid of|away from|left|took over|taken over|takes over|now)\b",
        phrase,
    ):
        return m.group(1)
    return phrase.split()[0] if phrase.split() else ""


_SELF = re.compile(r"^(?:this|it)(?:\s+(?:adr|record|decision|change|pr|document|note|rfc))?$")


_HYPOTHETICAL = re.compile(r"\b(?:would|could|might|may|if|unless|whether)\b")


_TRIM = re.compile(
    r"^(?:(?:the|our|a|an|all|any|its|their|every|of|as|support for|use of|"
    r"usage of|using)\s+)+|\s+(?:the|a|an)$"
)


#: Every frame has one of these words: a sentence without any is skipped at once.
_CHANGE_CUE = re.compile(
    r"\b(?:mov|migrat|switch|chang|transition|port|convert|went|pass|hand|transfer|instead|"
    r"rather|in place|in favou?r|replac|swap|substitut|supersed|succeed|took over|takes over|"
    r"renam|now|rewr|rebuil|re-?implement|rework|recreat|redone|no longer|not anymore|stop|"
    r"quit|ceas|remov|drop|decomm?iss?ion|retir|deprecat|delet|abandon|sunset|phas|upgrad|rid of|"
    r"gone|closed|unsupported|away from|left|took over|taken over|takes over|shut down|"
    r"torn down|taken down)",
    re.IGNORECASE,
)


_PREFERENCE_CUE = re.compile(
    r"\b(?:over|to|rather than|instead of|above|before)\b|(?:\(\s*|,\s+)(?:not|never)\b"
)


@functools.lru_cache(maxsize=TEXTS)
def changes(text: str) -> tuple[Change, ...]:
    """The change-of-state frames of `text` (see the module docstring)."""
    found: list[Change] = []
    if not _CHANGE_CUE.search(text):
        return ()
    for sentence in SENTENCE_BREAK.split(CODE_SPAN.sub(lambda m: m.group(1), text)):
        plain = normalize(sentence).strip()
        if not plain or plain.endswith("?") or not _CHANGE_CUE.search(plain):
            continue  # a question changes nothing
        covered: list[tuple[int, int]] = []
        for (kind, pattern), cue in zip(_FRAMES, _CUES):
            if not cue.search(plain):
                continue
            for m in pattern.finditer(plain):
                if any(s <= m.start() < e for s, e in covered):
                    continue
                if _HYPOTHETICAL.search(plain[max(0, m.start() - 40) : m.start() + 1]):
                    continue  # "there would no longer be a single configuration": a what-if
                groups = m.groupdict()
                old = _filler(groups.get("a") or "")
                new = _filler(groups.get("b") or "")
                if _SELF.match(groups.get("b") or ""):
                    new = frozenset()  # "This ADR supersedes ADR-0007": the text itself
                if not old and not new:
                    continue
                subject = content_stems(plain) - old - new
                a_text = _TRIM.sub("", groups.get("a") or "")
                old_words = tuple(w for w in a_text.split() if stem(w.strip(".,:;'\"()")) in old)
                tail = re.match(
                    r"\s+(?:for|in|on|within)\s+(?:the\s+|our\s+)?([^,;.]{1,40})", plain[m.end() :]
                )
                scope = tuple(
                    stem(w)
                    for w in (tail.group(1).split() if tail else ())
                    if stem(w) in content_stems(w)
                )
                b_words = [stem(w.strip(".,:;'\"()")) for w in (groups.get("b") or "").split()]
                before = bool(groups.get("a") and groups.get("b")) and m.start("b") < m.start("a")
                head = next((w for w in reversed(b_words) if w in new), "") if before else ""
                found.append(
                    Change(
                        kind,
                        old,
                        new,
                        subject,
                        m.group(0).strip()[:60],
                        _marker(m.group(0)),
                        old_words,
                        scope,
                        head,
                    )
                )
                covered.append((m.start(), m.end()))
    return tuple(found)


_DECIDE = re.compile(
    r"^(?:[a-z]+:\s+)?(?:(?:we|the team|teams|all (?:\w+\s+)?(?:services|teams|repos))\s+"
    r"(?:will\s+|shall\s+|now\s+|have\s+|has\s+)?(?:(?:decided|agreed|chosen|chose|opted)\s+"
    r"to\s+)?|(?:always\s+)?(?=use\b))"
    r"(?:use|adopt|adopted|chose|choose|chosen|go with|went with|standardi[sz]e on|"
    r"standardi[sz]ed on|settle on|settled on|pick|picked|opt for|opted for|rely on)\s+"
    r"(?P<b>[^,;]{1,60}?)\s+(?:for|as)\s+(?P<p>[^,;:()]{1,80}?)(?:[,;:(]|[.](?!\w)|$)"
)


@functools.lru_cache(maxsize=TEXTS)
def decisions(text: str) -> tuple[Change, ...]:
    """A decision for a thing for a job, without naming what it replaces: "We will use Kafka as
    the event backbone for order events", "We chose gRPC for service-to-service calls", "Use
    ruff for linting". Kind `decide`: `new` is the chosen thing, `subject` the job."""
    if "use" not in text.casefold() and not _PICK_CUE.search(text):
        return ()
    out: list[Change] = []
    for sentence in SENTENCE_BREAK.split(CODE_SPAN.sub(lambda m: m.group(1), unlinked(text))):
        plain = normalize(sentence).strip()
        if not plain or plain.endswith("?"):
            continue
        m = _DECIDE.search(plain)
        if m is None:
            continue
        new, job = _filler(m.group("b")), content_stems(m.group("p"))
        if new and job:
            out.append(Change("decide", frozenset(), new, job, m.group(0)[:60], "decide", (), ()))
    return tuple(out)


_PICK_CUE = re.compile(r"\b(?:adopt|cho|go with|went with|standardi|settle|pick|opt|rely)", re.I)


_PREFER = re.compile(
    r"\b(?:prefer|prefers|preferring|favou?r|favou?rs|favou?ring|choose|chooses|pick|picks|"
    r"prioriti[sz]e|prioriti[sz]es|value|values|opt for|go with|use|uses)\s+"
    r"(?P<a>[^,;]{1,50}?)\s+(?:over|to|rather than|instead of|above|before)\s+(?P<b>[^,;]{1,50}?)"
    + _END
)


_PREFERRED = re.compile(
    r"(?P<a>[^,;]{1,50}?)\s+(?:is|are)\s+(?:preferred|favou?red|prioriti[sz]ed|chosen)\s+"
    r"(?:over|to|above|rather than|instead of)\s+(?P<b>[^,;]{1,50}?)" + _END
)


_BARE_OVER = re.compile(
    r"^(?:[a-z]+:\s+)?(?P<a>(?:[^\s,;:]+\s+){0,2}?[^\s,;:]+)\s+over\s+(?P<b>[^,;:]{1,50}?)" + _END
)
"""A sentence that opens with "A over B" ("Consistency over availability for ledger writes.")."""


#: "Use end-to-end tests (not mocks)": the thing used over the one it names in brackets.
_NOT_ALTERNATIVE = re.compile(
    r"(?:\b(?:use|prefer|write|choose|run)\s+|^(?:always\s+)?(?=(?:indent|format|install|import|"
    r"name|call|pick|keep|put|place|store|test|build)\b))(?P<a>[^,;()]{1,50}?)"
    r"(?:\s+(?:for|in|on|when)\s+[^,;()]*)?(?:\s*\(\s*|,\s+)(?:not|never)\s+"
    r"(?P<b>[^,;()]{1,50}?)\s*(?:\)|[.;!]|$)"
)  # "Indent with 4 spaces, never tabs"; what it is for ("tox for testing (not pytest)") is
#    no part of the choice


_PREFERRED_SUBJECT = re.compile(
    r"(?P<a>[^,;]{1,50}?)\s+(?:over|rather than|to)\s+(?P<b>[^,;]{1,50}?)\s+(?:is|are)\s+"
    r"(?:preferred|favou?red)\b"
)


@functools.lru_cache(maxsize=TEXTS)
def preferences(text: str) -> tuple[tuple[frozenset[str], frozenset[str], str], ...]:
    """(preferred, over what, the phrase) for each order-sensitive preference in `text`."""
    out: list[tuple[frozenset[str], frozenset[str], str]] = []
    if not _PREFERENCE_CUE.search(text):
        return ()
    for sentence in SENTENCE_BREAK.split(CODE_SPAN.sub(lambda m: m.group(1), text)):
        plain = normalize(sentence).strip()
        if not _PREFERENCE_CUE.search(plain):
            continue
        before = len(out)
        for pattern in (_NOT_ALTERNATIVE, _PREFER, _PREFERRED, _PREFERRED_SUBJECT, _BARE_OVER):
            if pattern is _BARE_OVER and len(out) > before:
                break  # a verb of preference already read the sentence
            for m in pattern.finditer(plain):
                a = content_stems(_TRIM.sub("", m.group("a").split(",")[-1]))
                b = content_stems(_TRIM.sub("", m.group("b")))
                a, b = a - b, b - a  # "squash merges over merge commits": squash vs commits
                if a and b:
                    out.append((a, b, m.group(0).strip()[:60]))
    return tuple(out)


_FORBID = re.compile(
    r"(?P<verbal>\b(?:do not|don't|does not|doesn't|never|must not|mustn't|should not|"
    r"shouldn't|cannot|can't|may not)\s+(?:\w+ly\s+)?(?P<verb>[\w-]+)\s+)"
    r"|(?P<nominal>^(?:[a-z]+:\s+)?(?:there (?:is|are) )?no\s+(?:more\s+)?)"
    r"|(?P<avoid>^(?:[a-z]+:\s+)?(?:always\s+|please\s+)?avoid(?:\s+using)?\s+)"
)


#: Where the forbidden thing ends: a preposition or a connective opens its circumstances.
_OBJECT_END = re.compile(
    r"\s(?:to|in|into|at|on|by|from|for|with|under|inside|when|so|because|unless|before|"
    r"after|without|against|as|if|until|via|through|beside|next)\b|[,;:(]|[.](?!\w)|$"
)


@functools.lru_cache(maxsize=TEXTS)
def prohibitions(text: str) -> tuple[tuple[frozenset[str], str], ...]:
    """What a rule forbids: "Never commit generated protobuf files" -> ({generat, protobuf,
    file}, phrase); "No print statements in library code" -> ({print, statement}, ...). The
    forbidden thing runs from the verb after the negator (or from "no" opening a sentence)
    to the first preposition or connective; the verb itself is not part of it."""
    out: list[tuple[frozenset[str], str]] = []
    for sentence in SENTENCE_BREAK.split(CODE_SPAN.sub(lambda m: m.group(1), unlinked(text))):
        plain = normalize(sentence).strip()
        if not plain or plain.endswith("?"):
            continue
        for clause in re.split(r"[;]|\s-\s|:\s(?=[a-z])", plain):
            clause = clause.strip()
            m = _FORBID.search(clause)
            if m is None:
                continue
            rest = clause[m.end() :]
            end = _OBJECT_END.search(rest)
            thing = rest[: end.start()] if end else rest
            if m.group("verbal") and m.group("verb") in ("be", "have", "need", "needs"):
                continue  # "must not be", "does not need": a state, not a forbidden act
            stems = content_stems(thing)
            if stems:
                out.append((stems, clause[m.start() : m.end() + len(thing)].strip()[:60]))
    return tuple(out)


@functools.lru_cache(maxsize=TEXTS)
def targets(text: str) -> frozenset[str]:
    """What the change frames of `text` say was replaced or removed, as stems: the named
    things of each replaced filler (all its words when it names none). An engine can look
    these up (lexically) to find the statements the text supersedes even when they are not
    among its nearest neighbours ("This replaces usage of kOps" -> {"kop"})."""
    named = entities(text)
    found = changes(text)
    replacing = frozenset(w for change in found for w in change.new)  # what any frame adopts
    out: set[str] = set()
    for change in found:
        old = change.old - replacing  # "we replaced [Jenkins with GitHub Actions]" read whole
        out.update((old & named) or old)
    return frozenset(out)


def cache_clear() -> None:
    """Forget the memoised readings (benchmarks measure the uncached cost)."""
    for function in (
        entities,
        changes,
        decisions,
        preferences,
        prohibitions,
        words,
        tokens,
        targets,
    ):
        function.cache_clear()
