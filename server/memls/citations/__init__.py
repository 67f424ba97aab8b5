"""Memories that know their code: citations of spans, symbols and files, found again in newer
text as fresh, moved, changed or missing.

Pure (text in, states out): `fingerprint`, `anchor`, `locate`, `symbols` (tree-sitter),
`renames`. The parts that touch the disk are `files` (reading a cited file inside the project
folder, with its limits) and `git` (git's rename detection, run as a subprocess).
"""

from memls.citations.anchor import (
    STALE_STATES,
    STATES,
    Anchor,
    Located,
    State,
    anchor_coarse,
    anchor_file,
    anchor_span,
    anchor_symbol,
)
from memls.citations.fingerprint import FileView, fingerprint, normalise, split_lines
from memls.citations.locate import locate, locate_coarse, missing, short_diff
from memls.citations.renames import follow
from memls.citations.symbols import Symbol, enclosing, find_symbol, supported, symbols

__all__ = [
    "STALE_STATES",
    "STATES",
    "Anchor",
    "FileView",
    "Located",
    "State",
    "Symbol",
    "anchor_coarse",
    "anchor_file",
    "anchor_span",
    "anchor_symbol",
    "enclosing",
    "find_symbol",
    "fingerprint",
    "follow",
    "locate",
    "locate_coarse",
    "missing",
    "normalise",
    "short_diff",
    "split_lines",
    "supported",
    "symbols",
]
