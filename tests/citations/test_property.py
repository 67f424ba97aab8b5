"""Property: random edits outside the cited lines never make a citation stale."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memls.citations import FileView, anchor_span, locate

_LINE = st.text(alphabet="abcdefgh(){}=: \t", min_size=0, max_size=12)


@st.composite
def edited(draw: st.DrawFn) -> tuple[list[str], int, int, list[str], list[str], list[str]]:
    lines = draw(st.lists(_LINE, min_size=3, max_size=30))
    start = draw(st.integers(1, len(lines)))
    end = draw(st.integers(start, min(len(lines), start + 6)))
    before, cited, after = lines[: start - 1], lines[start - 1 : end], lines[end:]
    return lines, start, end, before, cited, after


@st.composite
def edit(draw: st.DrawFn, part: list[str]) -> list[str]:
    """Insert, delete, replace or re-indent lines of `part`."""
    out = list(part)
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["insert", "delete", "replace", "indent"]))
        if kind == "insert" or not out:
            out.insert(draw(st.integers(0, len(out))), draw(_LINE))
            continue
        i = draw(st.integers(0, len(out) - 1))
        if kind == "delete":
            del out[i]
        elif kind == "replace":
            out[i] = draw(_LINE)
        else:
            out[i] = "    " + out[i]
    return out


@settings(max_examples=300, deadline=None)
@given(data=st.data(), case=edited())
def test_edits_outside_the_cited_lines_never_make_it_stale(data: st.DataObject, case) -> None:
    lines, start, end, before, cited, after = case
    anchor = anchor_span("f.py", FileView("\n".join(lines)), start, end)
    if not anchor.lines:
        return  # a span of blank lines is refused when a memory is stored
    new = data.draw(edit(before)) + [" ".join(c.split()) for c in cited] + data.draw(edit(after))
    located = locate(anchor, FileView("\n".join(new)))
    assert not located.stale, (located, new)
    text = FileView("\n".join(new)).span(located.start_line, located.end_line)
    assert text == list(anchor.lines)
