"""A note unit's memory type, from its label, its headings or how its text starts. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable

_LABELS = {
    "decision": "decision",
    "adr": "decision",
    "convention": "convention",
    "style": "convention",
    "rule": "convention",
    "preference": "preference",
    "prefer": "preference",
    "lesson": "lesson",
    "gotcha": "lesson",
    "pitfall": "lesson",
    "caveat": "lesson",
    "constraint": "constraint",
    "fact": "fact",
    "note": "note",
}
_LABEL = re.compile(r"^[*_\s]*(" + "|".join(_LABELS) + r")s?[*_\s]*[:：]", re.IGNORECASE)
_HEADING_RULES = tuple(
    (t, re.compile(p, re.IGNORECASE))
    for t, p in (
        ("decision", r"\b(decisions?|adrs?|decided)\b"),
        ("lesson", r"\b(lessons?|learn(ed|ings?)|gotchas?|pitfalls?|caveats?|known issues?)\b"),
        ("preference", r"\b(preferences?|prefer(s|red)?)\b"),
        ("constraint", r"\b(constraints?|requirements?|must|never|don[’']?ts|do not|forbidden)\b"),
        ("convention", r"\b(conventions?|style|rules?|guidelines?|standards?|practices?)\b"),
        ("fact", r"\bfacts?\b"),
    )
)
_TEXT_CUES = tuple(
    (t, re.compile(p, re.IGNORECASE))
    for t, p in (
        ("constraint", r"^[*_\s]*(never|must|do not|don[’']?t|avoid)\b"),
        ("preference", r"^[*_\s]*((we|i)\s+)?prefer(s|red)?\b"),
        ("decision", r"^[*_\s]*(we\s+)?(decided|chose)\b"),
        ("convention", r"^[*_\s]*always\b"),
    )
)


def infer_type(text: str, headings: Iterable[str] = (), default: str = "note") -> str:
    """An explicit label (`Gotcha: ...`) beats the nearest heading with a keyword, which beats
    how the text starts (`Never ...`, `Prefer ...`); otherwise `default`."""
    if m := _LABEL.match(text):
        return _LABELS[m.group(1).lower()]
    for heading in reversed(list(headings)):
        for memory_type, rule in _HEADING_RULES:
            if rule.search(heading):
                return memory_type
    for memory_type, rule in _TEXT_CUES:
        if rule.match(text):
            return memory_type
    return default
