"""Notes read as documents in write-time detection, through the real engine (real
SQLite, real Chroma and models where named): claims only, one note's units only across the
change it records, a rejected or superseded record never the newer side, two decision records
only on a change frame, supersession links resolved by link or number (never similarity), and
the targeted lookup of what a change replaces."""

from __future__ import annotations

import pytest

from memls import protocol as p
from memls.conflicts import detector
from memls.engine import Engine


@pytest.fixture(params=["vectors", "lexical"])
def any_engine(request, tmp_path, clock, models):
    vectors = request.param == "vectors"
    with Engine.open(
        tmp_path / "d",
        front="test",
        clock=clock,
        vectors=vectors,
        models=models if vectors else None,
    ) as engine:
        yield engine


def adr(engine, root, name, text, project="alpha"):
    path = root / "docs" / "adr" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return engine.sync_note(
        p.SyncNoteParams(uri=path.as_uri(), text=text, project=project, default_type="decision")
    )


def pairs(engine, project="alpha"):
    found = engine.conflicts(p.ConflictsParams(project=project))
    return [(c.newer.content, c.older.content) for c in found.conflicts]


def record(number, title, status, decision, extra=""):
    return f"# {number}. {title}\n\n## Status\n\n{status}\n\n## Decision\n\n{decision}\n{extra}"


def test_sections_and_claims_are_stored_and_options_are_not_compared(any_engine, tmp_path):
    e = any_engine
    adr(
        e,
        tmp_path,
        "0001-db.md",
        "# 1. Database\n\n## Status\n\nAccepted\n\n## Options considered\n\n"
        "We use MySQL for the orders database.\n\n## Decision\n\n"
        "We use PostgreSQL for the orders database.\n",
    )
    assert e.flush()
    rows = e.db.read(
        "SELECT m.content, u.section, u.claim FROM note_units u "
        "JOIN memories m ON m.id = u.memory_id ORDER BY m.seq"
    )
    assert [tuple(r) for r in rows] == [
        ("Accepted", "status", 0),
        ("We use MySQL for the orders database.", "options", 0),
        ("We use PostgreSQL for the orders database.", "decision", 1),
    ]
    (facts,) = e.db.read("SELECT status, current, number FROM note_files")
    assert tuple(facts) == ("accepted", 1, 1)
    assert pairs(e) == []


def test_one_note_is_compared_with_itself_only_across_its_recorded_change(any_engine, tmp_path):
    e = any_engine
    adr(
        e,
        tmp_path,
        "0001-deploys.md",
        record(1, "Deploy day", "Accepted", "Deploys go out on Tuesdays.")
        + "\n## Update 2024-03-01\n\nDeploys now go out on Thursdays instead of Tuesdays.\n",
    )
    assert e.flush()
    assert pairs(e) == [
        ("Deploys now go out on Thursdays instead of Tuesdays.", "Deploys go out on Tuesdays.")
    ]
    # the same two statements in one note that records no change: not compared
    adr(
        e,
        tmp_path,
        "0001-deploys.md",
        record(1, "Deploy day", "Accepted", "Deploys go out on Tuesdays.")
        + "\n## Consequences\n\nDeploys now go out on Thursdays instead of Tuesdays.\n",
        project="beta",
    )
    assert e.flush()
    assert pairs(e, "beta") == []


@pytest.mark.parametrize("status", ["Accepted", "Rejected", "Superseded by 0009"])
def test_a_rejected_or_superseded_record_is_never_the_newer_side(any_engine, tmp_path, status):
    e = any_engine
    adr(e, tmp_path, "0001-pm.md", record(1, "Packages", "Accepted", "We use yarn for packages."))
    adr(
        e,
        tmp_path,
        "0002-pnpm.md",
        record(2, "pnpm", status, "We switched from yarn to pnpm for packages."),
    )
    assert e.flush()
    expected = [("We switched from yarn to pnpm for packages.", "We use yarn for packages.")]
    assert pairs(e) == (expected if status == "Accepted" else [])
    # a contradiction between two notes never proposes superseding a note's unit
    assert all(
        c.proposal is None for c in e.conflicts(p.ConflictsParams(project="alpha")).conflicts
    )


def test_two_records_contradict_only_through_a_change(any_engine, tmp_path):
    e = any_engine
    adr(
        e,
        tmp_path,
        "0001-pm.md",
        record(1, "Packages", "Accepted", "We use yarn for package management."),
    )
    adr(
        e,
        tmp_path,
        "0002-pm.md",
        record(2, "Packages", "Accepted", "We use pnpm for package management."),
    )
    assert e.flush()
    assert pairs(e) == []  # two records that differ, neither says it changes the other
    # the same two statements as plain memories are a choice change
    e.store(p.StoreParams(text="We use yarn for package management.", project="gamma"))
    e.store(p.StoreParams(text="We use pnpm for package management.", project="gamma"))
    assert e.flush()
    assert pairs(e, "gamma") == [
        ("We use pnpm for package management.", "We use yarn for package management.")
    ]


def test_supersession_is_resolved_by_link_or_number_never_by_similarity(any_engine, tmp_path):
    e = any_engine
    old = adr(
        e,
        tmp_path,
        "0003-kops.md",
        record(3, "kOps", "Superseded by [ADR-7](0007-eks.md)", "We run clusters with kOps."),
    )
    # a near copy of the old record that names no other record: never linked
    adr(e, tmp_path, "0004-kops.md", record(4, "kOps", "Accepted", "We run clusters with kOps!"))
    assert e.conflicts(p.ConflictsParams(project="alpha")).links == []  # 0007 not known yet
    new = adr(e, tmp_path, "0007-eks.md", record(7, "EKS", "Accepted", "We use EKS clusters."))
    adr(e, tmp_path, "0009-names.md", record(9, "Names", "Accepted. Amends 0007.", "Names."))
    links = e.conflicts(p.ConflictsParams(project="alpha")).links
    assert [
        (x.newer_uri.rsplit("/", 1)[1], x.older_uri.rsplit("/", 1)[1], x.relation, x.label)
        for x in links
    ] == [
        ("0007-eks.md", "0003-kops.md", "supersedes", "ADR-7"),
        ("0009-names.md", "0007-eks.md", "amends", "0007"),
    ]
    # memory records carry the supersession: every unit of 0003 is superseded by 0007's first
    first_new = new.added[0]
    for memory_id in old.added:
        got = e.get(p.GetParams(id=memory_id, project="alpha"))
        assert got.superseded_by == [first_new]
    assert e.get(p.GetParams(id=first_new, project="alpha")).supersedes == [old.added[0]]
    # the newer record removed: the link goes with it
    adr(e, tmp_path, "0007-eks.md", "")
    assert [x.relation for x in e.conflicts(p.ConflictsParams(project="alpha")).links] == []
    assert e.get(p.GetParams(id=old.added[0], project="alpha")).superseded_by == []


def test_the_targeted_lookup_finds_the_replaced_statement_beyond_the_nearest(
    tmp_path, clock, monkeypatch
):
    """The statement a change replaces is found by what the change names, even when ten
    closer statements stand between them (on real notes it sat at ranks 11-78). What is tested
    is the lookup of candidates, so the verdict is the signals' alone: without the pair model,
    which reads "the releases" and "the web app pipeline" as two subjects and so drops this
    pair (docs/conflicts.md)."""
    from memls.models import ModelRuntime

    empty = tmp_path / "no-pair-model"
    empty.mkdir()
    fillers = [
        f"The web app pipeline runs its {step} step on every pull request to main"
        for step in (
            "lint",
            "unit test",
            "type check",
            "format",
            "audit",
            "bundle",
            "e2e",
            "coverage",
            "licence",
            "snapshot",
            "smoke",
            "docs",
        )
    ]
    old = "Jenkins builds the releases."
    new = "We replaced Jenkins with GitHub Actions for the web app pipeline on every pull request"

    def run(directory, targeted):
        if not targeted:
            monkeypatch.setattr(detector.Detector, "targeted", lambda *a: [])
        with (
            ModelRuntime(pair_dir=empty) as models,
            Engine.open(directory, front="test", clock=clock, models=models) as e,
        ):
            e.store(p.StoreParams(text=old, project="alpha"))
            for text in fillers:
                e.store(p.StoreParams(text=text, project="alpha"))
            e.store(p.StoreParams(text=new, project="alpha"))
            assert e.flush()
            return [pair for pair in pairs(e) if pair[0] == new]

    assert run(tmp_path / "a", targeted=True) == [(new, old)]
    assert run(tmp_path / "b", targeted=False) == []


YARN = (
    "# Agents\n\n- Use yarn to install dependencies.\n- Tests run with pytest.\n"
    "- We switched from yarn to pnpm: install dependencies with pnpm, never yarn.\n"
)
SWITCH = "We switched from yarn to pnpm: install dependencies with pnpm, never yarn."


def instructions(engine, root, text, project=None, kind=None, name="AGENTS.md"):
    path = root / name
    path.write_text(text)
    return engine.sync_note(
        p.SyncNoteParams(uri=path.as_uri(), text=text, project=project or str(root), kind=kind)
    )


def test_two_lines_of_one_instruction_file_are_compared(any_engine, tmp_path):
    """An AGENTS.md records no change of its own, yet a later line that contradicts an
    earlier one is what its users want flagged: the kind comes from the note's path in the
    project folder (`[notes] instructions`, AGENTS.md by default)."""
    e = any_engine
    instructions(e, tmp_path, YARN)
    assert e.flush()
    assert pairs(e, str(tmp_path)) == [(SWITCH, "Use yarn to install dependencies.")]
    (kind,) = e.db.read("SELECT facts FROM note_files")
    assert '"kind":"instructions"' in kind[0]


@pytest.mark.parametrize(("kind", "found"), [("instructions", 1), ("record", 0), ("", 0)])
def test_the_kind_the_front_sends_wins(any_engine, tmp_path, kind, found):
    """The editor says what its settings make of the note (`SyncNoteParams.kind`); a note of
    another kind keeps the document rules: its own lines only across a recorded change."""
    e = any_engine
    instructions(e, tmp_path, YARN, project="alpha", kind=kind)
    assert e.flush()
    assert len(pairs(e)) == found


def test_neighbouring_instructions_of_one_file_are_not_a_contradiction(any_engine, tmp_path):
    """Lines of one file share their project's words: two commands, a rule and the tool it
    names, a prohibition of something else, two labelled items, what a tool does not do are
    neighbours, not a contradiction."""
    e = any_engine
    text = (
        "# Agents\n\n- Run all tests: `uv run pytest -vxs tests/`\n"
        "- Run CI tests: `uv run pytest -vxs tests/ci`\n"
        "- **script/lint** runs `gofmt` and `golangci-lint`; it must run before committing.\n"
        "- **NEVER** skip `script/lint` before committing Go code changes.\n"
        "- Never create random example files when implementing features.\n"
        "- Update any relevant files in `docs/` and `examples/`.\n"
        "- **Fixtures**: Store in `__fixtures__` subfolders\n"
        "- **Snapshots**: Store in `__snapshots__` subfolders\n"
        "- Always pass `--frozen` so uv doesn't rewrite `uv.lock`.\n"
        "- Pre-commit runs a `uv.lock` consistency check.\n"
    )
    instructions(e, tmp_path, text)
    assert e.flush()
    assert pairs(e, str(tmp_path)) == []


def test_the_config_file_says_which_notes_are_instruction_files(tmp_path, clock):
    """`[notes] instructions` and `records` in config.toml say the kind of the paths they
    name before the agents' conventions do, for a front that does not say the kind."""
    data = tmp_path / "d"
    data.mkdir(mode=0o700)
    (data / "config.toml").write_text(
        '[notes]\ninstructions = ["NOTES.md"]\nrecords = ["AGENTS.md"]\n'
    )
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    with Engine.open(data, front="test", clock=clock, vectors=False) as e:
        instructions(e, a, YARN)  # AGENTS.md: a decision record here
        instructions(e, b, YARN, name="NOTES.md")
        assert e.flush()
        assert pairs(e, str(a)) == []
        assert pairs(e, str(b)) == [(SWITCH, "Use yarn to install dependencies.")]


def test_a_later_line_of_one_instruction_file_that_turns_an_earlier_one_around(
    any_engine, tmp_path
):
    """Without a change word: a preference against what an earlier line states, the same line
    with one thing changed, a forbidden thing allowed where it was forbidden. Each later line
    is flagged against the earlier one it contradicts and nothing else."""
    e = any_engine
    text = (
        "# Agents\n\n- Indent with tabs.\n- Use single quotes for strings.\n"
        "- Do not use emojis in commits, issues or PR communication.\n"
        "- Run `make lint` before committing.\n\n## Later\n\n"
        "- Use spaces, never tabs.\n- Use double quotes for strings.\n"
        "- Emojis are welcome in commit messages and issues.\n"
    )
    instructions(e, tmp_path, text)
    assert e.flush()
    assert sorted(pairs(e, str(tmp_path))) == [
        (
            "Emojis are welcome in commit messages and issues.",
            "Do not use emojis in commits, issues or PR communication.",
        ),
        ("Use double quotes for strings.", "Use single quotes for strings."),
        ("Use spaces, never tabs.", "Indent with tabs."),
    ]
