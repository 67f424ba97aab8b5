"""Which section of a note a unit sits in, and whether it states a claim. Pure.

Sections. A unit's section is the kind of the nearest heading above it that names one
(`section_of`): ADR structure (`status`, `context`, `options`, `decision`, `consequences`),
a change the note records (`update`: "Update", "Amendment", "Revision", "Addendum",
"Changelog", a dated heading), `references` ("Links", "References", "See also") or
"" (any other heading, or none: an agent file's rules).

Claims. A unit states a claim about the project unless it is markup or not the note's own
word (`is_claim`): a fenced code block or a table on its own; a list of links (no more than
two words outside links, code spans and URLs); a label line ("Date: 2020-02-09", "Status:
Accepted"); fewer than three words; or a unit in the `status`, `context`, `options` or
`references` section (options considered and the context are not what was decided).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

SectionKind = Literal[
    "", "status", "context", "options", "decision", "consequences", "update", "references"
]

#: Sections whose units are not claims of the note.
NOT_CLAIMS: frozenset[str] = frozenset({"status", "context", "options", "references"})
#: A context unit that reports a change of state is a claim after all: "As of November 2024,
#: we have migrated the logging service to OpenSearch", "The design of 018 proved impossible".
_REPORTED_CHANGE = re.compile(
    r"\b(?:as of|no longer|(?:is|are) now|we(?:'re| are)? now|(?:has|have) (?:now )?(?:been )?"
    r"(?:migrated|moved|replaced|switched|removed|retired|decommissioned|deprecated|dropped|"
    r"abandoned)|proved (?:impossible|unworkable|too))\b",
    re.IGNORECASE,
)

DATE = (
    r"(?:\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}\s+\w+\s+\d{4}"
    r"|\w+\s+\d{1,2},?\s+\d{4})"
)
_SECTION_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        (
            "update",
            r"\b(updates?|updated|amendments?|amended|revisions?|revised|addend(um|a)|"
            r"change ?log|errata|post[- ]?script)\b|^\s*" + DATE + r"\s*$",
        ),
        ("status", r"^\s*status\b"),
        (
            "options",
            r"\b(options?|alternatives?|considered|pros and cons|trade-?offs?|"
            r"prior art|rejected approaches|approaches)\b",
        ),
        (
            "context",
            r"\b(context|background|problem|motivation|user needs|forces|"
            r"current (state|situation)|issues?)\b",
        ),
        (
            "decision",
            r"\b(decisions?|decided|proposal|proposed|what[’']?s proposed|chosen|"
            r"outcome|resolution)\b",
        ),
        ("consequences", r"\b(consequences?|implications?|impact|results?)\b"),
        ("references", r"\b(references?|links?|see also|further reading|related)\b"),
    )
)

LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
_URL = re.compile(r"<?https?://\S+>?")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_LABEL_LINE = re.compile(
    r"^[*_\s]*(date|status|authors?|deciders?|owners?|reviewers?|technical story|tags?|"
    r"created|updated|last updated|version)[*_\s]*:",
    re.IGNORECASE,
)


def section_kind(heading: str) -> SectionKind:
    """The kind one heading names, or ""."""
    title = LINK.sub(r"\1", heading).strip(" #*_:")
    for kind, rule in _SECTION_RULES:
        if rule.search(title):
            return kind  # type: ignore[return-value]
    return ""


def section_of(headings: Sequence[str], *, titled: bool = False) -> SectionKind:
    """The section of a unit under this heading path (outermost first): the nearest heading
    that names a kind. "Decision > Option: Raw txdata" is `options`. `titled`: the first
    heading is the note's title and names no section ("# Configuration Updates")."""
    for heading in reversed(headings[1:] if titled else headings):
        if kind := section_kind(heading):
            return kind
    return ""


def prose_words(text: str) -> list[str]:
    """Words outside links, URLs and code spans."""
    bare = _CODE_SPAN.sub(" ", _URL.sub(" ", LINK.sub(" ", text)))
    return _WORD.findall(bare)


#: A named thing given a number: "**Node.js**: v22", "pnpm: v10+".
_STATED_VALUE = re.compile(r"^[*_\s]*[\w.@/-]+(?:\s[\w.@/-]+)?[*_\s]*:\s*[*_`]*v?\d")


def is_claim(text: str, *, block: str = "para", section: str = "") -> bool:
    """Does this unit state something about the project (see the module docstring)?
    `block` is the unit's block kind: "para", "item", "table" or "code"."""
    if block in ("table", "code"):
        return False
    if section in NOT_CLAIMS and not (section == "context" and _REPORTED_CHANGE.search(text)):
        return False
    if re.fullmatch(r"\s*~~.*~~\s*", text, re.DOTALL):
        return False  # struck through: the note retracted it
    first = text.strip().splitlines()[0] if text.strip() else ""
    if _LABEL_LINE.match(first) and len(prose_words(text)) <= 12:
        return False
    if _STATED_VALUE.match(first):
        return True  # "**pnpm**: v10+", "Port: 8080": a value stated for a named thing
    if LINK.search(text) or _URL.search(text):
        if len(prose_words(text)) <= 2:
            return False  # a link list entry
    return len(prose_words(text)) >= 3
