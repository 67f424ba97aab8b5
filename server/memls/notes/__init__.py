"""Workspace note files (AGENTS.md, ADRs, rule files) as memory units: pure parsing and diffing.

`parse(text)` turns one file into `Unit`s with exact source ranges (`index` keys them by
canonical hash, first wins); the table of the agents' file conventions (`conventions`) says
which files are notes, of which kind and origin, and `scope` which files their lines apply to.
No clock; the only I/O is `files` (finding, reading and choosing folders to watch), which
the owner's note watcher (`memls.daemon.notewatch`) uses before it calls the engine.
"""

from memls.notes.conventions import DEFAULT, Convention, Match, Table, table
from memls.notes.document import NoteFacts, comparable, note_facts
from memls.notes.globs import match, matches
from memls.notes.memory_type import infer_type
from memls.notes.parse import MAX_UNIT_CHARS, Unit, index, parse
from memls.notes.references import Ref, note_number, resolve_ref
from memls.notes.scan import split_lines
from memls.notes.sections import is_claim, section_of

__all__ = [
    "NoteFacts",
    "Ref",
    "comparable",
    "is_claim",
    "note_facts",
    "note_number",
    "resolve_ref",
    "section_of",
    "DEFAULT",
    "MAX_UNIT_CHARS",
    "Convention",
    "Match",
    "Table",
    "Unit",
    "index",
    "infer_type",
    "match",
    "matches",
    "table",
    "parse",
    "split_lines",
]
