"""Canonical form of a memory's text, for write-time dedup and tombstones."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?", re.MULTILINE)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+", re.MULTILINE)
_QUOTE = re.compile(r"^\s*>+\s?", re.MULTILINE)
_EMPHASIS = re.compile(r"[*_~`]+")
_SPACE = re.compile(r"\s+")


def canonical(text: str) -> str:
    """NFKC, markdown stripped, case and whitespace folded."""
    value = unicodedata.normalize("NFKC", text)
    value = _LINK.sub(r"\1", value)
    value = _HEADING.sub("", value)
    value = _QUOTE.sub("", value)
    value = _LIST_MARK.sub("", value)
    value = _EMPHASIS.sub("", value)
    value = value.casefold()
    return _SPACE.sub(" ", value).strip()


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(text: str) -> str:
    return sha256(text)


def canonical_hash(text: str) -> str:
    return sha256(canonical(text))


def preview(text: str, limit: int = 120) -> str:
    flat = _SPACE.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
