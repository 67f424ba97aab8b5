"""The tracker's states on synthetic edits: fresh, moved, changed, missing."""

from __future__ import annotations

import pytest

from memls.citations import (
    FileView,
    anchor_file,
    anchor_span,
    anchor_symbol,
    fingerprint,
    follow,
    locate,
    short_diff,
    symbols,
)

SOURCE = """import os


def load(path):
    with open(path) as handle:
        return handle.read()


def save(path, text):
    with open(path, "w") as handle:
        handle.write(text)


def remove(path):
    os.remove(path)
"""


def span(start: int, end: int, text: str = SOURCE):
    return anchor_span("src/io.py", FileView(text), start, end)


def test_untouched_text_is_fresh() -> None:
    located = locate(span(9, 11), FileView(SOURCE))
    assert (located.state, located.start_line, located.end_line) == ("fresh", 9, 11)
    assert not located.stale


def test_lines_inserted_above_move_the_citation() -> None:
    edited = SOURCE.replace("import os\n", "import os\nimport sys\nimport json\n")
    located = locate(span(9, 11), FileView(edited))
    assert (located.state, located.start_line, located.end_line) == ("moved", 11, 13)


def test_white_space_and_blank_lines_are_normalised() -> None:
    edited = SOURCE.replace(
        '    with open(path, "w") as handle:', '    with  open(path, "w")   as handle:\n'
    )
    edited = edited.replace("\t", "    ")
    located = locate(span(9, 11), FileView(edited))
    assert located.state in ("fresh", "moved")
    assert not located.stale
    reindented = SOURCE.replace("        handle.write(text)", "            handle.write(text)")
    assert locate(span(9, 11), FileView(reindented)).state == "fresh"


def test_an_edit_inside_the_cited_lines_is_a_change_with_its_diff() -> None:
    anchor = span(9, 11)
    edited = SOURCE.replace("handle.write(text)", "handle.write(text.upper())")
    view = FileView(edited)
    located = locate(anchor, view)
    assert located.stale and located.state == "changed"
    assert (located.start_line, located.end_line) == (9, 11)
    diff = short_diff(anchor, view, located)
    assert diff == "-handle.write(text)\n+handle.write(text.upper())"


def test_an_edit_outside_the_cited_lines_is_not_a_change() -> None:
    edited = SOURCE.replace("os.remove(path)", "os.unlink(path)")
    assert locate(span(9, 11), FileView(edited)).state == "fresh"


def test_a_block_moved_below_follows_to_its_new_lines() -> None:
    load = "\n".join(SOURCE.splitlines()[3:6]) + "\n"
    rest = SOURCE.replace(load, "")
    moved = rest + "\n\n" + load
    located = locate(span(4, 6), FileView(moved))
    assert located.state == "moved"
    assert FileView(moved).text(located.start_line, located.end_line) == load.rstrip("\n")


def test_among_copies_the_one_with_matching_context_wins() -> None:
    text = "a = 1\nx = f()\nb = 2\n\nc = 3\nx = f()\nd = 4\n"
    anchor = anchor_span("m.py", FileView(text), 6, 6)
    shifted = "new = 0\n" + text
    located = locate(anchor, FileView(shifted))
    assert (located.state, located.start_line) == ("moved", 7)


def test_a_whole_file_is_fresh_while_it_exists_and_moved_when_renamed() -> None:
    anchor = anchor_file("src/io.py", FileView(SOURCE))
    assert locate(anchor, FileView(SOURCE + "# more\n")).state == "fresh"
    assert locate(anchor, FileView(SOURCE), path="lib/io.py").state == "moved"


def test_a_symbol_follows_its_definition() -> None:
    view = FileView(SOURCE)
    found = {s.name: s for s in symbols("src/io.py", SOURCE)}
    save = found["save"]
    anchor = anchor_symbol("src/io.py", view, "save", save.start_line, save.end_line)
    assert locate(anchor, view, symbols=list(found.values())).state == "fresh"

    above = "import sys\n" + SOURCE
    located = locate(anchor, FileView(above), symbols=symbols("src/io.py", above))
    assert (located.state, located.start_line) == ("moved", save.start_line + 1)

    changed = SOURCE.replace("handle.write(text)", "handle.write(text + '\\n')")
    located = locate(anchor, FileView(changed), symbols=symbols("src/io.py", changed))
    assert located.state == "changed"

    gone = SOURCE.replace("def save(", "def store(")
    assert locate(anchor, FileView(gone), symbols=symbols("src/io.py", gone)).state == "missing"


@pytest.mark.parametrize(
    "appeared, expected",
    [
        ({"lib/io.py": SOURCE}, "lib/io.py"),
        ({"lib/other.py": "x = 1\n", "lib/io.py": SOURCE}, "lib/io.py"),
        ({"lib/other.py": "x = 1\n"}, None),
    ],
)
def test_a_rename_is_followed_by_content(appeared: dict[str, str], expected: str | None) -> None:
    views = {path: FileView(text) for path, text in appeared.items()}
    assert follow(span(9, 11), views) == expected


def test_fingerprint_ignores_white_space_and_blank_lines() -> None:
    assert fingerprint("a  b\n\n  c\n") == fingerprint("a b\r\nc")
    assert fingerprint("a b\nc") != fingerprint("a b\nd")
