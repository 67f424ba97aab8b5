"""memls.notes: markdown note files -> units with exact ranges."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memls.notes import (
    MAX_UNIT_CHARS,
    Unit,
    infer_type,
    parse,
    split_lines,
)
from memls.protocol import MEMORY_TYPES
from memls.textnorm import canonical_hash

AGENTS_MD = """\
# AGENTS.md

This repository is a Python service with a TypeScript extension.
Read this file before changing anything.

## Conventions

- Use `ruff` for linting and formatting; line length is 100.
- Tests live in `tests/unit` and run with
  `pytest -q` from the repository root.
- Commit messages:
  - start with a verb in the imperative
  - stay under 72 characters
    on the first line
* [ ] Migrate the CLI to typer 0.30
+ [x] Drop Python 3.10 support

### Testing

1. Run `make test` before pushing.
2) Property tests use hypothesis.

## Gotchas

Never open the Chroma directory from two processes.

```sh
# this is not a heading
- this is not an item
memls doctor
```

<!-- TODO: document the lock file
- not a memory
-->

| command | purpose |
|---------|---------|
| make ci | full CI |
| make test | unit tests |
"""

CLAUDE_MD = """\
---
description: Project memory for Claude
alwaysApply: true
---

# Project notes

## Preferences

- I prefer small pull requests.
- Prefer `pathlib` over `os.path`.

## Constraints

- Must run offline: no network calls in tests.
"""

ADR = """\
# ADR 0007: SQLite is the system of record

## Status

Accepted

## Context

We need one place that is always right. Chroma can be rebuilt,
SQLite cannot.

## Decision

SQLite (WAL) holds every memory; Chroma is a derived copy.
"""


def lines_of(text: str) -> list[str]:
    return text.splitlines()


def by_text(units: list[Unit], start: str) -> Unit:
    found = [u for u in units if u.text.startswith(start)]
    assert len(found) == 1, [u.text for u in units]
    return found[0]


def assert_ranges_exact(text: str, units: list[Unit]) -> None:
    """Every unit's range points at its text in the original: first words on the first line,
    the range ends at the last non-blank character of the last line."""
    lines = lines_of(text)
    for unit in units:
        first = lines[unit.start_line]
        assert first[: unit.start_char].strip() == "", unit
        words = unit.text.split()[0].strip("`")
        assert words in first, (unit, first)
        assert unit.end_char == len(lines[unit.end_line].rstrip())
        assert lines[unit.end_line].strip()


# ---------------------------------------------------------------- AGENTS.md


def test_agents_md_units_and_ranges() -> None:
    units = parse(AGENTS_MD)
    assert [u.text.split()[0] for u in units] == [
        "This",
        "Use",
        "Tests",
        "Commit",
        "Migrate",
        "Drop",
        "Run",
        "Property",
        "Never",
        "```sh",
        "|",
    ]
    assert_ranges_exact(AGENTS_MD, units)
    lines = lines_of(AGENTS_MD)

    intro = units[0]
    assert intro.text == (
        "This repository is a Python service with a TypeScript extension. "
        "Read this file before changing anything."
    )
    assert (intro.start_line, intro.end_line) == (2, 3)
    assert intro.heading == "AGENTS.md"

    ruff = by_text(units, "Use `ruff`")
    assert lines[ruff.start_line] == "- Use `ruff` for linting and formatting; line length is 100."
    assert (ruff.start_line, ruff.start_char, ruff.end_line) == (7, 0, 7)
    assert ruff.end_char == len(lines[7])
    assert ruff.heading == "AGENTS.md > Conventions"
    assert ruff.type == "convention"
    assert ruff.key == canonical_hash(ruff.text)

    tests = by_text(units, "Tests live")
    assert tests.text == (
        "Tests live in `tests/unit` and run with `pytest -q` from the repository root."
    )
    assert (tests.start_line, tests.end_line) == (8, 9)

    commit = by_text(units, "Commit messages")
    assert commit.text == (
        "Commit messages:\n"
        "- start with a verb in the imperative\n"
        "- stay under 72 characters on the first line"
    )
    assert (commit.start_line, commit.end_line) == (10, 13)

    task = by_text(units, "Migrate")
    assert task.text == "Migrate the CLI to typer 0.30"
    assert by_text(units, "Drop").text == "Drop Python 3.10 support"

    run = by_text(units, "Run `make test`")
    assert run.heading == "AGENTS.md > Conventions > Testing"
    assert run.type == "convention"
    assert by_text(units, "Property tests").start_line == 20


def test_fence_after_blank_is_its_own_unit_and_is_never_parsed() -> None:
    units = parse(AGENTS_MD)
    never = by_text(units, "Never open")
    assert never.heading == "AGENTS.md > Gotchas"
    assert never.type == "lesson"
    fence = by_text(units, "```sh")
    assert fence.text == "```sh\n# this is not a heading\n- this is not an item\nmemls doctor\n```"
    assert (fence.start_line, fence.end_line) == (26, 30)
    assert fence.heading == "AGENTS.md > Gotchas"  # the `#` line inside did not change it


def test_comment_block_is_skipped_and_table_is_one_unit() -> None:
    units = parse(AGENTS_MD)
    assert not any("not a memory" in u.text or "TODO" in u.text for u in units)
    table = by_text(units, "| command")
    assert table.text.splitlines() == [
        "| command | purpose |",
        "|---------|---------|",
        "| make ci | full CI |",
        "| make test | unit tests |",
    ]
    assert (table.start_line, table.end_line) == (36, 39)


def test_fence_directly_below_a_paragraph_or_item_belongs_to_it() -> None:
    text = (
        "Deploy with:\n"
        "```\n"
        "make deploy\n"
        "```\n"
        "Then check the dashboard.\n"
        "\n"
        "- Regenerate schemas:\n"
        "  ```sh\n"
        "  make schemas\n"
        "  ```\n"
        "  and commit them.\n"
        "- Next item\n"
    )
    units = parse(text)
    assert [u.text for u in units] == [
        "Deploy with:\n```\nmake deploy\n```",
        "Then check the dashboard.",
        "Regenerate schemas:\n```sh\nmake schemas\n```\nand commit them.",
        "Next item",
    ]
    assert [(u.start_line, u.end_line) for u in units] == [(0, 3), (4, 4), (6, 10), (11, 11)]


def test_unclosed_fence_runs_to_the_end() -> None:
    text = "# H\n\n```python\ndef f():\n    return 1\n\n# still code\n\n"
    (unit,) = parse(text)
    assert unit.text == "```python\ndef f():\n    return 1\n\n# still code"
    assert (unit.start_line, unit.end_line, unit.end_char) == (2, 6, len("# still code"))


def test_tilde_fence_and_longer_closer() -> None:
    text = "~~~~\n~~~\n- inside\n~~~~~\nafter\n"
    units = parse(text)
    assert [u.text for u in units] == ["~~~~\n~~~\n- inside\n~~~~~", "after"]


# ---------------------------------------------------------------- CLAUDE.md, ADR, CRLF


def test_front_matter_is_skipped_and_types_follow_headings() -> None:
    units = parse(CLAUDE_MD)
    assert [u.text for u in units] == [
        "I prefer small pull requests.",
        "Prefer `pathlib` over `os.path`.",
        "Must run offline: no network calls in tests.",
    ]
    assert [u.type for u in units] == ["preference", "preference", "constraint"]
    assert units[0].start_line == 9
    assert units[2].heading == "Project notes > Constraints"
    assert_ranges_exact(CLAUDE_MD, units)


def test_front_matter_needs_a_closing_line() -> None:
    units = parse("---\ntitle: not front matter\n")
    assert [u.text for u in units] == ["title: not front matter"]


def test_adr_sections() -> None:
    units = parse(ADR)
    assert [(u.heading.split(" > ")[-1], u.type) for u in units] == [
        ("Status", "decision"),
        ("Context", "decision"),
        ("Decision", "decision"),
    ]
    context = by_text(units, "We need")
    assert context.text.endswith("Chroma can be rebuilt, SQLite cannot.")
    assert (context.start_line, context.end_line) == (8, 9)
    assert_ranges_exact(ADR, units)


def test_crlf_and_cr_report_the_same_ranges() -> None:
    lf = parse(AGENTS_MD)
    crlf = AGENTS_MD.replace("\n", "\r\n")
    assert parse(crlf) == lf
    assert parse(AGENTS_MD.replace("\n", "\r")) == lf
    assert_ranges_exact(crlf, parse(crlf))
    assert split_lines("a\r\nb\rc\nd") == ["a", "b", "c", "d"]


def test_byte_order_mark_is_a_column_not_content() -> None:
    (unit,) = parse("\ufeff- first item\n")
    assert unit.text == "first item"
    assert unit.start_char == 1


# ---------------------------------------------------------------- edge rules


def test_nested_lists_after_blank_lines_and_lazy_lines() -> None:
    text = (
        "1. Step one\n"
        "\n"
        "   Details for step one.\n"
        "\n"
        "   - sub a\n"
        "     - sub sub\n"
        "2. Step two\n"
        "lazy continuation\n"
        "\n"
        "Paragraph after the list.\n"
    )
    units = parse(text)
    assert [u.text for u in units] == [
        "Step one\n\nDetails for step one.\n\n- sub a\n  - sub sub",
        "Step two lazy continuation",
        "Paragraph after the list.",
    ]
    assert [(u.start_line, u.end_line) for u in units] == [(0, 5), (6, 7), (9, 9)]


def test_indented_list_and_siblings() -> None:
    text = "Intro:\n  - a\n  - b\n- c\n"
    assert [u.text for u in parse(text)] == ["Intro:", "a", "b", "c"]


def test_ordered_item_other_than_one_does_not_interrupt_a_paragraph() -> None:
    assert [u.text for u in parse("We shipped in\n2024. It went well.\n")] == [
        "We shipped in 2024. It went well."
    ]


def test_headings_are_not_units_and_setext_and_closing_hashes() -> None:
    text = "# Top #\n\nOverview\n--------\n\ntext under overview\n\n***\n\n## Style ##\nbody\n"
    units = parse(text)
    assert [(u.text, u.heading) for u in units] == [
        ("text under overview", "Top > Overview"),
        ("body", "Top > Style"),
    ]
    assert units[1].type == "convention"


def test_heading_levels_pop() -> None:
    text = "# A\n## B\n### C\nx\n## D\ny\n"
    assert [u.heading for u in parse(text)] == ["A > B > C", "A > D"]
    assert parse("before any heading\n")[0].heading == ""


def test_inline_comments_removed_but_not_in_code() -> None:
    text = "- Use pnpm <!-- since March --> for installs\n- Write `<!-- x -->` literally\n"
    assert [u.text for u in parse(text)] == [
        "Use pnpm for installs",
        "Write `<!-- x -->` literally",
    ]
    assert parse("<!-- only a comment -->\n\n-   <!-- empty -->\n") == []


def test_hard_breaks_and_quotes_keep_lines() -> None:
    assert parse("one  \ntwo\\\nthree\nfour\n")[0].text == "one\ntwo\\\nthree four"
    quote = parse("para\n> quoted\n> more\n")
    assert [u.text for u in quote] == ["para", "> quoted\n> more"]


def test_blank_and_markup_only_units_are_dropped() -> None:
    assert parse("") == []
    assert parse("\n \n\t\n") == []
    assert parse("- \n- [ ]\n\n```\n```\n") == []


def test_duplicates_in_one_file_are_kept_once() -> None:
    text = "- Use ruff.\n- Something else\n- **use RUFF.**\n"
    units = parse(text)
    assert [u.text for u in units] == ["Use ruff.", "Something else"]
    assert units[0].start_line == 0


def test_long_units_are_cut_with_a_clear_rule() -> None:
    word = "lorem "
    text = "- " + word * 3000 + "\n- short\n"
    long, short = parse(text)
    assert long.truncated and not short.truncated
    assert len(long.text) <= MAX_UNIT_CHARS
    assert long.text.endswith("lorem…")  # cut at a word boundary
    first_line = text.splitlines()[0]
    assert (long.start_line, long.end_line, long.end_char) == (0, 0, len(first_line.rstrip()))
    assert long.key == canonical_hash(long.text)
    hard = parse("x" * (MAX_UNIT_CHARS * 2))[0]
    assert len(hard.text) == MAX_UNIT_CHARS and hard.text.endswith("x…")


def test_tabs_indent_nested_items() -> None:
    assert [u.text for u in parse("- parent\n\t- child\n- next\n")] == [
        "parent\n  - child",
        "next",
    ]  # a tab is 4 columns; 2 are the parent's content indent


def test_type_inference_rules() -> None:
    assert infer_type("Gotcha: the cache is per process", ["Conventions"]) == "lesson"
    assert infer_type("**Decision:** use SQLite") == "decision"
    assert infer_type("Never push to main") == "constraint"
    assert infer_type("Never push to main", ["Team conventions"]) == "convention"
    assert infer_type("We prefer tabs") == "preference"
    assert infer_type("Always squash") == "convention"
    assert infer_type("plain", ["Architecture Decision Records", "Context"]) == "decision"
    assert infer_type("plain", ["Lessons learned"]) == "lesson"
    assert infer_type("plain", ["Overview"]) == "note"
    assert infer_type("plain", ["Overview"], default="decision") == "decision"
    units = parse(AGENTS_MD + CLAUDE_MD + ADR)
    assert {u.type for u in units} <= set(MEMORY_TYPES)
    assert parse("plain text", default_type="convention")[0].type == "convention"
    with pytest.raises(ValueError):
        parse("x", default_type="bogus")  # type: ignore[arg-type]


# ---------------------------------------------------------------- properties

_MARKDOWNISH = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "",
                " ",
                "# H",
                "## Sub",
                "- item",
                "  - nested",
                "* [ ] task",
                "1. one",
                "2) two",
                "```",
                "~~~",
                "```py",
                "<!--",
                "-->",
                "<!-- c --> x",
                "---",
                "===",
                "| a | b |",
                "|---|---|",
                "> quote",
                "\t- tab",
                "    code",
                "text",
                "more text  ",
                "back\\",
                "...",
                "\ufeff- bom",
            ]
        ),
        st.text(max_size=30),
    ),
    max_size=40,
)


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = draw(_MARKDOWNISH)
    eols = draw(
        st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=len(lines), max_size=len(lines))
    )
    return "".join(line + eol for line, eol in zip(lines, eols))


@settings(max_examples=400, deadline=None)
@given(st.one_of(documents(), st.text()))
def test_parse_properties(text: str) -> None:
    units = parse(text)
    lines = split_lines(text)
    previous_end = -1
    for unit in units:
        assert 0 <= unit.start_line <= unit.end_line < len(lines)
        assert unit.start_line > previous_end  # in order, never overlapping
        previous_end = unit.end_line
        assert 0 <= unit.start_char <= len(lines[unit.start_line])
        assert 0 < unit.end_char <= len(lines[unit.end_line])
        if unit.start_line == unit.end_line:
            assert unit.start_char < unit.end_char
        assert unit.text.strip() and len(unit.text) <= MAX_UNIT_CHARS
        assert unit.type in MEMORY_TYPES
        assert unit.key == canonical_hash(unit.text)
    assert len({u.key for u in units}) == len(units)
    again = parse(text)
    assert [(u.key, u.span) for u in again] == [(u.key, u.span) for u in units]


def test_a_lead_in_to_a_code_example_is_no_claim_but_one_to_a_list_is():
    text = (
        "# Config\n\n## Decision\n\nAs a trivial example, instead of writing the verbose data:"
        "\n\n```clojure\n{:a 1}\n```\n\nWe name clusters as follows:\n\n- live-1 for users\n"
    )
    claims = {u.text: u.claim for u in parse(text)}
    assert claims["As a trivial example, instead of writing the verbose data:"] is False
    assert claims["We name clusters as follows:"] is True
    assert claims["live-1 for users"] is True
